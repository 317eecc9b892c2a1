// nvscope-target: nvscope
#pragma once

/// \file analyze/intervals.hpp
/// Interval arithmetic over [begin, end) stretches of GPU or host time: merge, clip, union,
/// intersection and the gaps between, each linear in its input once sorted.
///
/// \code
///   std::vector<nvscope::detail::interval> v{{0, 10}, {5, 20}, {30, 40}};
///   nvscope::detail::merge_intervals(v);                  // {0, 20}, {30, 40}
///   auto busy = nvscope::detail::covered(v, 0, 100);      // 30
/// \endcode

#include <nvscope/analyze/detail/scratch.hpp>

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace nvscope {
inline namespace v1 {
namespace detail {

using interval = std::pair<std::uint64_t, std::uint64_t>; // [first, second)
using interval_list = scratch_vector<interval>;
using value_list = scratch_vector<std::uint64_t>;

// A record with an end, not before its start.
inline bool valid_interval(std::uint64_t start, std::uint64_t end) noexcept { return end != 0 && end >= start; }

// Sorts and merges in place; empty intervals are dropped. One pass while the list is in time
// order (the usual case); from the first interval out of order, a sort of what is left (the
// merged part and the rest: the union is the same) and a second pass.
inline void merge_intervals(interval_list& v) {
  std::size_t out = 0, i = 0;
  interval last{0, 0}; // the last non-empty interval read
  for (; i < v.size(); ++i) {
    const interval x = v[i];
    if (x.second <= x.first) continue;
    if (x < last) break;
    last = x;
    if (out > 0 && x.first <= v[out - 1].second) {
      if (x.second > v[out - 1].second) v[out - 1].second = x.second;
    } else {
      v[out++] = x;
    }
  }
  if (i == v.size()) {
    v.resize(out);
    return;
  }
  v.erase(v.begin() + static_cast<std::ptrdiff_t>(out), v.begin() + static_cast<std::ptrdiff_t>(i));
  v.erase(std::remove_if(v.begin(), v.end(), [](const interval& x) { return x.second <= x.first; }), v.end());
  std::sort(v.begin(), v.end());
  out = 0;
  for (std::size_t j = 0; j < v.size(); ++j) {
    if (out > 0 && v[j].first <= v[out - 1].second) {
      if (v[j].second > v[out - 1].second) v[out - 1].second = v[j].second;
    } else {
      v[out++] = v[j];
    }
  }
  v.resize(out);
}

// The union of three merged lists, merged: one three-way pass, no intermediate list.
inline interval_list union_of(const interval_list& a, const interval_list& b, const interval_list& c) {
  interval_list out;
  out.reserve(a.size() + b.size() + c.size());
  std::size_t i = 0, j = 0, k = 0;
  constexpr interval end_mark{~0ull, ~0ull};
  for (;;) {
    const auto& x = i < a.size() ? a[i] : end_mark;
    const auto& y = j < b.size() ? b[j] : end_mark;
    const auto& z = k < c.size() ? c[k] : end_mark;
    const interval* next = &x;
    if (y < *next) next = &y;
    if (z < *next) next = &z;
    if (next->first == ~0ull) break;
    (next == &x ? i : next == &y ? j : k)++;
    if (!out.empty() && next->first <= out.back().second) out.back().second = std::max(out.back().second, next->second);
    else out.push_back(*next);
  }
  return out;
}

// Total length of merged intervals clipped to [lo, hi).
inline std::uint64_t covered(const interval_list& merged, std::uint64_t lo, std::uint64_t hi) noexcept {
  std::uint64_t sum = 0;
  for (const auto& i : merged) {
    const auto a = i.first > lo ? i.first : lo;
    const auto b = i.second < hi ? i.second : hi;
    if (b > a) sum += b - a;
  }
  return sum;
}

// Length of the intersection of two merged interval lists.
inline std::uint64_t intersection(const interval_list& a, const interval_list& b) noexcept {
  std::uint64_t sum = 0;
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const auto lo = std::max(a[i].first, b[j].first);
    const auto hi = std::min(a[i].second, b[j].second);
    if (hi > lo) sum += hi - lo;
    if (a[i].second < b[j].second) ++i;
    else ++j;
  }
  return sum;
}

// Appends the idle stretches between consecutive merged intervals.
inline void append_gaps(const interval_list& merged, value_list& gaps) {
  if (merged.size() < 2) return;
  const auto at = gaps.size();
  gaps.resize(at + merged.size() - 1);
  for (std::size_t i = 1; i < merged.size(); ++i) gaps[at + i - 1] = merged[i].first - merged[i - 1].second;
}

} // namespace detail
} // namespace v1
} // namespace nvscope

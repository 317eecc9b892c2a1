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

#include <nvscope/analyze/detail/inlining.hpp>
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
using value_list = scratch_column<std::uint64_t>; // grown unset: union_walk sizes it to its room while it appends

// A record with an end, not before its start.
inline bool valid_interval(std::uint64_t start, std::uint64_t end) noexcept { return end != 0 && end >= start; }

// The smallest and largest value of a list made piece by piece ({~0, 0} while empty), so that
// its median needs no pass for them.
inline void widen(interval& extremes, const interval& by) noexcept {
  extremes.first = by.first < extremes.first ? by.first : extremes.first;
  extremes.second = by.second > extremes.second ? by.second : extremes.second;
}

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

// Appends `x` to the merged list `out`, joining it to the last interval where they touch.
inline void append_merged(interval_list& out, const interval& x) {
  if (!out.empty() && x.first <= out.back().second) out.back().second = std::max(out.back().second, x.second);
  else out.push_back(x);
}

// The union of two merged lists, merged. The union of sets is one list of merged intervals
// whatever order equal starts come in, so starts alone are compared; once one list is done,
// the rest of the other (merged already) joins the last interval while it reaches into it,
// then is copied as it is.
inline interval_list union_of(const interval_list& a, const interval_list& b) {
  interval_list out;
  out.reserve(a.size() + b.size());
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) append_merged(out, a[i].first <= b[j].first ? a[i++] : b[j++]);
  const interval_list& rest = i < a.size() ? a : b;
  std::size_t k = i < a.size() ? i : j;
  while (k < rest.size() && !out.empty() && rest[k].first <= out.back().second) append_merged(out, rest[k++]);
  out.insert(out.end(), rest.begin() + static_cast<std::ptrdiff_t>(k), rest.end());
  return out;
}

// The union of three merged lists, merged: the two shorter first (copies and memsets beside
// millions of kernels: the long list is read once, in a two-way pass).
inline interval_list union_of(const interval_list& a, const interval_list& b, const interval_list& c) {
  const interval_list* by_size[3] = {&a, &b, &c};
  std::sort(std::begin(by_size), std::end(by_size), [](const interval_list* x, const interval_list* y) { return x->size() < y->size(); });
  if (by_size[0]->empty()) return union_of(*by_size[1], *by_size[2]);
  return union_of(union_of(*by_size[0], *by_size[1]), *by_size[2]);
}

// The union of merged intervals fed in start order, walked, not written: its length clipped to
// [lo, hi), and the idle stretches between its runs appended to `gaps` through a place held
// here, not the list's push_back. While the walk runs, the list is sized to its room (unset:
// nothing written); finish() cuts it to what was appended (a caller that drops a walk unfinished
// cuts it itself). The room is sized by what this walk appends (first_room, then twice its own
// gaps), not by what the list has reserved: a row's list is reserved for all its instances, and
// sizing it whole at each instance's walk would make the walks quadratic in a name's instances
// where the sizing is a loop (unoptimized builds).
class union_walk {
 public:
  static constexpr std::size_t first_room = 1024;
  union_walk(std::uint64_t lo, std::uint64_t hi, value_list& gaps) : lo_(lo), hi_(hi), gaps_(&gaps), start_(gaps.size()) {
    gaps.resize(start_ + std::min(gaps.capacity() - start_, first_room)); // within what is reserved: no move
    out_ = gaps.data() + start_;
    room_end_ = gaps.data() + gaps.size();
  }
  NVSCOPE_DETAIL_INLINE void add(const interval& x) {
    if (any_ && x.first <= run_.second) {
      if (x.second > run_.second) run_.second = x.second;
      return;
    }
    if (any_) {
      close();
      const auto gap = x.first - run_.second;
      if (out_ == room_end_) grow();
      *out_++ = gap;
    }
    run_ = x;
    any_ = true;
  }
  std::uint64_t finish() { // the covered length; add nothing after
    if (any_) close();
    any_ = false;
    gaps_->resize(static_cast<std::size_t>(out_ - gaps_->data()));
    return sum_;
  }

 private:
  void close() noexcept {
    const auto from = run_.first > lo_ ? run_.first : lo_, to = run_.second < hi_ ? run_.second : hi_;
    if (to > from) sum_ += to - from;
  }
  // Room for twice this walk's gaps (first_room at least), what was appended kept (cut to it
  // first: a move reads nothing unwritten).
  NVSCOPE_DETAIL_COLD void grow() {
    const auto used = static_cast<std::size_t>(out_ - gaps_->data());
    gaps_->resize(used);
    gaps_->resize(used + std::max(2 * (used - start_), first_room));
    out_ = gaps_->data() + used;
    room_end_ = gaps_->data() + gaps_->size();
  }
  std::uint64_t lo_, hi_, sum_ = 0;
  value_list* gaps_; // a pointer, not a reference: a walk may be copied to a loop's locals and back
  std::size_t start_;                // the list's size when the walk began: its own gaps follow
  std::uint64_t *out_, *room_end_; // the next gap's place in *gaps_, the end of its room
  interval run_{0, 0};
  bool any_ = false;
};

// The union of two merged lists walked (union_walk): what covered(union_of(a, b), lo, hi) and
// append_gaps(union_of(a, b), gaps) give, without a list as long as both.
inline std::uint64_t covered_union(const interval_list& a, const interval_list& b, std::uint64_t lo, std::uint64_t hi,
                                   value_list& gaps) {
  gaps.reserve(gaps.size() + a.size() + b.size()); // no more gaps than intervals: one array, not a doubling series
  union_walk walk(lo, hi, gaps);
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) walk.add(a[i].first <= b[j].first ? a[i++] : b[j++]);
  for (; i < a.size(); ++i) walk.add(a[i]);
  for (; j < b.size(); ++j) walk.add(b[j]);
  return walk.finish();
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

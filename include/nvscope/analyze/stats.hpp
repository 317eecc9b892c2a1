// nvscope-target: nvscope
#pragma once

/// \file analyze/stats.hpp
/// `duration_stats` (the columns every nsys summary prints: total, count, avg, median, min,
/// max, stddev) and the interval arithmetic the analysis passes share.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

namespace nvscope {
inline namespace v1 {

/// Count, total, mean, median, extremes and sample standard deviation of a set of values
/// (nanoseconds or bytes), defined as `nsys stats` defines them: the median of an even count
/// is the mean of the two middle values; the standard deviation divides by n - 1 and is 0 for
/// a single value.
struct duration_stats {
  std::uint64_t count = 0;
  std::uint64_t total = 0;
  std::uint64_t min = 0;
  std::uint64_t max = 0;
  double average = 0.0;
  double median = 0.0;
  double stddev = 0.0;
};

namespace detail {

// Reorders [first, last). Linear time: nth_element for the median, no allocation.
inline duration_stats stats_of(std::uint64_t* first, std::uint64_t* last) noexcept {
  duration_stats s;
  const auto n = static_cast<std::size_t>(last - first);
  if (n == 0) return s;
  s.count = n;
  std::uint64_t lo = first[0], hi = first[0], sum = 0;
  for (auto* p = first; p != last; ++p) {
    sum += *p;
    lo = *p < lo ? *p : lo;
    hi = *p > hi ? *p : hi;
  }
  s.total = sum;
  s.min = lo;
  s.max = hi;
  s.average = static_cast<double>(sum) / static_cast<double>(n);
  if (n > 1) {
    double m2 = 0.0;
    for (auto* p = first; p != last; ++p) {
      const double d = static_cast<double>(*p) - s.average;
      m2 += d * d;
    }
    s.stddev = std::sqrt(m2 / static_cast<double>(n - 1));
  }
  auto* mid = first + n / 2;
  std::nth_element(first, mid, last);
  if (n % 2 == 1) {
    s.median = static_cast<double>(*mid);
  } else {
    const std::uint64_t below = *std::max_element(first, mid);
    s.median = (static_cast<double>(below) + static_cast<double>(*mid)) / 2.0;
  }
  return s;
}

inline duration_stats stats_of(std::vector<std::uint64_t>& v) noexcept {
  return stats_of(v.data(), v.data() + v.size());
}

// p-quantile (0 < p <= 1) by nearest rank, reordering v (linear time).
inline double nearest_rank_select(std::vector<std::uint64_t>& v, double p) noexcept {
  if (v.empty()) return 0.0;
  auto rank = static_cast<std::size_t>(std::ceil(p * static_cast<double>(v.size())));
  if (rank < 1) rank = 1;
  if (rank > v.size()) rank = v.size();
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(rank - 1), v.end());
  return static_cast<double>(v[rank - 1]);
}

// p-quantile (0 < p <= 1) by nearest rank on a sorted vector: the smallest value with at
// least p of the values at or below it.
inline double nearest_rank(const std::vector<std::uint64_t>& sorted, double p) noexcept {
  if (sorted.empty()) return 0.0;
  auto rank = static_cast<std::size_t>(std::ceil(p * static_cast<double>(sorted.size())));
  if (rank < 1) rank = 1;
  if (rank > sorted.size()) rank = sorted.size();
  return static_cast<double>(sorted[rank - 1]);
}

using interval = std::pair<std::uint64_t, std::uint64_t>; // [first, second)

// Sorts and merges in place; empty intervals are dropped.
inline void merge_intervals(std::vector<interval>& v) {
  v.erase(std::remove_if(v.begin(), v.end(), [](const interval& i) { return i.second <= i.first; }), v.end());
  if (!std::is_sorted(v.begin(), v.end())) std::sort(v.begin(), v.end()); // usually already in time order
  std::size_t out = 0;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (out > 0 && v[i].first <= v[out - 1].second) {
      if (v[i].second > v[out - 1].second) v[out - 1].second = v[i].second;
    } else {
      v[out++] = v[i];
    }
  }
  v.resize(out);
}

// Total length of merged intervals clipped to [lo, hi).
inline std::uint64_t covered(const std::vector<interval>& merged, std::uint64_t lo, std::uint64_t hi) noexcept {
  std::uint64_t sum = 0;
  for (const auto& i : merged) {
    const auto a = i.first > lo ? i.first : lo;
    const auto b = i.second < hi ? i.second : hi;
    if (b > a) sum += b - a;
  }
  return sum;
}

// Length of the intersection of two merged interval lists.
inline std::uint64_t intersection(const std::vector<interval>& a, const std::vector<interval>& b) noexcept {
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

} // namespace detail
} // namespace v1
} // namespace nvscope

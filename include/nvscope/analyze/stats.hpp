// nvscope-target: nvscope
#pragma once

/// \file analyze/stats.hpp
/// `duration_stats`: the columns every nsys summary prints (total, count, avg, median, min,
/// max, stddev), computed as `nsys stats` computes them, plain or with weights.
///
/// \code
///   std::vector<std::uint64_t> ns{300, 100, 200};
///   nvscope::duration_stats s = nvscope::detail::stats_of(ns);   // s.median == 200.0
/// \endcode

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
/// \code
///   nvscope::duration_stats s = report.kernels[0].time;   // s.count is "Instances"
/// \endcode
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

inline void moments_of(const std::uint64_t* first, const std::uint64_t* last, duration_stats& s) noexcept {
  const auto n = static_cast<std::size_t>(last - first);
  std::uint64_t lo = first[0], hi = first[0], sum = 0;
  for (auto* p = first; p != last; ++p) {
    sum += *p;
    lo = *p < lo ? *p : lo;
    hi = *p > hi ? *p : hi;
  }
  s.count = n;
  s.total = sum;
  s.min = lo;
  s.max = hi;
  s.average = static_cast<double>(sum) / static_cast<double>(n);
  if (n < 2) return;
  double m2 = 0.0;
  for (auto* p = first; p != last; ++p) {
    const double d = static_cast<double>(*p) - s.average;
    m2 += d * d;
  }
  s.stddev = std::sqrt(m2 / static_cast<double>(n - 1));
}

// Reorders [first, last). Linear time: nth_element for the median, no allocation.
inline duration_stats stats_of(std::uint64_t* first, std::uint64_t* last) noexcept {
  duration_stats s;
  const auto n = static_cast<std::size_t>(last - first);
  if (n == 0) return s;
  moments_of(first, last, s);
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

template <class Alloc>
duration_stats stats_of(std::vector<std::uint64_t, Alloc>& v) noexcept {
  return stats_of(v.data(), v.data() + v.size());
}

/// A value counted `weight` times (a kernel under two nested ranges of one name counts twice
/// in that name's figures, as nsys counts it).
struct weighted_value {
  std::uint64_t value = 0;
  std::uint32_t weight = 1;
};

// Value at 0-based position `rank` of the multiset, on entries sorted by value.
inline std::uint64_t weighted_at(const weighted_value* sorted, std::size_t n, std::uint64_t rank) noexcept {
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < n; ++i) {
    seen += sorted[i].weight;
    if (rank < seen) return sorted[i].value;
  }
  return n ? sorted[n - 1].value : 0;
}

// Stats of the multiset; `count` is the number of distinct entries (nsys's "Kern Inst"),
// every other figure counts each entry `weight` times. Sorts [first, last).
inline duration_stats weighted_stats_of(weighted_value* first, weighted_value* last) {
  duration_stats s;
  const auto n = static_cast<std::size_t>(last - first);
  if (n == 0) return s;
  std::sort(first, last, [](const weighted_value& a, const weighted_value& b) { return a.value < b.value; });
  std::uint64_t w = 0, sum = 0;
  for (auto* p = first; p != last; ++p) { w += p->weight; sum += p->value * p->weight; }
  s.count = n;
  s.total = sum;
  s.min = first->value;
  s.max = (last - 1)->value;
  s.average = static_cast<double>(sum) / static_cast<double>(w);
  double m2 = 0.0;
  for (auto* p = first; p != last; ++p) {
    const double d = static_cast<double>(p->value) - s.average;
    m2 += d * d * p->weight;
  }
  s.stddev = w > 1 ? std::sqrt(m2 / static_cast<double>(w - 1)) : 0.0;
  const auto hi = weighted_at(first, n, w / 2);
  s.median = w % 2 ? static_cast<double>(hi) : (static_cast<double>(weighted_at(first, n, w / 2 - 1)) + static_cast<double>(hi)) / 2.0;
  return s;
}

// p-quantile (0 < p <= 1) by nearest rank, reordering v (linear time).
template <class Alloc>
double nearest_rank_select(std::vector<std::uint64_t, Alloc>& v, double p) noexcept {
  if (v.empty()) return 0.0;
  auto rank = static_cast<std::size_t>(std::ceil(p * static_cast<double>(v.size())));
  if (rank < 1) rank = 1;
  if (rank > v.size()) rank = v.size();
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(rank - 1), v.end());
  return static_cast<double>(v[rank - 1]);
}

} // namespace detail
} // namespace v1
} // namespace nvscope

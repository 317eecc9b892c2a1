// nvscope-target: nvscope
#pragma once

/// \file analyze/stats.hpp
/// `duration_stats`: the columns every nsys summary prints (total, count, avg, median, min,
/// max, stddev), computed as `nsys stats` computes them. Three entry points: `stats_of` (values
/// to every column), `quantiles_of` (values to the median and chosen quantiles) and
/// `weighted_stats_of` (values counted with weights); the selection behind them is private
/// (detail/selection.hpp).
///
/// \code
///   std::vector<std::uint64_t> ns{300, 100, 200};
///   nvscope::duration_stats s = nvscope::detail::stats_of(ns.data(), ns.data() + ns.size());   // s.median == 200.0
/// \endcode

#include <nvscope/analyze/detail/selection.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <type_traits>
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

// Every figure of [first, last) (any order; read, never moved): count, total,
// extremes, mean, standard deviation and median. The squared deviations are summed during the
// median's first read of the values (the same sum, in the same order, as a pass of their own).
inline duration_stats stats_of(const std::uint64_t* first, const std::uint64_t* last) noexcept {
  const each_value each{first, last};
  const value_moments v = moments_by(each);
  duration_stats s;
  s.count = v.count, s.total = v.total, s.min = v.min, s.max = v.max, s.average = v.average;
  if (s.count == 0) return s;
  const std::uint64_t n = s.count, lo = s.min, hi = s.max;
  const double mean = s.average;
  double m2 = 0.0;
  bool summed = false;
  const deviations_on_first_read<each_value> each_and_deviations{each, mean, m2, summed};
  s.median = median_of(each_and_deviations, n, lo, hi);
  if (n < 2) return s;
  if (!summed) each_and_deviations([](std::uint64_t) {}); // the median needed no read (every value equal)
  s.stddev = std::sqrt(m2 / static_cast<double>(n - 1));
  return s;
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

// The 0-based place of the p-quantile by nearest rank among n sorted values (the smallest value
// with at least p of the values at or below it).
inline std::size_t quantile_place(std::size_t n, double p) noexcept {
  const auto rank = static_cast<std::size_t>(std::ceil(p * static_cast<double>(n)));
  return std::min(std::max<std::size_t>(rank, 1), n) - 1;
}

// The median (the mean of the two middle values for an even count, as nsys computes it), the
// nearest-rank quantiles at `ps` (at most two; quantile_place) and the maximum of [first, last)
// (any unsigned values), as a full sort would give them, read in place: a pass for the
// extremes, then the values at those ranks selected together (values_at_ranks).
struct column_figures {
  double median = 0.0;
  double quantiles[2] = {0.0, 0.0};
  std::uint64_t max = 0;
};

template <class T>
column_figures quantiles_of(const T* first, const T* last, std::initializer_list<double> ps) noexcept {
  column_figures f;
  const auto n = static_cast<std::uint64_t>(last - first);
  if (n == 0) return f;
  const auto each = [first, last](auto&& g) {
    for (const T* p = first; p != last; ++p) g(static_cast<std::uint64_t>(*p));
  };
  const auto [lo, hi] = extremes_of(each);
  std::uint64_t ranks[4] = {(n - 1) / 2, n / 2}, at[4] = {};
  std::size_t m = 2;
  for (const double p : ps)
    if (m < 4) ranks[m++] = quantile_place(static_cast<std::size_t>(n), p);
  if constexpr (std::is_same_v<T, std::uint64_t>) values_at_ranks(each_value{first, last}, n, ranks, m, lo, hi, at);
  else values_at_ranks(each, n, ranks, m, lo, hi, at);
  f.median = n % 2 ? static_cast<double>(at[0]) : (static_cast<double>(at[0]) + static_cast<double>(at[1])) / 2.0;
  for (std::size_t i = 2; i < m; ++i) f.quantiles[i - 2] = static_cast<double>(at[i]);
  f.max = hi;
  return f;
}

} // namespace detail
} // namespace v1
} // namespace nvscope

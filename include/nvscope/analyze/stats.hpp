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
#include <memory>
#include <new>
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

// Calls f(v) for each value of [first, last), in order: the value source of `ranks_of` and
// `moments_of` over one array (a caller may pass any callable that does the same over values it
// computes or over several arrays, to take statistics without copying them into one).
struct each_value {
  const std::uint64_t* first;
  const std::uint64_t* last;
  template <class F>
  void operator()(F&& f) const {
    for (auto* p = first; p != last; ++p) f(*p);
  }
};

// The values at ranks k and k + 1 (`next`) or k alone of the values `each` yields within
// [lo, lo + range], when there are at most `most` of them: selected from a copy on the stack.
template <std::size_t most, class Each>
std::pair<std::uint64_t, std::uint64_t> ranks_in_copy(const Each& each, std::uint64_t k, bool next, std::uint64_t lo,
                                                     std::uint64_t range) noexcept {
  std::uint64_t copy[most];
  std::uint32_t m = 0; // not a std::uint64_t: a store to `copy` cannot change it (nor lo, range: copies)
  each([&copy, &m, lo, range](std::uint64_t v) {
    if (v - lo <= range && m < most) copy[m++] = v; // at most `most` by the caller's count; never past the copy
  });
  if (m == 0) return {lo, lo}; // a caller's count that was wrong: no value to select
  if (k >= m) k = m - 1;
  std::nth_element(copy, copy + k, copy + m);
  return {copy[k], next && k + 1 < m ? *std::min_element(copy + k + 1, copy + m) : copy[k]};
}

// The values at 0-based ranks `k` and, when `next`, `k + 1` (else the first again) of the n
// values `each` yields, all within [lo, hi]. Reads the values, never moves them: histograms of
// 1,024 buckets narrow the range, a level per 10 bits of it, until a bucket holds the ranks
// alone or few enough values to select from a copy on the stack. A level re-reads the values
// where its bucket holds many of them or the level after it is the last; else (once: `copies`)
// it reads a copy of its bucket's (usually n / 1,000 values; on no memory for it, the values
// again). Linear: at 2 M values, 2-3 passes over them. Stack: 40 KB, twice at most.
template <class Each>
std::pair<std::uint64_t, std::uint64_t> ranks_of(const Each& each, std::uint64_t n, std::uint64_t k, bool next, std::uint64_t lo,
                                                std::uint64_t hi, bool copies = true) noexcept {
  constexpr int bucket_bits = 10, ways = 4; // 4 histograms in turn: a run of equal values is no chain of increments
  constexpr std::size_t bucket_count = std::size_t{1} << bucket_bits;
  std::uint64_t counts[ways][bucket_count];
  std::uint64_t* const count = counts[0];
  for (;;) { // invariant: the n values within [lo, hi] hold the ranks sought, counted among them
    if (lo == hi) return {lo, lo};
    const std::uint64_t range = hi - lo;
    if (n <= bucket_count) return ranks_in_copy<bucket_count>(each, k, next, lo, range);
    int bits = 0;
    while (bits < 64 && (range >> bits) != 0) ++bits;
    const int shift = bits > bucket_bits ? bits - bucket_bits : 0;
    const std::size_t buckets = static_cast<std::size_t>(range >> shift) + 1;
    for (auto& c : counts) std::fill(c, c + buckets, 0);
    std::uint32_t turn = 0; // as in ranks_in_copy: the loop's own state is no std::uint64_t it stores to
    each([&counts, &turn, lo, range, shift](std::uint64_t v) {
      if (v - lo <= range) ++counts[turn++ % ways][(v - lo) >> shift];
    });
    for (std::size_t i = 0; i < buckets; ++i) count[i] += counts[1][i] + counts[2][i] + counts[3][i];
    std::size_t b = 0;
    std::uint64_t below = 0;
    while (below + count[b] <= k) below += count[b++];
    k -= below;
    const std::uint64_t bottom = lo + (static_cast<std::uint64_t>(b) << shift);
    const std::uint64_t width = shift ? (std::uint64_t{1} << shift) - 1 : 0;
    const std::uint64_t top = hi - bottom <= width ? hi : bottom + width; // bucket b's values: [bottom, top]
    if (!next || k + 1 < count[b]) { // every rank sought in bucket b
      if (copies && count[b] > bucket_count && count[b] <= n / 8 && top - bottom >= bucket_count) {
        const std::unique_ptr<std::uint64_t[]> copy(new (std::nothrow) std::uint64_t[count[b]]);
        if (copy) { // else (no memory for it) the next level reads the values again
          std::uint64_t* out = copy.get();
          each([&out, bottom, span = top - bottom](std::uint64_t v) {
            if (v - bottom <= span) *out++ = v;
          });
          return ranks_of(each_value{copy.get(), out}, count[b], k, next, bottom, top, false);
        }
      }
      n = count[b];
      lo = bottom;
      hi = top;
      continue;
    }
    std::size_t c = b + 1; // rank k is bucket b's largest, k + 1 the smallest of the next bucket that has values
    while (count[c] == 0) ++c;
    const std::uint64_t c_bottom = lo + (static_cast<std::uint64_t>(c) << shift);
    if (shift == 0) return {bottom, c_bottom};
    std::uint64_t largest = bottom, smallest = hi;
    each([&largest, &smallest, bottom, span = top - bottom, c_bottom, c_span = hi - c_bottom](std::uint64_t v) {
      if (v - bottom <= span && v > largest) largest = v;
      if (v - c_bottom <= c_span && v < smallest) smallest = v;
    });
    return {largest, smallest};
  }
}

// The median of n values within [lo, hi] (the mean of the two middle ones for an even count).
template <class Each>
double median_of(const Each& each, std::uint64_t n, std::uint64_t lo, std::uint64_t hi) noexcept {
  if (n == 0) return 0.0;
  const auto [a, b] = ranks_of(each, n, (n - 1) / 2, n % 2 == 0, lo, hi);
  return n % 2 ? static_cast<double>(a) : (static_cast<double>(a) + static_cast<double>(b)) / 2.0;
}

// Count, total, extremes, mean and standard deviation of the values `each` yields, in order.
template <class Each>
void moments_of(const Each& each, duration_stats& s) noexcept {
  std::uint64_t n = 0, lo = ~std::uint64_t{0}, hi = 0, sum = 0;
  each([&](std::uint64_t v) {
    ++n;
    sum += v;
    lo = v < lo ? v : lo;
    hi = v > hi ? v : hi;
  });
  if (n == 0) return;
  s.count = n;
  s.total = sum;
  s.min = lo;
  s.max = hi;
  s.average = static_cast<double>(sum) / static_cast<double>(n);
  if (n < 2) return;
  double m2 = 0.0;
  const double mean = s.average;
  each([&](std::uint64_t v) {
    const double d = static_cast<double>(v) - mean;
    m2 += d * d;
  });
  s.stddev = std::sqrt(m2 / static_cast<double>(n - 1));
}

// Every figure of the values `each` yields (any order; read, never moved).
template <class Each>
duration_stats stats_by(const Each& each) noexcept {
  duration_stats s;
  moments_of(each, s);
  s.median = median_of(each, s.count, s.min, s.max);
  return s;
}

inline duration_stats stats_of(const std::uint64_t* first, const std::uint64_t* last) noexcept {
  return stats_by(each_value{first, last});
}

template <class Alloc>
duration_stats stats_of(const std::vector<std::uint64_t, Alloc>& v) noexcept {
  return stats_of(v.data(), v.data() + v.size());
}

// The smallest and largest of the values `each` yields (no values: {~0, 0}).
template <class Each>
std::pair<std::uint64_t, std::uint64_t> extremes_of(const Each& each) noexcept {
  std::uint64_t lo = ~std::uint64_t{0}, hi = 0;
  each([&](std::uint64_t v) {
    lo = v < lo ? v : lo;
    hi = v > hi ? v : hi;
  });
  return {lo, hi};
}

// The median alone of the n values `each` yields (no moments: a pass for the extremes, then the
// selection).
template <class Each>
double median_by(const Each& each, std::uint64_t n) noexcept {
  const auto [lo, hi] = extremes_of(each);
  return median_of(each, n, lo, hi);
}

inline double median_of(const std::uint64_t* first, const std::uint64_t* last) noexcept {
  return median_by(each_value{first, last}, static_cast<std::uint64_t>(last - first));
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

// p-quantile (0 < p <= 1) by nearest rank of the n values `each` yields, all within [lo, hi].
template <class Each>
double nearest_rank_of(const Each& each, std::uint64_t n, double p, std::uint64_t lo, std::uint64_t hi) noexcept {
  if (n == 0) return 0.0;
  auto rank = static_cast<std::uint64_t>(std::ceil(p * static_cast<double>(n)));
  if (rank < 1) rank = 1;
  if (rank > n) rank = n;
  return static_cast<double>(ranks_of(each, n, rank - 1, false, lo, hi).first);
}

// The median and the p90 (nearest rank) of [first, last), one pass for their common extremes.
inline std::pair<double, double> median_and_p90(const std::uint64_t* first, const std::uint64_t* last) noexcept {
  const each_value each{first, last};
  const auto [lo, hi] = extremes_of(each);
  const auto n = static_cast<std::uint64_t>(last - first);
  return {median_of(each, n, lo, hi), nearest_rank_of(each, n, 0.9, lo, hi)};
}

} // namespace detail
} // namespace v1
} // namespace nvscope

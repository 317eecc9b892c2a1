// nvscope-target: nvscope
#pragma once

/// \file analyze/kernel_runs.hpp
/// Every valid kernel's duration grouped by name id, once, for the passes of `analyze` that
/// read them by name (a pass of the engine; its types are in namespace detail, not promised).
///
/// The kernel summary (its statistics), the overall activity (its kernel median) and the
/// diagnosis' kernel samples (sorted durations by name) each group the kernels' durations by
/// name, then select in them or sort them. Inside `analyze` they are grouped by one read of
/// the kernel records (kernel_runs_of); the kernel summary takes each name's figures that depend
/// on the values' order, then sorts its run in place (stats_then_sort), so that the medians are
/// read off the sorted runs, the overall median is found across them (median_of_runs), and the
/// samples take them as they lie where the diagnosis window holds every kernel.
///
/// \code
///   auto runs = nvscope::detail::kernel_runs_of(t, nvscope::index_trace(t));
/// \endcode

#include <nvscope/analyze/detail/hot_counts.hpp>
#include <nvscope/analyze/grouping.hpp>
#include <nvscope/analyze/index.hpp>
#include <nvscope/analyze/stats.hpp>
#include <nvscope/trace.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

namespace nvscope {
inline namespace v1 {
namespace detail {

// The diagnosis window (`end == 0`: the whole trace) holds what starts inside it.
inline bool in_window(const time_window& w, timestamp_ns start) noexcept {
  return w.end == 0 || (start >= w.begin && start < w.end);
}

// Sorts [first, last), whose values lie within [lo, hi]: a radix sort of the values less the
// smallest, 11 bits a pass, as many passes as the range needs (a span under 2^11 ns: one; under
// 2^33 ns: three); a comparison sort below 1,024 values. `first_read(v)`: called for each value
// in its place, in order, before any moves (by the radix sort's first count: a caller's sum
// over the values in their order then takes no read of its own).
template <class FirstRead>
void sort_values(std::uint64_t* first, std::uint64_t* last, std::uint64_t lo, std::uint64_t hi, FirstRead&& first_read) {
  const auto n = static_cast<std::size_t>(last - first);
  if (n < 1024 || hi == lo) {
    for (auto* p = first; p != last; ++p) first_read(*p);
    if (hi != lo) std::sort(first, last);
    return;
  }
  constexpr int digit_bits = 11;
  constexpr std::size_t digits = std::size_t{1} << digit_bits;
  scratch_column<std::uint64_t> buffer(n); // each pass writes every place before the next reads it
  std::uint64_t *from = first, *to = buffer.data();
  for (int shift = 0; shift < 64 && ((hi - lo) >> shift) != 0; shift += digit_bits) {
    std::size_t count[digits + 1] = {};
    if (shift == 0)
      for (auto* p = from; p != from + n; ++p) {
        first_read(*p);
        ++count[((*p - lo) & (digits - 1)) + 1];
      }
    else
      for (auto* p = from; p != from + n; ++p) ++count[(((*p - lo) >> shift) & (digits - 1)) + 1];
    for (std::size_t d = 0; d < digits; ++d) count[d + 1] += count[d];
    for (auto* p = from; p != from + n; ++p) to[count[((*p - lo) >> shift) & (digits - 1)]++] = *p;
    std::swap(from, to);
  }
  if (from != first) std::copy(from, from + n, first);
}

inline void sort_values(std::uint64_t* first, std::uint64_t* last, std::uint64_t lo, std::uint64_t hi) {
  sort_values(first, last, lo, hi, [](std::uint64_t) {});
}

inline void sort_values(std::uint64_t* first, std::uint64_t* last) {
  if (last - first < 1024) return std::sort(first, last);
  const auto [lo, hi] = extremes_of(each_value{first, last});
  sort_values(first, last, lo, hi);
}

// stats_of's figures of [first, last), then the values sorted in place and the median read off
// them: the same figures (the squared deviations summed in the values' order before the sort,
// as stats_of sums them during the median's first read), with a sort in place of the median's
// selection, for a caller that wants the values sorted anyway.
inline duration_stats stats_then_sort(std::uint64_t* first, std::uint64_t* last) {
  const value_moments v = moments_by(each_value{first, last});
  duration_stats s;
  s.count = v.count, s.total = v.total, s.min = v.min, s.max = v.max, s.average = v.average;
  const std::uint64_t n = s.count;
  if (n == 0) return s;
  const double mean = s.average;
  double m2 = 0.0; // summed in the values' order, on the sort's first read of them
  sort_values(first, last, s.min, s.max, [&](std::uint64_t v) {
    const double d = static_cast<double>(v) - mean;
    m2 += d * d;
  });
  const auto a = static_cast<double>(first[(n - 1) / 2]);
  s.median = n % 2 ? a : (a + static_cast<double>(first[n / 2])) / 2.0;
  if (n >= 2) s.stddev = std::sqrt(m2 / static_cast<double>(n - 1));
  return s;
}

// Every valid kernel's duration (trace_index::kernel_ok) by name id: name id n's in slot n, every
// id past the string table in slot `ids`, record order within a slot until `sorted`.
struct kernel_runs {
  grouped_values by_name;
  std::size_t ids = 0;
  bool sorted = false;
  // Of the kernels the runs hold: the earliest and latest starts, the latest end.
  timestamp_ns first_start = ~timestamp_ns{0}, last_start = 0, last_end = 0;
  // Per range: the summed durations of the valid kernels it owns (attribution::kernel_owner), the
  // kernels' part of the diagnosis samples' GPU work; emptied by the samples that take it.
  scratch_vector<std::uint64_t> owned_ns;

  std::uint64_t count() const noexcept { return by_name.values.size(); }
  // Whether `w` holds every kernel the runs hold (in_window's rule).
  bool inside(const time_window& w) const noexcept { return count() == 0 || (in_window(w, first_start) && in_window(w, last_start)); }
};

// The runs of `t`'s kernels that ok[i] marks valid, by one read of their records; owner[i]: the
// range owning kernel i (attribution::kernel_owner), or null for none (owned_ns then empty).
inline kernel_runs kernel_runs_of(const trace& t, const char* ok, const std::uint32_t* owner) {
  kernel_runs runs;
  runs.ids = t.strings.size();
  const auto unknown = static_cast<std::uint32_t>(runs.ids);
  kept_values kept(runs.ids + 1, t.kernels.size());
  const std::size_t nr = owner ? t.ranges.size() : 0;
  runs.owned_ns.assign(nr, 0);
  // A range's kernels come together: its owned time is summed in hot_counts.
  const kernel_record* const kernels = t.kernels.data();
  const std::size_t n = t.kernels.size();
  std::size_t* const count = kept.counts();
  std::uint32_t* const group = kept.groups();
  std::uint64_t* const value = kept.values();
  hot_counts<std::uint64_t> owned(runs.owned_ns.data());
  std::size_t n_kept = 0;
  timestamp_ns first = ~timestamp_ns{0}, last = 0, last_end = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (!ok[i]) continue;
    const auto& k = kernels[i];
    const std::uint64_t d = k.end - k.start;
    first = std::min(first, k.start);
    last = std::max(last, k.start);
    last_end = std::max(last_end, k.end);
    const std::uint32_t g = k.name < runs.ids ? k.name : unknown;
    ++count[g];
    group[n_kept] = g;
    value[n_kept++] = d;
    if (nr != 0 && owner[i] < nr) owned.add(owner[i], d);
  }
  owned.flush();
  kept.kept(n_kept);
  runs.first_start = first;
  runs.last_start = last;
  runs.last_end = last_end;
  runs.by_name = kept.place();
  return runs;
}

// The runs of `t`'s valid kernels (trace_index::kernel_ok), by one read of their records.
inline kernel_runs kernel_runs_of(const trace& t, const trace_index& x) { return kernel_runs_of(t, x.kernel_ok.data(), x.links.kernel_owner.data()); }

// Each run sorted in place (where the kernel summary did not sort them).
inline void sort_runs(kernel_runs& runs) {
  auto& g = runs.by_name;
  for (std::size_t s = 0; s + 1 < g.offset.size(); ++s) sort_values(g.values.data() + g.offset[s], g.values.data() + g.offset[s + 1]);
  runs.sorted = true;
}

// The runs of `t`'s valid kernels, sorted, without an index (no owned time): what the passes that
// analyze gives analyze's runs read when a caller runs them alone.
inline kernel_runs sorted_kernel_runs_of(const trace& t) {
  std::vector<char> ok(t.kernels.size());
  for (std::size_t i = 0; i < ok.size(); ++i) ok[i] = valid_interval(t.kernels[i].start, t.kernels[i].end);
  auto runs = kernel_runs_of(t, ok.data(), nullptr);
  sort_runs(runs);
  return runs;
}

// The value at 0-based rank k of every sorted run together (k < runs.count()): the smallest value
// at or below which more than k values lie, searched over the values' range, each candidate
// counted by a binary search a run (the runs are few beside their values).
inline std::uint64_t value_at_rank(const std::vector<std::pair<const std::uint64_t*, const std::uint64_t*>>& runs, std::uint64_t k) noexcept {
  std::uint64_t lo = ~std::uint64_t{0}, hi = 0;
  for (const auto& [first, last] : runs) lo = std::min(lo, *first), hi = std::max(hi, last[-1]);
  while (lo < hi) {
    const std::uint64_t mid = lo + (hi - lo) / 2;
    std::uint64_t at_or_below = 0;
    for (const auto& [first, last] : runs) at_or_below += static_cast<std::uint64_t>(std::upper_bound(first, last, mid) - first);
    if (at_or_below > k) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

// The median of every value of the sorted runs together, as median_of takes it (the mean of the
// two middle values for an even count); 0 for none.
inline double median_of_runs(const kernel_runs& runs) {
  const auto n = runs.count();
  if (n == 0) return 0.0;
  std::vector<std::pair<const std::uint64_t*, const std::uint64_t*>> nonempty;
  const auto& g = runs.by_name;
  for (std::size_t s = 0; s + 1 < g.offset.size(); ++s)
    if (g.offset[s + 1] > g.offset[s]) nonempty.emplace_back(g.values.data() + g.offset[s], g.values.data() + g.offset[s + 1]);
  const auto a = static_cast<double>(value_at_rank(nonempty, (n - 1) / 2));
  return n % 2 ? a : (a + static_cast<double>(value_at_rank(nonempty, n / 2))) / 2.0;
}

} // namespace detail
} // namespace v1
} // namespace nvscope

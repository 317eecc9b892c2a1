// nvscope-target: nvscope
#pragma once

/// \file analyze/recipes.hpp
/// The `nsys recipe` recipes nvscope computes in-process from a trace, by nsys's names and with
/// its default parameters (`recipe_params`): `gpu_gaps`, `gpu_time_util`, `cuda_api_sync`,
/// `cuda_memcpy_async`, `cuda_memcpy_sync`, `cuda_memset_sync`, `cuda_gpu_kern_hist`,
/// `cuda_gpu_kern_pace`, `nvtx_pace`, `nvtx_gpu_proj_pace` (with `pace_stats_of`) and
/// `nccl_gpu_overlap_trace` (with `nccl_gpu_overlap_groups`), `cuda_gpu_time_util_map` and
/// `nccl_gpu_time_util_map` (a sort, then one walk of spans and bins); the last three also over
/// several ranks (`rank_traces`), as nsys's reducer combines its reports. Each is a few sorts and
/// walks, n log n in the records (the gaps walk each device's operations once in start order; the
/// chunks and the kernels' overlaps are sweeps over sorted starts and ends, `overlap_sweep`; the
/// copy and memset rules look calls up by correlation id in a sorted index), and is tested equal
/// to its plain definition in analyze/reference/recipes.hpp; tests/analyze/recipes_vs_nsys_test.cpp
/// holds them equal to nsys's own outputs of one run and of two NCCL ranks. export/recipes.hpp
/// prints them.
///
/// \code
///   auto gaps = nvscope::gpu_gaps(t, {});                 // gaps over nsys's default --gap
///   auto waits = nvscope::cuda_api_sync(t);               // needs API calls recorded
/// \endcode

#include <nvscope/analyze/names.hpp>
#include <nvscope/analyze/recipe_rows.hpp>
#include <nvscope/analyze/reports.hpp>
#include <nvscope/trace.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

namespace nvscope {
inline namespace v1 {
namespace detail {

// One GPU operation of the gaps and chunks walks; `order` is its place among kernels, then
// copies, then memsets (the rules' union), which breaks ties of equal ends.
struct device_op {
  std::uint16_t device;
  timestamp_ns start, end;
  std::uint32_t context;
  std::uint32_t order;
};

// Every kernel, copy and memset with a valid end, sorted by device, then start.
inline std::vector<device_op> ops_by_device(const trace& t) {
  std::vector<device_op> ops;
  ops.reserve(t.kernels.size() + t.copies.size() + t.memsets.size());
  std::uint32_t order = 0;
  auto add = [&](timestamp_ns s, timestamp_ns e, std::uint16_t device, std::uint32_t context) {
    if (e != 0 && e >= s) ops.push_back({device, s, e, context, order});
    ++order;
  };
  for (const auto& k : t.kernels) add(k.start, k.end, t.kernel_configs[k.config].device, t.kernel_configs[k.config].context);
  for (const auto& c : t.copies) add(c.start, c.end, c.device, c.context);
  for (const auto& m : t.memsets) add(m.start, m.end, m.device, m.context);
  std::sort(ops.begin(), ops.end(), [](const device_op& a, const device_op& b) { return std::tie(a.device, a.start) < std::tie(b.device, b.start); });
  return ops;
}

// Calls `each(device, first, last)` for each device's run [first, last) of `ops`.
template <class Each>
void for_each_device(const std::vector<device_op>& ops, Each each) {
  for (std::size_t i = 0, j = 0; i < ops.size(); i = j) {
    for (j = i; j < ops.size() && ops[j].device == ops[i].device;) ++j;
    each(ops[i].device, i, j);
  }
}

// `ASCII-case-insensitive` prefix and substring tests: SQLite's LIKE on 'p%' and '%s%'.
inline bool iequal(char a, char b) noexcept { return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b)); }
inline bool istarts(std::string_view s, std::string_view p) noexcept {
  return s.size() >= p.size() && std::equal(p.begin(), p.end(), s.begin(), iequal);
}
inline bool icontains(std::string_view s, std::string_view p) noexcept {
  return std::search(s.begin(), s.end(), p.begin(), p.end(), iequal) != s.end();
}

// Which rule a runtime API name is for.
enum class api_rule : std::uint8_t { none, sync, memcpy_async, memcpy_sync, memset_sync };

inline api_rule rule_of(std::string_view name) noexcept {
  if (istarts(name, "cudaDeviceSynchronize") || istarts(name, "cudaStreamSynchronize")) return api_rule::sync;
  const bool async = icontains(name, "async");
  if (istarts(name, "cudaMemcpy")) return async ? api_rule::memcpy_async : api_rule::memcpy_sync; // "async" cannot overlap the prefix
  if (istarts(name, "cudaMemset") && !async) return api_rule::memset_sync;
  return api_rule::none;
}

// The runtime calls of one rule as (correlation, call index), sorted: the join's index.
inline std::vector<std::pair<std::uint32_t, std::uint32_t>> calls_of(const trace& t, api_rule rule) {
  std::unordered_map<string_id, api_rule> seen;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> calls;
  for (std::uint32_t i = 0; i < t.api_calls.size(); ++i) {
    const auto& a = t.api_calls[i];
    if (a.is_driver) continue;
    auto it = seen.find(a.name);
    if (it == seen.end()) it = seen.emplace(a.name, rule_of(t.strings[a.name])).first;
    if (it->second == rule) calls.emplace_back(a.correlation, i);
  }
  std::sort(calls.begin(), calls.end());
  return calls;
}

// `make(record, call)` for each record with `keep(record)` and each call of `calls` with its
// correlation id, records in order and calls in record order; then by duration, longest first.
template <class Row, class Record, class Keep, class Make>
std::vector<Row> joined_rows(const std::vector<Record>& records, const std::vector<std::pair<std::uint32_t, std::uint32_t>>& calls, Keep keep, Make make) {
  std::vector<Row> rows;
  for (const auto& r : records) {
    if (r.end == 0 || r.end < r.start || !keep(r)) continue;
    auto it = std::lower_bound(calls.begin(), calls.end(), std::make_pair(r.correlation, std::uint32_t{0}));
    for (; it != calls.end() && it->first == r.correlation; ++it) rows.push_back(make(r, it->second));
  }
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.duration > b.duration; });
  return rows;
}

} // namespace detail

/// `gpu_gaps`: stretches longer than `p.gap_ms` in which a device runs no kernel, copy or
/// memset, within its first start and last end; longest first (docs/analysis.md, "Recipes").
/// A walk in start order keeps the latest end so far: a start past it opens a gap.
/// \code
///   for (const auto& g : nvscope::gpu_gaps(t, {})) std::printf("%u: %llu ns idle\n", g.device, (unsigned long long)g.duration);
/// \endcode
inline std::vector<gpu_gap_row> gpu_gaps(const trace& t, const recipe_params& p = {}) {
  const auto ops = detail::ops_by_device(t);
  std::vector<gpu_gap_row> rows;
  detail::for_each_device(ops, [&](std::uint16_t device, std::size_t first, std::size_t last) {
    const detail::device_op* latest = &ops[first]; // the op of the latest end; of equal ends, the last in union order
    for (std::size_t i = first + 1; i < last; ++i) {
      const auto& o = ops[i];
      if (o.start > latest->end && o.start - latest->end > p.gap_ms * 1000000)
        rows.push_back({o.start - latest->end, latest->end, o.start, t.process_id, device, latest->context});
      if (o.end > latest->end || (o.end == latest->end && o.order > latest->order)) latest = &o;
    }
  });
  std::stable_sort(rows.begin(), rows.end(), [](const gpu_gap_row& a, const gpu_gap_row& b) {
    return a.duration != b.duration ? a.duration > b.duration : a.start < b.start;
  });
  return rows;
}

namespace detail {

// The context nsys's rule gives a device's rows: of the operation that last lowered the first
// start or raised the last end, in union order (reference::range_context).
inline std::uint32_t range_context(const std::vector<device_op>& ops, std::size_t first, std::size_t last) {
  const device_op* lowest = &ops[first];
  const device_op* highest = &ops[first];
  for (std::size_t i = first; i < last; ++i) {
    const auto& o = ops[i];
    if (o.start < lowest->start || (o.start == lowest->start && o.order < lowest->order)) lowest = &o;
    if (o.end > highest->end || (o.end == highest->end && o.order < highest->order)) highest = &o;
  }
  return (lowest->order > highest->order ? lowest : highest)->context;
}

// The running time of a set of spans (their starts and ends, each sorted) from `from` (at or
// before every start) up to points asked in increasing order: a sweep that tracks how many run.
// With `at_least` 0 it sums their running time (two at once count twice: gpu_time_util's
// chunks); otherwise it counts the time at least that many run (1: their union; 2: where
// another runs beside any one of them: nccl_gpu_overlap_trace's kernels).
class overlap_sweep {
 public:
  overlap_sweep(std::vector<timestamp_ns> starts, std::vector<timestamp_ns> ends, timestamp_ns from, std::uint64_t at_least = 0)
      : starts_(std::move(starts)), ends_(std::move(ends)), at_least_(at_least), pos_(from) {}
  // The running time from where the last call stopped up to `x`.
  std::uint64_t area_to(timestamp_ns x) {
    std::uint64_t area = 0;
    while (i_ < starts_.size() || j_ < ends_.size()) {
      const bool start = i_ < starts_.size() && (j_ == ends_.size() || starts_[i_] <= ends_[j_]); // starts first: zero-length spans
      const timestamp_ns next = start ? starts_[i_] : ends_[j_];
      if (next > x) break;
      area += weight() * (next - pos_), pos_ = next;
      if (start) ++running_, ++i_;
      else --running_, ++j_;
    }
    area += weight() * (x - pos_), pos_ = x;
    return area;
  }

 private:
  std::uint64_t weight() const noexcept { return at_least_ == 0 ? running_ : running_ >= at_least_; }
  std::vector<timestamp_ns> starts_, ends_;
  std::size_t i_ = 0, j_ = 0;
  std::uint64_t running_ = 0;
  std::uint64_t at_least_;
  timestamp_ns pos_;
};

// The sweep of the device operations [first, last) (sorted by start).
inline overlap_sweep sweep_of(const std::vector<device_op>& ops, std::size_t first, std::size_t last) {
  std::vector<timestamp_ns> starts, ends;
  for (std::size_t k = first; k < last; ++k) starts.push_back(ops[k].start), ends.push_back(ops[k].end);
  std::sort(ends.begin(), ends.end());
  return overlap_sweep(std::move(starts), std::move(ends), ops[first].start);
}

// One device's rows of gpu_time_util, each with its group number (nsys's groupId) for the order.
inline void util_rows_of(const trace& t, const recipe_params& p, const std::vector<device_op>& ops, std::size_t first, std::size_t last,
                         std::vector<std::pair<std::int64_t, gpu_util_row>>& rows) {
  timestamp_ns lo = ops[first].start, hi = ops[first].end;
  for (std::size_t i = first; i < last; ++i) hi = std::max(hi, ops[i].end);
  const std::uint64_t size = (hi - lo + p.chunks - 1) / p.chunks;
  const auto context = range_context(ops, first, last);
  auto sweep = sweep_of(ops, first, last);
  std::int64_t low = 0;                     // chunks under the threshold so far
  std::uint64_t next = 0;                   // the chunk that would extend the row being coalesced
  bool open = false;                        // whether one is
  double weighted = 0, sizes = 0;
  auto close = [&] {
    if (sizes > 0) rows.back().second.in_use = sqlite_round(weighted / sizes, 1);
    weighted = sizes = 0;
  };
  for (std::uint64_t i = 0; i < p.chunks; ++i) {
    const timestamp_ns from = lo + i * size, to = std::min(from + size, hi);
    if (!(from < to)) break;
    const double percent = static_cast<double>(sweep.area_to(to)) / static_cast<double>(to - from) * 100;
    if (!(percent < p.threshold)) continue;
    ++low;
    if (!open || next != i) {
      close();
      rows.push_back({static_cast<std::int64_t>(i) - low, gpu_util_row{0.0, 0, from, t.process_id, ops[first].device, context}});
    }
    rows.back().second.duration = to - rows.back().second.start;
    weighted += static_cast<double>(to - from) * percent, sizes += static_cast<double>(to - from);
    open = true, next = i + 1;
  }
  close();
}

} // namespace detail

/// `gpu_time_util`: each device's span (first start to last end) cut into `p.chunks` chunks of
/// equal, rounded-up length; the chunks whose operations ran (summed) less than `p.threshold`
/// percent of them, consecutive ones coalesced into one row with their time-weighted average;
/// rows by that average, then duration (docs/analysis.md, "Recipes"). One sweep over each
/// device's starts and ends serves every chunk.
/// \code
///   for (const auto& c : nvscope::gpu_time_util(t, {})) std::printf("%.1f%% at %llu\n", c.in_use, (unsigned long long)c.start);
/// \endcode
inline std::vector<gpu_util_row> gpu_time_util(const trace& t, const recipe_params& p = {}) {
  const auto ops = detail::ops_by_device(t);
  std::vector<std::pair<std::int64_t, gpu_util_row>> rows;
  detail::for_each_device(ops, [&](std::uint16_t, std::size_t first, std::size_t last) { detail::util_rows_of(t, p, ops, first, last, rows); });
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    return std::make_tuple(a.second.in_use, a.second.duration, a.first) < std::make_tuple(b.second.in_use, b.second.duration, b.first);
  });
  std::vector<gpu_util_row> out;
  out.reserve(rows.size());
  for (const auto& r : rows) out.push_back(r.second);
  return out;
}

/// `cuda_api_sync`: runtime calls of cudaDeviceSynchronize and cudaStreamSynchronize, longest first.
/// \code
///   auto waits = nvscope::cuda_api_sync(t); // waits[0]: the longest host wait on the GPU
/// \endcode
inline std::vector<api_sync_row> cuda_api_sync(const trace& t) {
  std::vector<std::uint32_t> calls;
  for (const auto& c : detail::calls_of(t, detail::api_rule::sync)) calls.push_back(c.second);
  std::sort(calls.begin(), calls.end()); // record order, which breaks ties of duration
  std::vector<api_sync_row> rows;
  for (const auto i : calls) {
    const auto& a = t.api_calls[i];
    if (a.end != 0 && a.end >= a.start) rows.push_back({a.end - a.start, a.start, t.process_id, detail::os_thread_id(t, a.thread), std::string(t.strings[a.name])});
  }
  std::stable_sort(rows.begin(), rows.end(), [](const api_sync_row& a, const api_sync_row& b) { return a.duration > b.duration; });
  return rows;
}

namespace detail {

template <class Keep>
std::vector<memcpy_rule_row> memcpy_rows(const trace& t, api_rule rule, Keep keep) {
  return joined_rows<memcpy_rule_row>(t.copies, calls_of(t, rule), keep, [&](const copy_record& c, std::uint32_t call) {
    return memcpy_rule_row{c.end - c.start, c.start, c.src, c.dst, c.bytes, t.process_id, c.device, c.context, c.stream,
                           std::string(t.strings[t.api_calls[call].name])};
  });
}

} // namespace detail

/// `cuda_memcpy_async`: copies from or to pageable memory issued by cudaMemcpy*Async*, which
/// then run synchronously; longest first.
inline std::vector<memcpy_rule_row> cuda_memcpy_async(const trace& t) {
  return detail::memcpy_rows(t, detail::api_rule::memcpy_async,
                             [](const copy_record& c) { return c.src == memory_kind::pageable || c.dst == memory_kind::pageable; });
}

/// `cuda_memcpy_sync`: copies issued by a synchronous cudaMemcpy*, other than device to device
/// and host to device of 64 KiB or less; longest first.
inline std::vector<memcpy_rule_row> cuda_memcpy_sync(const trace& t) {
  return detail::memcpy_rows(t, detail::api_rule::memcpy_sync, [](const copy_record& c) {
    return c.kind != copy_kind::device_to_device && !(c.kind == copy_kind::host_to_device && c.bytes <= 65536);
  });
}

/// `cuda_memset_sync`: memsets of pinned or managed memory issued by a synchronous
/// cudaMemset*; longest first.
inline std::vector<memset_rule_row> cuda_memset_sync(const trace& t) {
  return detail::joined_rows<memset_rule_row>(
      t.memsets, detail::calls_of(t, detail::api_rule::memset_sync),
      [](const memset_record& m) { return m.memory == memory_kind::pinned || m.memory == memory_kind::managed; },
      [&](const memset_record& m, std::uint32_t call) {
        return memset_rule_row{m.end - m.start, m.start, m.memory, m.bytes, t.process_id, m.device, m.context, m.stream,
                               std::string(t.strings[t.api_calls[call].name])};
      });
}

/// `cuda_gpu_kern_hist`: every kernel run longer than 0 ns by base name, in start order: the
/// values of the recipe's duration histogram (`--outputs=histograms` draws nvscope's, STEM.kernels.svg).
inline std::vector<kernel_duration_row> cuda_gpu_kern_hist(const trace& t) {
  std::vector<std::uint32_t> order;
  for (std::uint32_t i = 0; i < t.kernels.size(); ++i)
    if (t.kernels[i].end > t.kernels[i].start) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) { return t.kernels[a].start < t.kernels[b].start; });
  std::vector<kernel_duration_row> rows;
  rows.reserve(order.size());
  for (const auto i : order) rows.push_back({std::string(kernel_name(t, t.kernels[i].name, name_form::base)), t.kernels[i].end - t.kernels[i].start});
  return rows;
}

namespace detail {

// The pace rows of the records `pick(i)` chooses among `n`, ordered by `span(i).first`, times
// from `session`.
template <class Pick, class Span>
std::vector<pace_row> pace_rows(std::size_t n, timestamp_ns session, Pick pick, Span span) {
  std::vector<std::uint32_t> order;
  for (std::uint32_t i = 0; i < n; ++i)
    if (pick(i)) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) { return span(a).first < span(b).first; });
  std::vector<pace_row> rows(order.size());
  std::uint64_t durations = 0;
  std::int64_t deltas = 0;
  timestamp_ns last_end = 0;
  for (std::size_t i = 0; i < order.size(); ++i) {
    const auto [s, e] = span(order[i]);
    const timestamp_ns start = s - session, end = e - session;
    const std::int64_t delta = static_cast<std::int64_t>(start) - static_cast<std::int64_t>(last_end);
    durations += end - start, deltas += delta, last_end = end;
    rows[i] = {i, start, end, end - start, durations, delta, deltas};
  }
  return rows;
}

// The q-quantile of sorted values as numpy interpolates it (reference::linear_quantile).
inline double linear_quantile(const std::vector<double>& sorted, double q) noexcept {
  const double place = q * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(place);
  if (lo + 1 >= sorted.size()) return sorted[lo];
  const double f = place - static_cast<double>(lo), a = sorted[lo], b = sorted[lo + 1];
  return f >= 0.5 ? b - (b - a) * (1 - f) : a + (b - a) * f;
}

} // namespace detail

/// `cuda_gpu_kern_pace`: each run of the kernel whose base name is `p.name`, in start order,
/// times from the session's start (`trace::begin`), with the running sums of durations and of
/// the deltas from one run's end to the next run's start.
/// \code
///   nvscope::recipe_params p;
///   p.name = "gemm";
///   auto pace = nvscope::cuda_gpu_kern_pace(t, p); // pace.back().delta_accum: the last start, summed from the gaps
/// \endcode
inline std::vector<pace_row> cuda_gpu_kern_pace(const trace& t, const recipe_params& p) {
  const auto& k = t.kernels;
  return detail::pace_rows(
      k.size(), t.begin, [&](std::uint32_t i) { return k[i].end != 0 && k[i].end >= k[i].start && kernel_name(t, k[i].name, name_form::base) == p.name; },
      [&](std::uint32_t i) { return std::make_pair(k[i].start, k[i].end); });
}

/// `nvtx_pace`: each closed NVTX range named `p.name`, in start order, with the running sums.
inline std::vector<pace_row> nvtx_pace(const trace& t, const recipe_params& p) {
  const auto& r = t.ranges;
  return detail::pace_rows(
      r.size(), t.begin, [&](std::uint32_t i) { return !r[i].is_mark && r[i].end != 0 && r[i].end >= r[i].start && t.strings[r[i].name] == p.name; },
      [&](std::uint32_t i) { return std::make_pair(r[i].start, r[i].end); });
}

/// `nvtx_gpu_proj_pace`: the ranges named `p.name` projected onto the GPU (the rows of
/// `nvtx_gpu_proj_trace`: first start to last end of the work they launched), paced.
inline std::vector<pace_row> nvtx_gpu_proj_pace(const trace& t, const recipe_params& p) {
  const auto rows = nvtx_gpu_proj_trace(t, start_end_rule::nsys);
  return detail::pace_rows(
      rows.size(), t.begin, [&](std::uint32_t i) { return t.strings[t.ranges[rows[i].range].name] == p.name; },
      [&](std::uint32_t i) { return std::make_pair(rows[i].projected_start, rows[i].projected_start + rows[i].projected_duration); });
}

/// A pace recipe's `stats`: the durations of its rows as nsys summarises them (Count, Mean, Std,
/// Min, Q1, Median, Q3, Max, Sum; reference::pace_stats_of), from one sorted copy.
/// \code
///   auto s = nvscope::pace_stats_of(nvscope::nvtx_pace(t, p), p.name); // s.median: the median iteration
/// \endcode
inline pace_stats pace_stats_of(const std::vector<pace_row>& rows, const std::string& name) {
  pace_stats s;
  s.text = name, s.count = rows.size();
  if (rows.empty()) return s;
  std::vector<double> d;
  d.reserve(rows.size());
  double sum = 0;
  for (const auto& r : rows) d.push_back(static_cast<double>(r.duration)), sum += d.back();
  const double mean = sum / static_cast<double>(d.size());
  double m2 = 0;
  for (const double x : d) m2 += (x - mean) * (x - mean);
  std::sort(d.begin(), d.end());
  s.mean = pandas_round(mean, 1), s.has_std = d.size() > 1;
  s.std = s.has_std ? pandas_round(std::sqrt(m2 / static_cast<double>(d.size() - 1)), 1) : 0.0;
  s.q1 = pandas_round(detail::linear_quantile(d, 0.25), 1), s.median = pandas_round(detail::linear_quantile(d, 0.5), 1);
  s.q3 = pandas_round(detail::linear_quantile(d, 0.75), 1);
  s.min = static_cast<std::uint64_t>(d.front()), s.max = static_cast<std::uint64_t>(d.back()), s.sum = rows.back().duration_accum;
  return s;
}

namespace detail {

// A kernel of nccl_gpu_overlap_trace: its device, span, record and kind.
struct overlap_kernel {
  std::uint16_t device;
  timestamp_ns start, end;
  std::uint32_t index;
  bool communication;
};

// Each kernel's overlap with the other kernels of one kind, their time counted once: the time
// within the kernel that at least one kernel of that kind runs, or, when it is of that kind
// itself, at least two (itself and another). Two sweeps of the kind (at least 1, at least 2),
// asked at every start and end in time order.
inline std::vector<std::uint64_t> overlap_sums(const std::vector<overlap_kernel>& ks, std::size_t first, std::size_t last, bool communication) {
  std::vector<timestamp_ns> starts, ends;
  for (std::size_t k = first; k < last; ++k)
    if (ks[k].communication == communication) starts.push_back(ks[k].start), ends.push_back(ks[k].end);
  std::sort(ends.begin(), ends.end());
  std::vector<std::pair<timestamp_ns, std::size_t>> points; // (time, 2 * kernel + 1 for its end)
  for (std::size_t k = first; k < last; ++k) points.push_back({ks[k].start, 2 * (k - first)}), points.push_back({ks[k].end, 2 * (k - first) + 1});
  std::sort(points.begin(), points.end());
  overlap_sweep one(starts, ends, ks[first].start, 1), two(std::move(starts), std::move(ends), ks[first].start, 2);
  std::vector<std::uint64_t> by_one(points.size()), by_two(points.size()), sums(last - first);
  std::uint64_t so_far_one = 0, so_far_two = 0;
  for (const auto& [time, slot] : points) by_one[slot] = so_far_one += one.area_to(time), by_two[slot] = so_far_two += two.area_to(time);
  for (std::size_t k = first; k < last; ++k) {
    const auto& area = ks[k].communication == communication ? by_two : by_one;
    sums[k - first] = area[2 * (k - first) + 1] - area[2 * (k - first)];
  }
  return sums;
}

// One device's rows (kernels [first, last) of `ks`, sorted by start): communication kernels, then compute.
inline void overlap_rows_of(const trace& t, std::uint32_t rank, const std::vector<overlap_kernel>& ks, std::size_t first, std::size_t last,
                            std::vector<overlap_trace_row>& rows) {
  const auto comm = overlap_sums(ks, first, last, true), comp = overlap_sums(ks, first, last, false);
  for (const bool communication : {true, false})
    for (std::size_t k = first; k < last; ++k) {
      if (ks[k].communication != communication) continue;
      overlap_trace_row r;
      r.name = std::string(kernel_name(t, t.kernels[ks[k].index].name, name_form::base));
      r.start = ks[k].start, r.end = ks[k].end, r.pid = t.process_id, r.device = ks[k].device, r.rank = rank, r.communication = communication;
      r.communication_sum = comm[k - first], r.compute_sum = comp[k - first], r.has_overlap = r.end > r.start;
      if (r.has_overlap) {
        const double d = static_cast<double>(r.end - r.start);
        r.communication_overlap = pandas_round(static_cast<double>(r.communication_sum) / d * 100, 1);
        r.compute_overlap = pandas_round(static_cast<double>(r.compute_sum) / d * 100, 1);
      }
      rows.push_back(std::move(r));
    }
}

// One rank's rows of nccl_gpu_overlap_trace (none without an NCCL kernel).
inline void overlap_rank_rows(const trace& t, std::uint32_t rank, std::vector<overlap_trace_row>& rows) {
  std::unordered_map<string_id, bool> communication;
  std::vector<overlap_kernel> ks;
  for (std::uint32_t i = 0; i < t.kernels.size(); ++i) {
    const auto& k = t.kernels[i];
    if (k.end == 0 || k.end < k.start) continue;
    auto it = communication.find(k.name);
    if (it == communication.end()) it = communication.emplace(k.name, is_nccl_short_name(kernel_name(t, k.name, name_form::base))).first;
    ks.push_back({t.kernel_configs[k.config].device, k.start, k.end, i, it->second});
  }
  if (std::none_of(ks.begin(), ks.end(), [](const overlap_kernel& k) { return k.communication; })) return; // as nsys: no NCCL kernel, no rows
  std::stable_sort(ks.begin(), ks.end(), [](const auto& a, const auto& b) { return std::tie(a.device, a.start) < std::tie(b.device, b.start); });
  for (std::size_t i = 0, j = 0; i < ks.size(); i = j) {
    for (j = i; j < ks.size() && ks[j].device == ks[i].device;) ++j;
    overlap_rows_of(t, rank, ks, i, j, rows);
  }
}

} // namespace detail

/// `nccl_gpu_overlap_trace`'s rank_trace over several ranks (nsys's `--input` reports, in its
/// order): per rank and device, each NCCL kernel (base name starting "nccl":
/// `is_nccl_short_name`) and then each compute kernel, in start order, with the time within it
/// that other kernels of each kind ran (each kind's time counted once) and those times as
/// percents of its duration; a rank without an NCCL kernel has no rows and no rank number
/// (docs/analysis.md, "Recipes"). Per device, a sort and two sweeps per kind.
/// \code
///   for (const auto& r : nvscope::nccl_gpu_overlap_trace({&rank0, &rank1})) if (r.communication) std::printf("%u %s %.1f%% hidden\n", r.rank, r.name.c_str(), r.compute_overlap);
/// \endcode
inline std::vector<overlap_trace_row> nccl_gpu_overlap_trace(const rank_traces& ranks) {
  std::vector<overlap_trace_row> rows;
  std::uint32_t rank = 0;
  for (const auto* t : ranks) {
    const auto before = rows.size();
    detail::overlap_rank_rows(*t, rank, rows);
    rank += rows.size() != before;
  }
  return rows;
}

/// `nccl_gpu_overlap_trace`'s rank_trace of one trace (rank 0).
/// \code
///   for (const auto& r : nvscope::nccl_gpu_overlap_trace(t)) if (r.communication) std::printf("%s %.1f%% hidden\n", r.name.c_str(), r.compute_overlap);
/// \endcode
inline std::vector<overlap_trace_row> nccl_gpu_overlap_trace(const trace& t) { return nccl_gpu_overlap_trace(rank_traces{&t}); }

/// `nccl_gpu_overlap_trace`'s grouped_trace: the rows of one name together, by name: their
/// count and their summed overlaps as percents of their summed durations.
inline std::vector<overlap_group_row> nccl_gpu_overlap_groups(const std::vector<overlap_trace_row>& rows) {
  std::vector<std::uint32_t> order(rows.size());
  for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) { return rows[a].name < rows[b].name; });
  std::vector<overlap_group_row> groups;
  for (const auto i : order) {
    const auto& r = rows[i];
    if (groups.empty() || groups.back().name != r.name) groups.push_back({r.name, 0, 0, 0, 0, 0, 0, false});
    auto& g = groups.back();
    ++g.count, g.duration += r.end - r.start, g.communication_sum += r.communication_sum, g.compute_sum += r.compute_sum;
  }
  for (auto& g : groups) {
    g.has_overlap = g.duration > 0;
    if (!g.has_overlap) continue;
    g.communication_overlap = pandas_round(static_cast<double>(g.communication_sum) / static_cast<double>(g.duration) * 100, 1);
    g.compute_overlap = pandas_round(static_cast<double>(g.compute_sum) / static_cast<double>(g.duration) * 100, 1);
  }
  return groups;
}

namespace detail {

using time_span = std::pair<std::int64_t, std::int64_t>; // [start, end) from the session's start

// `spans` sorted by start, overlapping ones merged (the union: what ran, counted once).
inline std::vector<time_span> union_of(std::vector<time_span> spans) {
  std::sort(spans.begin(), spans.end());
  std::vector<time_span> out;
  for (const auto& x : spans) {
    if (!out.empty() && x.first <= out.back().second) out.back().second = std::max(out.back().second, x.second);
    else out.push_back(x);
  }
  return out;
}

// Where two unions (as `union_of` makes them) overlap: one walk of both.
inline std::vector<time_span> intersection_of(const std::vector<time_span>& a, const std::vector<time_span>& b) {
  std::vector<time_span> out;
  for (std::size_t i = 0, j = 0; i < a.size() && j < b.size();) {
    const auto lo = std::max(a[i].first, b[j].first), hi = std::min(a[i].second, b[j].second);
    if (lo < hi) out.emplace_back(lo, hi);
    (a[i].second < b[j].second ? i : j) += 1;
  }
  return out;
}

// The binning of nsys's heatmap (reference::bin_percents states it): each span's fraction of
// its first and last bin by the same floating-point steps, the bins between them whole (a
// difference array: disjoint spans leave those bins to one span), then the session's first and
// last bins scaled by their parts inside it and the bins outside it marked. Linear in spans and
// bins.
struct heatmap_session {
  std::int64_t offset = 0;       // the session's start, from the earliest rank's
  std::int64_t max_duration = 0; // its end, from the earliest rank's
};
inline std::vector<double> bin_fractions(const std::vector<time_span>& spans, std::uint64_t bin_size, std::uint32_t bins, const heatmap_session& h) {
  std::vector<double> pct(bins, 0.0), whole(bins + 1, 0.0);
  const double size = static_cast<double>(bin_size);
  auto bin_of = [&](double scaled) { return static_cast<std::size_t>(std::floor(scaled)); };
  for (const auto& x : spans) { // single-bin spans first, as np.bincount adds them
    const double s = static_cast<double>(x.first) / size, e = static_cast<double>(x.second) / size;
    if (bin_of(s) == bin_of(e) && bin_of(s) < bins) pct[bin_of(s)] += std::min(std::ceil(s), e) - s;
  }
  for (const auto& x : spans) {
    const double s = static_cast<double>(x.first) / size, e = static_cast<double>(x.second) / size;
    const auto first = bin_of(s), last = bin_of(e);
    if (first == last) continue;
    if (last < bins) pct[last] += e - std::max(std::floor(e), s);
    if (first < bins) pct[first] += std::min(std::ceil(s), e) - s;
    if (first + 1 < bins) whole[first + 1] += 1.0, whole[std::min<std::size_t>(last, bins)] -= 1.0;
  }
  double running = 0.0;
  for (std::uint32_t b = 0; b < bins; ++b) running += whole[b], pct[b] += running;
  const double s = static_cast<double>(h.offset) / size, e = static_cast<double>(h.max_duration) / size;
  const auto start_bin = bin_of(s), end_bin = bin_of(e);
  const double start_part = std::min(std::ceil(s), e) - s, end_part = e - std::max(std::floor(e), s);
  if (start_part != 0 && start_bin < bins) pct[start_bin] /= start_part;
  if (end_part != 0 && start_bin != end_bin && end_bin < bins) pct[end_bin] /= end_part;
  for (std::size_t b = 0; b < bins; ++b)
    if (b > end_bin || b < start_bin) pct[b] = std::nan("");
  return pct;
}

// The ranks' sessions as the heatmaps place them: each from `trace::begin` to the trace's end,
// offset by its wall-clock start less the earliest rank's (where every rank has a wall clock and
// `align`); the bin size `ceil(latest end / bins)` (heatmap.get_bin_size).
struct heatmap_layout {
  std::vector<heatmap_session> sessions;
  std::uint64_t bin_size = 0;
};
inline heatmap_layout layout_of(const rank_traces& ranks, const recipe_params& p) {
  heatmap_layout h;
  bool clocks = p.align;
  std::int64_t earliest = 0;
  std::vector<std::int64_t> wall;
  for (const auto* t : ranks) {
    const auto& c = t->context.at_start;
    clocks = clocks && c.wall_ns != 0;
    wall.push_back(static_cast<std::int64_t>(c.wall_ns) + static_cast<std::int64_t>(t->begin) - static_cast<std::int64_t>(c.trace_ns));
    earliest = wall.size() == 1 ? wall.back() : std::min(earliest, wall.back());
  }
  std::int64_t latest = 0;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    const auto end = trace_end_of(*ranks[i]);
    const std::int64_t offset = clocks ? wall[i] - earliest : 0;
    h.sessions.push_back({offset, (end > ranks[i]->begin ? static_cast<std::int64_t>(end - ranks[i]->begin) : 0) + offset});
    latest = std::max(latest, h.sessions.back().max_duration);
  }
  h.bin_size = static_cast<std::uint64_t>(std::ceil(static_cast<double>(latest) / static_cast<double>(p.bins)));
  return h;
}

// Per device (ascending), the spans of its kernels with a valid end from the earliest rank's
// session start; `nccl` the NCCL kernels (is_nccl_short_name), `compute` the others.
struct device_kernel_spans {
  std::uint16_t device = 0;
  std::vector<time_span> all, nccl, compute;
};
inline std::vector<device_kernel_spans> kernel_spans_by_device(const trace& t, std::int64_t offset) {
  std::vector<device_kernel_spans> out;
  std::unordered_map<string_id, bool> is_nccl;
  for (const auto& k : t.kernels) {
    if (!has_interval(k.start, k.end) || k.start < t.begin) continue; // before the session: no bin
    const auto d = device_of(t, k);
    auto it = std::lower_bound(out.begin(), out.end(), d, [](const device_kernel_spans& x, std::uint16_t v) { return x.device < v; });
    if (it == out.end() || it->device != d) it = out.insert(it, device_kernel_spans{d, {}, {}, {}});
    const time_span x{static_cast<std::int64_t>(k.start - t.begin) + offset, static_cast<std::int64_t>(k.end - t.begin) + offset};
    auto kind = is_nccl.find(k.name);
    if (kind == is_nccl.end()) kind = is_nccl.emplace(k.name, is_nccl_short_name(kernel_name(t, k.name, name_form::base))).first;
    it->all.push_back(x);
    (kind->second ? it->nccl : it->compute).push_back(x);
  }
  return out;
}

// One device's bins as rows: `columns` the percents of each bin per column, in row order.
inline void add_map_rows(std::vector<util_map_row>& rows, const trace& t, std::uint16_t device, std::uint32_t rank, std::uint64_t bin_size,
                         const std::vector<std::vector<double>>& columns) {
  for (std::uint32_t b = 0; b < columns[0].size(); ++b) {
    util_map_row r;
    r.duration = bin_size * b, r.pid = t.process_id, r.device = device, r.rank = rank;
    r.in_session = !std::isnan(columns[0][b]);
    double* out[] = {&r.all, &r.nccl, &r.compute, &r.overlap};
    for (std::size_t c = 0; c < columns.size(); ++c) *out[c] = r.in_session ? pandas_round(columns[c][b] * 100, 1) : 0.0;
    rows.push_back(r);
  }
}

// One rank's rows of a heatmap (none without a kernel, nor, for `nccl`, without an NCCL kernel).
inline void util_map_rank_rows(const trace& t, const recipe_params& p, bool nccl, const heatmap_layout& h, std::size_t i, std::uint32_t rank,
                               std::vector<util_map_row>& rows) {
  const auto devices = kernel_spans_by_device(t, h.sessions[i].offset);
  if (nccl && std::none_of(devices.begin(), devices.end(), [](const device_kernel_spans& d) { return !d.nccl.empty(); })) return;
  auto bin = [&](const std::vector<time_span>& spans) { return bin_fractions(spans, h.bin_size, p.bins, h.sessions[i]); };
  for (const auto& d : devices) {
    if (!nccl) {
      add_map_rows(rows, t, d.device, rank, h.bin_size, {bin(union_of(d.all))});
      continue;
    }
    const auto comm = union_of(d.nccl), compute = union_of(d.compute);
    add_map_rows(rows, t, d.device, rank, h.bin_size, {bin(union_of(d.all)), bin(comm), bin(compute), bin(intersection_of(comm, compute))});
  }
}

// The heatmaps over several ranks: one layout, each rank's rows numbered among those with rows.
inline std::vector<util_map_row> util_map_rows(const rank_traces& ranks, const recipe_params& p, bool nccl) {
  std::vector<util_map_row> rows;
  const auto h = layout_of(ranks, p);
  if (h.bin_size == 0) return rows;
  std::uint32_t rank = 0;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    const auto before = rows.size();
    util_map_rank_rows(*ranks[i], p, nccl, h, i, rank, rows);
    rank += rows.size() != before;
  }
  return rows;
}

} // namespace detail

/// `cuda_gpu_time_util_map` over several ranks (nsys's `--input` reports, in its order): each
/// rank's session (`trace::begin` to the trace's end, placed by its wall-clock start unless
/// `p.align` is false) cut with the others' into `p.bins` bins of `ceil(latest end / bins)` ns;
/// per rank, device and bin, the percent of the bin in which some kernel ran (the kernels'
/// union), as nsys's `lib/heatmap.py` computes it (docs/analysis.md, "Recipes"). A sort and a
/// walk of spans and bins per device. `--outputs=charts` has no heatmap picture; the rows are its
/// values.
/// \code
///   for (const auto& b : nvscope::cuda_gpu_time_util_map({&rank0, &rank1}, {})) if (b.in_session && b.all < 10) { /* an idle bin */ }
/// \endcode
inline std::vector<util_map_row> cuda_gpu_time_util_map(const rank_traces& ranks, const recipe_params& p = {}) { return detail::util_map_rows(ranks, p, false); }

/// `cuda_gpu_time_util_map` of one trace (rank 0).
/// \code
///   for (const auto& b : nvscope::cuda_gpu_time_util_map(t, {})) if (b.in_session && b.all < 10) { /* an idle bin */ }
/// \endcode
inline std::vector<util_map_row> cuda_gpu_time_util_map(const trace& t, const recipe_params& p = {}) { return cuda_gpu_time_util_map(rank_traces{&t}, p); }

/// `nccl_gpu_time_util_map`: as `cuda_gpu_time_util_map`, with four percents per bin: all
/// kernels, the NCCL kernels (base name starting "nccl": `is_nccl_short_name`), the others, and
/// the two kinds at once; a rank without an NCCL kernel has no rows.
/// \code
///   for (const auto& b : nvscope::nccl_gpu_time_util_map({&rank0, &rank1}, {})) { /* b.overlap of b.nccl hidden behind compute */ }
/// \endcode
inline std::vector<util_map_row> nccl_gpu_time_util_map(const rank_traces& ranks, const recipe_params& p = {}) { return detail::util_map_rows(ranks, p, true); }

/// `nccl_gpu_time_util_map` of one trace (rank 0).
/// \code
///   for (const auto& b : nvscope::nccl_gpu_time_util_map(t, {})) { /* b.overlap of b.nccl hidden behind compute */ }
/// \endcode
inline std::vector<util_map_row> nccl_gpu_time_util_map(const trace& t, const recipe_params& p = {}) { return nccl_gpu_time_util_map(rank_traces{&t}, p); }

} // namespace v1
} // namespace nvscope

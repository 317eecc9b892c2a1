// nvscope-target: nvscope
#pragma once

/// \file analyze/reference/recipes.hpp
/// The `nsys recipe` recipes of analyze/recipes.hpp, each defined as plainly as the nsys rule
/// script the recipe runs states it (`nsys analyze`'s `gpu_gaps.py`, `gpu_time_util.py`,
/// `cuda_api_sync.py`, `cuda_memcpy_async.py`, `cuda_memcpy_sync.py`, `cuda_memset_sync.py`;
/// the recipes under `nsys_recipe/recipes/<name>/` read their rows through
/// `StatsService.read_sql_report`), and `cuda_gpu_kern_hist`, the pace recipes and
/// `nccl_gpu_overlap_trace` and the two heatmaps as their recipe scripts and the `lib/` they
/// call (`heatmap.py`, `overlap.py`, `nccl.py`, `collective_loader.py`, `pace.py`,
/// `summary.py`) state them; `cuda_memcpy_sync`'s rule, whose SQL is not in nvscope's sources,
/// inferred from its description and marked so. SQL's `LIKE` is transcribed as SQLite runs it (ASCII
/// letters of either case alike), a join as a loop over both tables, `ORDER BY 1 DESC` as a
/// stable sort, so that ties keep the record order. analyze/recipes.hpp is tested equal to
/// these (tests/analyze/recipes_test.cpp).
///
/// \code
///   #include <nvscope/analyze/reference/recipes.hpp>
///   auto gaps = nvscope::reference::gpu_gaps(t, {});
/// \endcode

#include <nvscope/analyze/recipe_rows.hpp>
#include <nvscope/analyze/reference/reports.hpp>
#include <nvscope/analyze/reference/tables.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

namespace nvscope {
inline namespace v1 {
namespace reference {

/// SQLite's `value LIKE pattern`: `%` any run of characters, `_` one, other characters equal
/// ignoring the case of ASCII letters.
inline bool like(std::string_view value, std::string_view pattern) {
  if (pattern.empty()) return value.empty();
  if (pattern[0] == '%') {
    for (std::size_t i = 0; i <= value.size(); ++i)
      if (like(value.substr(i), pattern.substr(1))) return true;
    return false;
  }
  if (value.empty()) return false;
  const bool one = pattern[0] == '_' || std::tolower(static_cast<unsigned char>(pattern[0])) == std::tolower(static_cast<unsigned char>(value[0]));
  return one && like(value.substr(1), pattern.substr(1));
}

/// A GPU operation (its span, device and context) as the rules' `GPU_TABLE` lists them: kernels, copies, memsets.
struct table_op {
  timestamp_ns start = 0, end = 0;
  std::uint16_t device = 0;
  std::uint32_t context = 0;
};

/// Kernels, then copies, then memsets with a valid end, in record order.
inline std::vector<table_op> table_ops(const trace& t) {
  std::vector<table_op> ops;
  for (const auto& k : t.kernels)
    if (valid(k.start, k.end)) ops.push_back({k.start, k.end, t.kernel_configs[k.config].device, t.kernel_configs[k.config].context});
  for (const auto& c : t.copies)
    if (valid(c.start, c.end)) ops.push_back({c.start, c.end, c.device, c.context});
  for (const auto& m : t.memsets)
    if (valid(m.start, m.end)) ops.push_back({m.start, m.end, m.device, m.context});
  return ops;
}

/// `gpu_gaps` (rule `gpu_gaps.py`): per process and device, number the starts in start order
/// and the ends in end order; "ON starts.rowNum - 1 == ends.rowNum ... WHERE duration >
/// {THRESHOLD} AND gapStart < gapEnd" with THRESHOLD = gap * 1000000, duration = start - end;
/// the Context ID is the ending operation's. Rows `ORDER BY duration DESC, gapStart`. nsys
/// counts its own profiling overhead as GPU work; nvscope records none.
inline std::vector<gpu_gap_row> gpu_gaps(const trace& t, const recipe_params& p) {
  std::map<std::uint16_t, std::vector<table_op>> by_device;
  for (const auto& o : table_ops(t)) by_device[o.device].push_back(o);
  std::vector<gpu_gap_row> rows;
  for (auto& [device, ops] : by_device) {
    std::vector<timestamp_ns> starts;
    for (const auto& o : ops) starts.push_back(o.start);
    std::sort(starts.begin(), starts.end());
    std::stable_sort(ops.begin(), ops.end(), [](const table_op& a, const table_op& b) { return a.end < b.end; });
    for (std::size_t k = 1; k < starts.size(); ++k) {
      const auto gap_start = ops[k - 1].end, gap_end = starts[k];
      if (gap_start < gap_end && gap_end - gap_start > p.gap_ms * 1000000) rows.push_back({gap_end - gap_start, gap_start, gap_end, t.process_id, device, ops[k - 1].context});
    }
  }
  std::stable_sort(rows.begin(), rows.end(), [](const gpu_gap_row& a, const gpu_gap_row& b) {
    return a.duration != b.duration ? a.duration > b.duration : a.start < b.start;
  });
  return rows;
}

/// The context nsys's `gpu_time_util` gives a device: its `range` CTE selects `contextId` bare
/// beside `min(start)` and `max(end)` `GROUP BY deviceId, pid`, and SQLite takes a bare column
/// from the row that last changed one of them, scanning the union (kernels, copies, memsets).
inline std::uint32_t range_context(const std::vector<table_op>& ops) {
  timestamp_ns lo = ops[0].start, hi = ops[0].end;
  std::uint32_t context = ops[0].context;
  for (const auto& o : ops) {
    if (o.start < lo || o.end > hi) context = o.context;
    lo = std::min(lo, o.start), hi = std::max(hi, o.end);
  }
  return context;
}

/// One chunk of `gpu_time_util`'s `utilization` CTE.
struct util_chunk {
  std::uint64_t range_id = 0;
  timestamp_ns start = 0, end = 0;
  double percent = 0.0;
};

/// `gpu_time_util` (rule `gpu_time_util.py`): per process and device, `range` spans min(start)
/// to max(end) of the GPU operations, "chunkSize = ceil(CAST(max(end) - min(start) AS FLOAT) /
/// {NUM_CHUNKS})"; chunk i is "[i * chunkSize + start, min(... + chunkSize, end))", kept "ON
/// cstart < cend"; its "timePercentage" is "sum(CAST(coalesce(min(ops.end, chunk.cend) -
/// max(ops.start, chunk.cstart), 0) AS FLOAT)) / (chunk.cend - chunk.cstart) * 100" over the
/// operations overlapping it (summed: overlapping operations count twice), "HAVING
/// timePercentage < {THRESHOLD}"; consecutive chunks ("rangeId - ROW_NUMBER() OVER (PARTITION BY
/// pid, deviceId ORDER BY rangeId) AS groupId") coalesce into a row: "min(start)", "max(end) -
/// min(start)", "round(sum(size * timePercentage) / sum(size), 1)", `GROUP BY groupId, deviceId,
/// pid`; rows numbered "ROW_NUMBER() OVER(ORDER BY average, duration)", ties in the GROUP BY's
/// order. The ceiling is taken in integers (the float quotient of a span below 2^53 ns by at most
/// 1000 rounds to an integer only when it is one). nsys adds its profiling overheads to the
/// operations; nvscope records none.
inline std::vector<gpu_util_row> gpu_time_util(const trace& t, const recipe_params& p) {
  std::map<std::uint16_t, std::vector<table_op>> by_device;
  for (const auto& o : table_ops(t)) by_device[o.device].push_back(o);
  std::vector<std::tuple<std::int64_t, std::uint16_t, gpu_util_row>> rows; // (groupId, device, row)
  for (const auto& [device, ops] : by_device) {
    timestamp_ns lo = ops[0].start, hi = ops[0].end;
    for (const auto& o : ops) lo = std::min(lo, o.start), hi = std::max(hi, o.end);
    const std::uint64_t size = (hi - lo + p.chunks - 1) / p.chunks;
    std::vector<util_chunk> low;
    for (std::uint64_t i = 0; i < p.chunks; ++i) {
      const timestamp_ns cs = lo + i * size, ce = std::min(cs + size, hi);
      if (!(cs < ce)) continue;
      double overlap = 0;
      for (const auto& o : ops)
        if (o.start < ce && o.end > cs) overlap += static_cast<double>(std::min(o.end, ce) - std::max(o.start, cs));
      const double percent = overlap / static_cast<double>(ce - cs) * 100;
      if (percent < p.threshold) low.push_back({i, cs, ce, percent});
    }
    std::map<std::int64_t, std::vector<util_chunk>> groups;
    for (std::size_t n = 0; n < low.size(); ++n) groups[static_cast<std::int64_t>(low[n].range_id) - static_cast<std::int64_t>(n + 1)].push_back(low[n]);
    for (const auto& [group, chunks] : groups) {
      double weighted = 0, sizes = 0;
      for (const auto& c : chunks) weighted += static_cast<double>(c.end - c.start) * c.percent, sizes += static_cast<double>(c.end - c.start);
      const gpu_util_row row{sqlite_round(weighted / sizes, 1), chunks.back().end - chunks.front().start, chunks.front().start, t.process_id, device, range_context(ops)};
      rows.emplace_back(group, device, row);
    }
  }
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    const auto& x = std::get<2>(a);
    const auto& y = std::get<2>(b);
    return std::make_tuple(x.in_use, x.duration, std::get<0>(a), std::get<1>(a)) < std::make_tuple(y.in_use, y.duration, std::get<0>(b), std::get<1>(b));
  });
  std::vector<gpu_util_row> out;
  for (const auto& r : rows) out.push_back(std::get<2>(r));
  return out;
}

/// Rows `ORDER BY 1 DESC` (duration) with ties in the order the loops made them.
template <class Row>
void by_duration_desc(std::vector<Row>& rows) {
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.duration > b.duration; });
}

/// `cuda_api_sync` (rule `cuda_api_sync.py`): CUPTI_ACTIVITY_KIND_RUNTIME rows whose name is
/// "LIKE 'cudaDeviceSynchronize%' OR value LIKE 'cudaStreamSynchronize%'", `ORDER BY 1 DESC`.
inline std::vector<api_sync_row> cuda_api_sync(const trace& t) {
  std::vector<api_sync_row> rows;
  for (const auto& a : t.api_calls) {
    const auto name = t.strings[a.name];
    if (a.is_driver || !valid(a.start, a.end) || !(like(name, "cudaDeviceSynchronize%") || like(name, "cudaStreamSynchronize%"))) continue;
    rows.push_back({a.end - a.start, a.start, t.process_id, tid_of(t, a.thread), std::string(name)});
  }
  by_duration_desc(rows);
  return rows;
}

/// The rows of a copy rule: copies passing `keep` joined on correlation id with the runtime
/// calls whose name is LIKE `name` and, where `not_like` is given, NOT LIKE it.
template <class Keep>
std::vector<memcpy_rule_row> memcpy_rule(const trace& t, Keep keep, std::string_view name, std::string_view not_like) {
  std::vector<memcpy_rule_row> rows;
  for (const auto& c : t.copies) {
    if (!valid(c.start, c.end) || !keep(c)) continue;
    for (const auto& a : t.api_calls) {
      const auto api = t.strings[a.name];
      if (a.is_driver || a.correlation != c.correlation || !like(api, name) || (!not_like.empty() && like(api, not_like))) continue;
      rows.push_back({c.end - c.start, c.start, c.src, c.dst, c.bytes, t.process_id, c.device, c.context, c.stream, std::string(api)});
    }
  }
  by_duration_desc(rows);
  return rows;
}

/// `cuda_memcpy_async` (rule `cuda_memcpy_async.py`): copies "WHERE srcKind == 0 OR dstKind ==
/// 0" (pageable) joined with runtime calls "LIKE 'cudaMemcpy%Async%'", `ORDER BY 1 DESC`.
inline std::vector<memcpy_rule_row> cuda_memcpy_async(const trace& t) {
  return memcpy_rule(t, [](const copy_record& c) { return c.src == memory_kind::pageable || c.dst == memory_kind::pageable; }, "cudaMemcpy%Async%", "");
}

/// `cuda_memcpy_sync` (rule `cuda_memcpy_sync.py`, whose SQL nvscope's sources do not hold; its
/// description: synchronous transfers, leaving out "cudaMemcpy*() (no Async suffix) occurred
/// within the same device as well as H2D copy kind with a memory block of 64 KB or less"):
/// runtime calls LIKE 'cudaMemcpy%' and NOT LIKE '%async%', copies other than device to device
/// and host to device of at most 65536 bytes, `ORDER BY 1 DESC`.
inline std::vector<memcpy_rule_row> cuda_memcpy_sync(const trace& t) {
  const auto keep = [](const copy_record& c) {
    return c.kind != copy_kind::device_to_device && !(c.kind == copy_kind::host_to_device && c.bytes <= 65536);
  };
  return memcpy_rule(t, keep, "cudaMemcpy%", "%async%");
}

/// `cuda_memset_sync` (rule `cuda_memset_sync.py`): memsets "WHERE memKind == 1 OR memKind ==
/// 4" (pinned, managed) joined with runtime calls "LIKE 'cudaMemset%' AND value NOT LIKE
/// '%async%'", `ORDER BY 1 DESC`.
inline std::vector<memset_rule_row> cuda_memset_sync(const trace& t) {
  std::vector<memset_rule_row> rows;
  for (const auto& m : t.memsets) {
    if (!valid(m.start, m.end) || (m.memory != memory_kind::pinned && m.memory != memory_kind::managed)) continue;
    for (const auto& a : t.api_calls) {
      const auto api = t.strings[a.name];
      if (a.is_driver || a.correlation != m.correlation || !like(api, "cudaMemset%") || like(api, "%async%")) continue;
      rows.push_back({m.end - m.start, m.start, m.memory, m.bytes, t.process_id, m.device, m.context, m.stream, std::string(api)});
    }
  }
  by_duration_desc(rows);
  return rows;
}

/// `cuda_gpu_kern_hist` (recipe `cuda_gpu_kern_hist.py`): CUPTI_ACTIVITY_KIND_KERNEL's
/// "shortName", "start", "end"; `kernel_df["Duration"] = end - start`, rows with
/// `Duration > 0` kept, shortName replaced by its string as "Name"; the table's order taken as
/// start order (ties in record order). The histogram is drawn by the recipe's notebook.
inline std::vector<kernel_duration_row> cuda_gpu_kern_hist(const trace& t) {
  std::vector<std::pair<timestamp_ns, kernel_duration_row>> runs;
  for (const auto& k : t.kernels)
    if (valid(k.start, k.end) && k.end > k.start) runs.push_back({k.start, {kernel_label(t, k.name, name_form::base), k.end - k.start}});
  std::stable_sort(runs.begin(), runs.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<kernel_duration_row> rows;
  for (auto& r : runs) rows.push_back(std::move(r.second));
  return rows;
}

/// The pace of a list of (start, end) instances, as nsys's `lib/pace.py` makes it
/// (`compute_pace_stats_dfs`, checked on the recipes' outputs in tests/data/nsys_recipes): the
/// report's times, from its session's start (nvscope's session starts at `trace::begin`;
/// `apply_time_offset` shifts several ranks by their sessions' wall-clock starts), "duration =
/// end - start", "delta = start - end.shift(fill_value=0)" (the previous instance's end; the
/// first's: its start), their `cumsum()`s. nsys takes the instances in its table's order,
/// nvscope in start order.
inline std::vector<pace_row> pace_of(std::vector<std::pair<timestamp_ns, timestamp_ns>> instances, timestamp_ns session) {
  std::stable_sort(instances.begin(), instances.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<pace_row> rows;
  for (std::size_t i = 0; i < instances.size(); ++i) {
    pace_row r;
    r.iteration = i, r.start = instances[i].first - session, r.end = instances[i].second - session, r.duration = r.end - r.start;
    const timestamp_ns before = i ? rows.back().end : 0;
    r.delta = static_cast<std::int64_t>(r.start) - static_cast<std::int64_t>(before);
    r.duration_accum = r.duration + (i ? rows.back().duration_accum : 0);
    r.delta_accum = r.delta + (i ? rows.back().delta_accum : 0);
    rows.push_back(r);
  }
  return rows;
}

/// numpy's `quantile(v, q)` (pandas' `describe()`): linear between the two values around place
/// q * (n - 1) of the sorted values, taken from the upper one when the fraction is at least 0.5.
inline double linear_quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double place = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(place));
  if (lo + 1 >= v.size()) return v[lo];
  const double f = place - static_cast<double>(lo), a = v[lo], b = v[lo + 1];
  return f >= 0.5 ? b - (b - a) * (1 - f) : a + (b - a) * f;
}

/// A pace recipe's `stats.parquet` (`summary.describe_column` of the durations: min, max, count,
/// std, mean, sum and the 0.25, 0.5, 0.75 quantiles, aggregated over the ranks): Count,
/// Mean, Std (the sample deviation), Min, Q1, Median, Q3 (`linear_quantile`), Max, Sum, the
/// figures rounded to one decimal as pandas rounds (ties to even: 165429.25 prints 165429.2). With
/// one rank, nsys's "(approx)" figures are the rank's own.
inline pace_stats pace_stats_of(const std::vector<pace_row>& rows, const std::string& name) {
  pace_stats s;
  s.text = name, s.count = rows.size();
  if (rows.empty()) return s;
  std::vector<double> d;
  for (const auto& r : rows) d.push_back(static_cast<double>(r.duration));
  double sum = 0;
  for (const double x : d) sum += x;
  const double mean = sum / static_cast<double>(d.size());
  double m2 = 0;
  for (const double x : d) m2 += (x - mean) * (x - mean);
  s.mean = pandas_round(mean, 1), s.has_std = d.size() > 1;
  s.std = s.has_std ? pandas_round(std::sqrt(m2 / static_cast<double>(d.size() - 1)), 1) : 0.0;
  s.q1 = pandas_round(linear_quantile(d, 0.25), 1), s.median = pandas_round(linear_quantile(d, 0.5), 1), s.q3 = pandas_round(linear_quantile(d, 0.75), 1);
  s.min = static_cast<std::uint64_t>(*std::min_element(d.begin(), d.end())), s.max = static_cast<std::uint64_t>(*std::max_element(d.begin(), d.end()));
  s.sum = rows.back().duration_accum;
  return s;
}

/// `cuda_gpu_kern_pace` (recipe `cuda_gpu_kern_pace.py`): the kernels whose shortName is
/// `--name` (`pace.filter_by_pace_name`, read as an exact match), their pace by `pace_of`.
/// nsys's times are offset to the session's start; nvscope's are the trace's clock.
inline std::vector<pace_row> cuda_gpu_kern_pace(const trace& t, const recipe_params& p) {
  std::vector<std::pair<timestamp_ns, timestamp_ns>> runs;
  for (const auto& k : t.kernels)
    if (valid(k.start, k.end) && kernel_label(t, k.name, name_form::base) == p.name) runs.emplace_back(k.start, k.end);
  return pace_of(runs, t.begin);
}

/// `nvtx_pace` (recipe `nvtx_pace.py`): the closed NVTX ranges (not marks) whose text is
/// `--name`, their pace by `pace_of`.
inline std::vector<pace_row> nvtx_pace(const trace& t, const recipe_params& p) {
  std::vector<std::pair<timestamp_ns, timestamp_ns>> ranges;
  for (const auto& r : t.ranges)
    if (!r.is_mark && valid(r.start, r.end) && t.strings[r.name] == p.name) ranges.emplace_back(r.start, r.end);
  return pace_of(ranges, t.begin);
}

/// `nvtx_gpu_proj_pace` (recipe `nvtx_gpu_proj_pace.py`): the rows of `nvtx_gpu_proj_trace`
/// whose range's text is `--name`, their projected start and end paced by `pace_of`.
inline std::vector<pace_row> nvtx_gpu_proj_pace(const trace& t, const recipe_params& p) {
  std::vector<std::pair<timestamp_ns, timestamp_ns>> projected;
  for (const auto& r : reference::nvtx_gpu_proj_trace(t, start_end_rule::nsys))
    if (t.strings[t.ranges[r.range].name] == p.name) projected.emplace_back(r.projected_start, r.projected_start + r.projected_duration);
  return pace_of(projected, t.begin);
}

/// `overlap.calculate_overlap_sum(df1, df2)` (`lib/overlap.py`) for one kernel `k` of df1: its
/// intersections of positive length with each span of `others` (`calculate_overlapping_ranges`;
/// `self`, when it is among them, left out: "indices != df1_row.Index"), merged where they
/// overlap or touch (`consolidate=True`: `group_overlapping_ranges` starts a group where "start
/// > cummax(end).shift()", a group spans "min(start)" to "max(end)"), their lengths summed. nsys
/// groups the intersections of every kernel at once; a group of one kernel's can only be bridged
/// by spans that overlap that kernel too, so grouping each kernel's alone gives the same sums.
inline std::uint64_t overlap_sum(const overlap_trace_row& k, const std::vector<const overlap_trace_row*>& others) {
  std::vector<std::pair<timestamp_ns, timestamp_ns>> parts;
  for (const auto* o : others) {
    if (o == &k) continue;
    const auto s = std::max(k.start, o->start), e = std::min(k.end, o->end);
    if (e > s) parts.emplace_back(s, e);
  }
  std::sort(parts.begin(), parts.end());
  std::uint64_t sum = 0;
  timestamp_ns group_start = 0, group_end = 0;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i == 0 || parts[i].first > group_end) {
      sum += group_end - group_start;
      group_start = parts[i].first, group_end = parts[i].second;
    } else {
      group_end = std::max(group_end, parts[i].second);
    }
  }
  return sum + (group_end - group_start);
}

/// One rank of `nccl_gpu_overlap_trace`: its kernels (`CompositeTable.CUDA_KERNEL`: start, end,
/// deviceId, shortName) typed by `nccl.add_kernel_type` (is_nccl_short_name); no rows without
/// an NCCL kernel ("Report does not contain any NCCL kernels": the report is left out); per
/// `groupby(["pid", "deviceId"])` (one process a trace) the NCCL kernels, then the compute
/// kernels (in start order: nsys keeps its table's order, which the rows' keys make immaterial),
/// each with "Communication Sum" (`calculate_overlap_sum(nccl_group_df)` for an NCCL kernel,
/// `(compute_group_df, nccl_group_df)` for a compute one) and "Compute Sum" likewise; then the
/// reducer's "Duration" = End - Start, "Communication Overlap" = "Communication Sum" /
/// "Duration" * 100, "Compute Overlap" likewise, `.round(1)` (pandas: ties to even; 0 / 0 NaN).
inline std::vector<overlap_trace_row> overlap_rank_rows(const trace& t, std::uint32_t rank) {
  std::map<std::uint16_t, std::vector<overlap_trace_row>> by_device;
  bool any = false;
  for (const auto& k : t.kernels) {
    if (!valid(k.start, k.end)) continue;
    overlap_trace_row r;
    r.name = kernel_label(t, k.name, name_form::base), r.start = k.start, r.end = k.end, r.pid = t.process_id, r.rank = rank;
    r.device = t.kernel_configs[k.config].device, r.communication = is_nccl_short_name(r.name);
    any = any || r.communication;
    by_device[r.device].push_back(r);
  }
  std::vector<overlap_trace_row> rows;
  if (!any) return rows;
  for (auto& [device, kernels] : by_device) {
    std::stable_sort(kernels.begin(), kernels.end(), [](const auto& a, const auto& b) { return a.start < b.start; });
    std::vector<const overlap_trace_row*> nccl, compute;
    for (const auto& k : kernels) (k.communication ? nccl : compute).push_back(&k);
    for (const auto* group : {&nccl, &compute})
      for (const auto* k : *group) {
        auto r = *k;
        r.communication_sum = overlap_sum(*k, nccl), r.compute_sum = overlap_sum(*k, compute);
        const double d = static_cast<double>(r.end - r.start);
        r.has_overlap = r.end > r.start;
        if (r.has_overlap) r.communication_overlap = pandas_round(static_cast<double>(r.communication_sum) / d * 100, 1), r.compute_overlap = pandas_round(static_cast<double>(r.compute_sum) / d * 100, 1);
        rows.push_back(r);
      }
  }
  return rows;
}

/// `nccl_gpu_overlap_trace` (recipe `nccl_gpu_overlap_trace.py`) rank_trace over several ranks:
/// each rank's rows (`overlap_rank_rows`), "Rank" its place among the ranks that had rows (the
/// reducer's `filter_none`, then `enumerate`). nsys's Start and End are the report's own times
/// (`filter_and_adjust_time(kernel_df)` with no session offset): the trace's clock here.
inline std::vector<overlap_trace_row> nccl_gpu_overlap_trace(const rank_traces& ranks) {
  std::vector<overlap_trace_row> rows;
  std::uint32_t rank = 0;
  for (const auto* t : ranks) {
    const auto mine = overlap_rank_rows(*t, rank);
    rows.insert(rows.end(), mine.begin(), mine.end());
    rank += !mine.empty();
  }
  return rows;
}
inline std::vector<overlap_trace_row> nccl_gpu_overlap_trace(const trace& t) { return reference::nccl_gpu_overlap_trace(rank_traces{&t}); }

/// `nccl_gpu_overlap_trace`'s grouped_trace: the rank_trace rows of every rank `groupby("Name")`
/// (by name), "Count" `size()`, and "Communication Sum" and "Compute Sum" summed over "Duration"
/// summed, * 100, `.round(1)`.
inline std::vector<overlap_group_row> nccl_gpu_overlap_groups(const std::vector<overlap_trace_row>& rows) {
  std::map<std::string, overlap_group_row> groups;
  for (const auto& r : rows) {
    auto& g = groups[r.name];
    g.name = r.name, ++g.count, g.duration += r.end - r.start, g.communication_sum += r.communication_sum, g.compute_sum += r.compute_sum;
  }
  std::vector<overlap_group_row> out;
  for (auto& [name, g] : groups) {
    g.has_overlap = g.duration > 0;
    if (g.has_overlap) {
      g.communication_overlap = pandas_round(static_cast<double>(g.communication_sum) / static_cast<double>(g.duration) * 100, 1);
      g.compute_overlap = pandas_round(static_cast<double>(g.compute_sum) / static_cast<double>(g.duration) * 100, 1);
    }
    out.push_back(g);
  }
  return out;
}

using time_span = std::pair<std::int64_t, std::int64_t>;

/// `overlap.consolidate_ranges` (`lib/overlap.py`): the spans sorted by start, grouped where
/// "start > cummax(end).shift()" starts a group (so overlapping and touching spans merge), each
/// group "min(start)" to "max(end)".
inline std::vector<time_span> consolidated(std::vector<time_span> spans) {
  std::sort(spans.begin(), spans.end());
  std::vector<time_span> out;
  for (const auto& x : spans) {
    if (!out.empty() && x.first <= out.back().second) out.back().second = std::max(out.back().second, x.second);
    else out.push_back(x);
  }
  return out;
}

/// `overlap.calculate_overlapping_ranges(df1, df2)`: for each span of `a`, its intersections
/// with the spans of `b`, "overlap_duration > 0" kept; of two consolidated lists, disjoint.
inline std::vector<time_span> overlapping(const std::vector<time_span>& a, const std::vector<time_span>& b) {
  std::vector<time_span> out;
  for (const auto& x : a)
    for (const auto& y : b)
      if (std::max(x.first, y.first) < std::min(x.second, y.second)) out.emplace_back(std::max(x.first, y.first), std::min(x.second, y.second));
  std::sort(out.begin(), out.end());
  return out;
}

/// Where one rank's session lies among the ranks' (`collective_loader.ProfileInfo`): its
/// `session_offset` (its session's wall-clock start less the earliest rank's, 0 with
/// `--disable-alignment`) and its `max_duration` (its session's length plus that offset).
struct heatmap_rank {
  std::int64_t offset = 0, max_duration = 0;
};

/// A trace's session, nsys's (time zero, ANALYSIS_DETAILS.duration) read as nvscope's: it starts
/// at `trace::begin` and lasts to the trace's end (`finish` when set); its wall-clock start is
/// `recording_context::at_start` carried back to `begin` (nsys's TARGET_INFO_SESSION_START_TIME).
inline std::int64_t session_length(const trace& t) {
  const auto end = trace_end(t);
  return end > t.begin ? static_cast<std::int64_t>(end - t.begin) : 0;
}
inline std::int64_t session_wall_start(const trace& t) {
  return static_cast<std::int64_t>(t.context.at_start.wall_ns) + static_cast<std::int64_t>(t.begin) - static_cast<std::int64_t>(t.context.at_start.trace_ns);
}

/// `ProfileInfo.reducer_func`: "session_offsets = [session_time - min(session_times)]" unless
/// `--disable-alignment` (and here also where a rank has no wall clock), "max_durations =
/// [max_duration + session_offset]".
inline std::vector<heatmap_rank> heatmap_ranks(const rank_traces& ranks, bool align) {
  bool clocks = align;
  for (const auto* t : ranks) clocks = clocks && t->context.at_start.wall_ns != 0;
  std::int64_t earliest = 0;
  for (std::size_t i = 0; i < ranks.size(); ++i) earliest = i == 0 ? session_wall_start(*ranks[i]) : std::min(earliest, session_wall_start(*ranks[i]));
  std::vector<heatmap_rank> out;
  for (const auto* t : ranks) {
    const std::int64_t offset = clocks ? session_wall_start(*t) - earliest : 0;
    out.push_back({offset, session_length(*t) + offset});
  }
  return out;
}

/// `heatmap.calculate_bin_pcts` (`lib/heatmap.py`) over `spans` (times from the earliest rank's
/// session start): `_calculate_bin_info` scales each start and end by the bin size (`s`, `e`),
/// floors them to bins; a span within one bin adds `min(ceil(s), e) - s` to it (`np.bincount`, all
/// such spans first); then per span over several bins, its last bin `e - max(floor(e), s)`, its
/// first `min(ceil(s), e) - s`, every bin between 1. `_rectify_pct_inplace` runs
/// `_calculate_bin_info` on the session (`session_offset`, `max_duration`): the session's first
/// bin divided by its start percent when not 0, its last bin by its end percent when not 0 and
/// not the first, the bins after the last and before the first NaN. Returned as fractions (the
/// `* 100` and `round(1)` come after). A bin past `bins` (a kernel past the session, where
/// numpy would fail) takes nothing.
inline std::vector<double> bin_percents(const std::vector<time_span>& spans, std::uint64_t bin_size, std::uint32_t bins, const heatmap_rank& session) {
  std::vector<double> pct(bins, 0.0);
  const double size = static_cast<double>(bin_size);
  for (const auto& [start, end] : spans) {
    const double s = static_cast<double>(start) / size, e = static_cast<double>(end) / size;
    if (std::floor(s) == std::floor(e) && std::floor(s) < bins) pct[static_cast<std::size_t>(std::floor(s))] += std::min(std::ceil(s), e) - s;
  }
  for (const auto& [start, end] : spans) {
    const double s = static_cast<double>(start) / size, e = static_cast<double>(end) / size;
    const auto first = static_cast<std::size_t>(std::floor(s)), last = static_cast<std::size_t>(std::floor(e));
    if (first == last) continue;
    if (last < bins) pct[last] += e - std::max(std::floor(e), s);
    if (first < bins) pct[first] += std::min(std::ceil(s), e) - s;
    for (std::size_t b = first + 1; b < last && b < bins; ++b) pct[b] += 1;
  }
  const double s = static_cast<double>(session.offset) / size, e = static_cast<double>(session.max_duration) / size;
  const auto start_bin = static_cast<std::size_t>(std::floor(s)), end_bin = static_cast<std::size_t>(std::floor(e));
  const double start_percent = std::min(std::ceil(s), e) - s, end_percent = e - std::max(std::floor(e), s);
  if (start_percent != 0 && start_bin < bins) pct[start_bin] /= start_percent;
  if (end_percent != 0 && start_bin != end_bin && end_bin < bins) pct[end_bin] /= end_percent;
  for (std::size_t b = 0; b < bins; ++b)
    if (b > end_bin || b < start_bin) pct[b] = std::nan("");
  return pct;
}

/// One rank of the heatmaps (`_mapper_func`): its kernels from its session's start plus its
/// offset (`filter_and_adjust_time(kernel_df, session_offset)`; kernels starting before the
/// session left out); no rows without a kernel, nor (`nccl`) without an NCCL kernel; per
/// `groupby(["pid", "deviceId"])` the consolidated spans binned: "Kernel" (nccl: "All", "NCCL",
/// "Compute", each consolidated, and "Overlap", `calculate_overlapping_ranges` of the NCCL and
/// Compute unions), each `(pct * 100).round(1)`, "Duration" `bin_size * i`
/// (`heatmap.generate_bin_list`).
inline std::vector<util_map_row> util_map_rank_rows(const trace& t, const recipe_params& p, bool nccl, std::uint64_t bin_size, const heatmap_rank& session,
                                                    std::uint32_t rank) {
  std::map<std::uint16_t, std::vector<std::pair<time_span, bool>>> by_device; // (span, is nccl)
  bool any_nccl = false;
  for (const auto& k : t.kernels) {
    if (!valid(k.start, k.end) || k.start < t.begin) continue;
    const bool is_nccl = is_nccl_short_name(kernel_label(t, k.name, name_form::base));
    any_nccl |= is_nccl;
    by_device[device_of(t, k)].push_back({{static_cast<std::int64_t>(k.start - t.begin) + session.offset, static_cast<std::int64_t>(k.end - t.begin) + session.offset}, is_nccl});
  }
  std::vector<util_map_row> rows;
  if (nccl && !any_nccl) return rows;
  for (const auto& [device, kernels] : by_device) {
    std::vector<time_span> all, comm, compute;
    for (const auto& [x, is_nccl] : kernels) all.push_back(x), (is_nccl ? comm : compute).push_back(x);
    comm = consolidated(comm), compute = consolidated(compute);
    std::vector<std::vector<double>> columns{bin_percents(consolidated(all), bin_size, p.bins, session)};
    if (nccl)
      for (const auto& c : {comm, compute, overlapping(comm, compute)}) columns.push_back(bin_percents(c, bin_size, p.bins, session));
    for (std::uint32_t b = 0; b < p.bins; ++b) {
      util_map_row r;
      r.duration = bin_size * b, r.pid = t.process_id, r.device = device, r.rank = rank, r.in_session = !std::isnan(columns[0][b]);
      double* out[] = {&r.all, &r.nccl, &r.compute, &r.overlap};
      for (std::size_t c = 0; c < columns.size(); ++c) *out[c] = r.in_session ? pandas_round(columns[c][b] * 100, 1) : 0.0;
      rows.push_back(r);
    }
  }
  return rows;
}

/// `cuda_gpu_time_util_map` (`recipes/cuda_gpu_time_util_map`) and, with `nccl`,
/// `nccl_gpu_time_util_map` over several ranks: the sessions placed (`heatmap_ranks`), one bin
/// size for all, `heatmap.get_bin_size`: "math.ceil(max_duration / bin_number)" of the largest
/// `max_duration`; each rank's rows (`util_map_rank_rows`), "Rank" its place among the ranks that
/// had rows. nsys's `--cumulative`, `--start`, `--end` and `--filter-*` are not taken.
inline std::vector<util_map_row> gpu_time_util_map(const rank_traces& ranks, const recipe_params& p, bool nccl) {
  const auto sessions = heatmap_ranks(ranks, p.align);
  std::int64_t longest = 0;
  for (const auto& s : sessions) longest = std::max(longest, s.max_duration);
  const auto bin_size = static_cast<std::uint64_t>(std::ceil(static_cast<double>(longest) / p.bins));
  std::vector<util_map_row> rows;
  if (bin_size == 0) return rows;
  std::uint32_t rank = 0;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    const auto mine = util_map_rank_rows(*ranks[i], p, nccl, bin_size, sessions[i], rank);
    rows.insert(rows.end(), mine.begin(), mine.end());
    rank += !mine.empty();
  }
  return rows;
}
inline std::vector<util_map_row> cuda_gpu_time_util_map(const trace& t, const recipe_params& p) { return gpu_time_util_map(rank_traces{&t}, p, false); }
inline std::vector<util_map_row> nccl_gpu_time_util_map(const trace& t, const recipe_params& p) { return gpu_time_util_map(rank_traces{&t}, p, true); }

} // namespace reference
} // namespace v1
} // namespace nvscope

// nvscope-target: nvscope
#pragma once

/// \file analyze/reference/launches.hpp
/// Launch statistics, defined plainly over the reference timeline: HTA's
/// `get_cuda_kernel_launch_stats` figures per kernel name (launch call, launch delay, short
/// kernels, outliers) and HTA's queue length counted at each launch (docs/diagnosis.md,
/// "Launch statistics"). Not included by `analysis.hpp`.
///
/// \code
///   #include <nvscope/analyze/reference/launches.hpp>
///   const auto ops = nvscope::reference::timeline(t, {});
///   nvscope::launch_overview l = nvscope::reference::launch_statistics(ops, {});
/// \endcode

#include <nvscope/analyze/diagnose/options.hpp>
#include <nvscope/analyze/diagnosis.hpp>
#include <nvscope/analyze/reference/common.hpp>
#include <nvscope/analyze/reference/timeline.hpp>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace nvscope {
inline namespace v1 {
namespace reference {

/// An operation was launched where its launch time is known (a launch record or an API call).
inline bool launched(const gpu_op& op) { return op.call_start != 0; }

/// HTA's launch delay: GPU start minus the end of the launch call (the launch record's time
/// without an API record), 0 when negative.
inline std::uint64_t delay_ns(const gpu_op& op) { return op.start > op.call_end ? op.start - op.call_end : 0; }

/// Queue depth at the launch of operation `i` of `ops` (HTA's queue length, counted at each
/// launch): the launched operations of the same stream launched before it (an earlier call
/// start, or the same one earlier in the timeline) that have not ended by its call's start.
inline std::uint64_t queue_depth(const std::vector<gpu_op>& ops, std::size_t i) {
  std::uint64_t depth = 0;
  for (std::size_t j = 0; j < ops.size(); ++j) {
    const bool before = ops[j].call_start < ops[i].call_start || (ops[j].call_start == ops[i].call_start && j < i);
    if (j != i && launched(ops[j]) && stream_key(ops[j]) == stream_key(ops[i]) && before && ops[j].end > ops[i].call_start) ++depth;
  }
  return depth;
}

/// The median of a column as nsys takes it (`stats`), 0 for none.
inline double nsys_median(const std::vector<std::uint64_t>& v) { return stats(v).median; }

/// Tukey's outliers: values above Q3 + 1.5 (Q3 - Q1), quartiles by nearest rank.
inline std::uint64_t above_fence(const std::vector<std::uint64_t>& v) {
  const double q1 = nearest_rank(v, 0.25), q3 = nearest_rank(v, 0.75), fence = q3 + 1.5 * (q3 - q1);
  std::uint64_t n = 0;
  for (const auto x : v) n += static_cast<double>(x) > fence;
  return n;
}

/// One kernel name's row (HTA `get_cuda_kernel_launch_stats`, docs/diagnosis.md): over its
/// kernels, GPU time (median, total, Tukey outliers); over those with an API call, the call's
/// duration (median, p90, calls above `call_outlier_ns`); over those launched, the delay
/// (median, p90, max, above `delay_outlier_ns`), short kernels (GPU time below the call, or
/// below `assumed_launch_ns` without an API record) and the queue depth (median, max).
inline launch_stats_row launch_row(const std::vector<gpu_op>& ops, string_id name, const diagnosis_options& o) {
  launch_stats_row row;
  row.name = name;
  std::vector<std::uint64_t> durations, calls, delays, queues;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const auto& op = ops[i];
    if (op.kind != op_kind::kernel || op.name != name) continue;
    const std::uint64_t dur = op.end - op.start, call = op.call_end - op.call_start;
    row.launches += 1;
    row.kernel_total_ns += dur;
    durations.push_back(dur);
    if (!launched(op)) continue;
    if (op.has_call) calls.push_back(call), row.call_outliers += call > o.call_outlier_ns;
    delays.push_back(delay_ns(op));
    row.delay_outliers += delay_ns(op) > o.delay_outlier_ns;
    row.short_kernels += dur < (op.has_call ? call : o.assumed_launch_ns);
    queues.push_back(queue_depth(ops, i));
  }
  row.with_call = calls.size();
  row.call_median_ns = nsys_median(calls);
  row.call_p90_ns = nearest_rank(calls, 0.9);
  row.delay_median_ns = nsys_median(delays);
  row.delay_p90_ns = nearest_rank(delays, 0.9);
  row.delay_max_ns = stats(delays).max;
  row.kernel_median_ns = nsys_median(durations);
  row.duration_outliers = above_fence(durations);
  row.queue_median = nsys_median(queues);
  row.queue_max = stats(queues).max;
  return row;
}

/// Launch statistics of the timeline: a row per kernel name (most launches first, then by
/// name id), the totals, and the queue depth at every launched operation's launch (kernels,
/// copies and memsets); call durations come from API records where any operation has one.
inline launch_overview launch_statistics(const std::vector<gpu_op>& ops, const diagnosis_options& o) {
  launch_overview out;
  std::vector<string_id> names;
  std::vector<std::uint64_t> queues;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    out.call_durations_from_api = out.call_durations_from_api || ops[i].has_call;
    if (ops[i].kind == op_kind::kernel) names.push_back(ops[i].name);
    if (launched(ops[i])) queues.push_back(queue_depth(ops, i));
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  for (const auto name : names) out.kernels.push_back(launch_row(ops, name, o));
  for (const auto& row : out.kernels) out.launches += row.launches, out.short_kernels += row.short_kernels;
  std::stable_sort(out.kernels.begin(), out.kernels.end(), [](const launch_stats_row& x, const launch_stats_row& y) { return x.launches > y.launches; });
  out.queue_median = nsys_median(queues);
  out.queue_max = stats(queues).max;
  return out;
}

} // namespace reference
} // namespace v1
} // namespace nvscope

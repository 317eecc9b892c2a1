// nvscope-target: nvscope
#pragma once

/// \file analyze/diagnose/launches.hpp
/// Launch statistics per kernel name, as Holistic Trace Analysis defines them
/// (cuda_kernel_launch_stats): the CPU launch-call duration, the launch delay (GPU start minus
/// the end of the launch call), short kernels (GPU time shorter than their launch call),
/// call and delay outliers (HTA's 50 us and 100 us cut-offs), duration outliers (Tukey), and
/// the queue depth at each launch (operations of the stream launched and not yet ended).
/// Call durations come from the trace's API records; without them each launch record is a
/// call of zero length and the short-kernel test uses `assumed_launch_ns`. n log n.
///
/// \code
///   nvscope::launch_overview l = nvscope::launch_statistics(t, nvscope::attribute(t));
///   for (const auto& k : l.kernels) std::printf("%llu short\n", (unsigned long long)k.short_kernels);
/// \endcode

#include <nvscope/analyze/diagnose/detail/timeline.hpp>
#include <nvscope/analyze/diagnose/options.hpp>
#include <nvscope/analyze/diagnose/results.hpp>

#include <algorithm>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace nvscope {
inline namespace v1 {
namespace detail {
namespace diag {

// Queue depth at each operation's launch, by op index; 0 where the launch time is unknown.
inline std::vector<std::uint32_t> queue_depths(const timeline& tl) {
  std::vector<std::uint32_t> depth(tl.ops.size(), 0), order;
  for (std::uint32_t i = 0; i < tl.ops.size(); ++i)
    if (tl.ops[i].call_start != 0) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](std::uint32_t x, std::uint32_t y) {
    const auto& p = tl.ops[x];
    const auto& q = tl.ops[y];
    if (p.device != q.device) return p.device < q.device;
    if (p.stream != q.stream) return p.stream < q.stream;
    return p.call_start < q.call_start;
  });
  std::vector<timestamp_ns> ends; // running max of ends in launch order, within one stream
  for (std::size_t k = 0, first = 0; k < order.size(); ++k) {
    const auto& op = tl.ops[order[k]];
    if (k == 0 || op.device != tl.ops[order[k - 1]].device || op.stream != tl.ops[order[k - 1]].stream) {
      first = k;
      ends.clear();
    }
    const auto done = std::upper_bound(ends.begin(), ends.end(), op.call_start) - ends.begin();
    depth[order[k]] = static_cast<std::uint32_t>((k - first) - static_cast<std::size_t>(done));
    ends.push_back(ends.empty() ? op.end : std::max(ends.back(), op.end));
  }
  return depth;
}

inline launch_stats_row launch_row(const timeline& tl, const std::vector<std::uint32_t>& ops,
                                   const std::vector<std::uint32_t>& depth, const diagnosis_options& o) {
  launch_stats_row row;
  std::vector<std::uint64_t> calls, delays, durations, queue;
  for (auto i : ops) {
    const gpu_op& op = tl.ops[i];
    const std::uint64_t dur = op.end - op.start;
    durations.push_back(dur);
    row.kernel_total_ns += dur;
    if (op.call_start == 0) continue;
    const std::uint64_t call = op.call_end - op.call_start;
    if (op.has_call) calls.push_back(call), row.with_call += 1;
    const std::uint64_t delay = op.start > op.call_end ? op.start - op.call_end : 0;
    delays.push_back(delay);
    queue.push_back(depth[i]);
    row.short_kernels += dur < (op.has_call ? call : o.assumed_launch_ns);
    row.call_outliers += op.has_call && call > o.call_outlier_ns;
    row.delay_outliers += delay > o.delay_outlier_ns;
  }
  for (auto* v : {&calls, &delays, &durations, &queue}) std::sort(v->begin(), v->end());
  row.launches = ops.size();
  row.call_median_ns = median(calls);
  row.call_p90_ns = quantile(calls, 0.9);
  row.delay_median_ns = median(delays);
  row.delay_p90_ns = quantile(delays, 0.9);
  row.delay_max_ns = delays.empty() ? 0 : delays.back();
  row.kernel_median_ns = median(durations);
  const double fence = upper_fence(durations);
  for (auto d : durations) row.duration_outliers += static_cast<double>(d) > fence;
  row.queue_median = median(queue);
  row.queue_max = queue.empty() ? 0 : queue.back();
  return row;
}

inline launch_overview launch_statistics_of(const timeline& tl, const diagnosis_options& o) {
  launch_overview out;
  const auto depth = queue_depths(tl);
  std::unordered_map<string_id, std::vector<std::uint32_t>> by_name;
  std::vector<std::uint64_t> all_depths;
  for (std::uint32_t i = 0; i < tl.ops.size(); ++i) {
    const gpu_op& op = tl.ops[i];
    out.call_durations_from_api = out.call_durations_from_api || op.has_call;
    if (op.call_start != 0) all_depths.push_back(depth[i]);
    if (op.kind == op_kind::kernel) by_name[tl.t->kernels[op.index].name].push_back(i);
  }
  for (const auto& [name, ops] : by_name) {
    out.kernels.push_back(launch_row(tl, ops, depth, o));
    out.kernels.back().name = name;
    out.launches += ops.size();
    out.short_kernels += out.kernels.back().short_kernels;
  }
  std::sort(out.kernels.begin(), out.kernels.end(), [](const launch_stats_row& x, const launch_stats_row& y) {
    return x.launches != y.launches ? x.launches > y.launches : x.name < y.name;
  });
  std::sort(all_depths.begin(), all_depths.end());
  out.queue_median = median(all_depths);
  out.queue_max = all_depths.empty() ? 0 : all_depths.back();
  return out;
}

} // namespace diag
} // namespace detail

/// Launch statistics of every kernel name in `t` (see the file comment).
inline launch_overview launch_statistics(const trace& t, const attribution& a, const diagnosis_options& o = {}) {
  return detail::diag::launch_statistics_of(detail::diag::build_timeline(t, a, o.window), o);
}

} // namespace v1
} // namespace nvscope

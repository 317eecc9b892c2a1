// nvscope-target: nvscope
#pragma once

/// \file analyze/diagnose/launches.hpp
/// Launch statistics per kernel name, as Holistic Trace Analysis defines them
/// (cuda_kernel_launch_stats): the CPU launch-call duration, the launch delay (GPU start minus
/// the end of the launch call), short kernels (GPU time shorter than their launch call),
/// call and delay outliers (HTA's 50 us and 100 us cut-offs), duration outliers (Tukey), and
/// the queue depth at each launch (operations of the stream launched and not yet ended).
/// Call durations come from the trace's API records; without them each launch record is a
/// call of zero length and the short-kernel test uses `assumed_launch_ns`. Linear: names
/// grouped by a counting sort, medians and percentiles by selection; a stream's launches are
/// sorted only where they are out of order.
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
// Per stream, the launched operations in launch order (sorted only where they are not).
inline scratch_vector<std::uint32_t> queue_depths(const timeline& tl) {
  scratch_vector<std::uint32_t> depth(tl.ops.size(), 0), launched;
  scratch_vector<timestamp_ns> ends; // running max of ends in launch order, within one stream
  const auto by_launch = [&](std::uint32_t x, std::uint32_t y) { return tl.ops[x].call_start < tl.ops[y].call_start; };
  for (std::size_t s = 0; s < tl.by_stream.size(); ++s) {
    launched.clear();
    for (auto i = tl.by_stream.begin(s); i != tl.by_stream.end(s); ++i)
      if (tl.ops[*i].call_start != 0) launched.push_back(*i);
    if (!std::is_sorted(launched.begin(), launched.end(), by_launch))
      std::stable_sort(launched.begin(), launched.end(), by_launch);
    ends.clear();
    std::size_t done = 0; // launches are in order, so the ended ones only grow
    for (const auto i : launched) {
      const auto& op = tl.ops[i];
      while (done < ends.size() && ends[done] <= op.call_start) ++done;
      depth[i] = static_cast<std::uint32_t>(ends.size() - done);
      ends.push_back(ends.empty() ? op.end : std::max(ends.back(), op.end));
    }
  }
  return depth;
}

// The kernels of one name: order[from, to) into tl.ops.
struct op_span {
  const std::uint32_t* from;
  const std::uint32_t* to;
};

// The distributions of one name's kernels, buffers reused from name to name.
struct launch_columns {
  scratch_vector<std::uint64_t> calls, delays, durations, queue;
};

inline std::uint64_t call_ns(const gpu_op& op) noexcept { return op.call_end - op.call_start; }
inline std::uint64_t delay_ns(const gpu_op& op) noexcept { return op.start > op.call_end ? op.start - op.call_end : 0; }

// One pass over the name's kernels: the counts of `row` and the four columns.
inline void gather_launches(const timeline& tl, op_span s, const scratch_vector<std::uint32_t>& depth,
                            const diagnosis_options& o, launch_stats_row& row, launch_columns& c) {
  for (auto* v : {&c.calls, &c.delays, &c.durations, &c.queue}) v->clear();
  for (auto it = s.from; it != s.to; ++it) {
    const gpu_op& op = tl.ops[*it];
    const std::uint64_t dur = op.end - op.start;
    c.durations.push_back(dur);
    row.kernel_total_ns += dur;
    if (op.call_start == 0) continue;
    if (op.has_call) c.calls.push_back(call_ns(op)), row.with_call += 1;
    c.delays.push_back(delay_ns(op));
    c.queue.push_back(depth[*it]);
    row.short_kernels += dur < (op.has_call ? call_ns(op) : o.assumed_launch_ns);
    row.call_outliers += op.has_call && call_ns(op) > o.call_outlier_ns;
    row.delay_outliers += delay_ns(op) > o.delay_outlier_ns;
  }
}

// One row: counts and columns, each column read through order_places (no full sort).
inline launch_stats_row launch_row(const timeline& tl, op_span s, const scratch_vector<std::uint32_t>& depth,
                                   const diagnosis_options& o, launch_columns& c) {
  launch_stats_row row;
  row.launches = static_cast<std::uint64_t>(s.to - s.from);
  gather_launches(tl, s, depth, o, row, c);
  for (auto* v : {&c.calls, &c.delays, &c.queue}) order_places(*v, {0.9});
  order_places(c.durations, {0.25, 0.75});
  row.call_median_ns = median(c.calls);
  row.call_p90_ns = quantile(c.calls, 0.9);
  row.delay_median_ns = median(c.delays);
  row.delay_p90_ns = quantile(c.delays, 0.9);
  row.delay_max_ns = c.delays.empty() ? 0 : c.delays.back();
  row.kernel_median_ns = median(c.durations);
  const double fence = upper_fence(c.durations);
  for (auto d : c.durations) row.duration_outliers += static_cast<double>(d) > fence;
  row.queue_median = median(c.queue);
  row.queue_max = c.queue.empty() ? 0 : c.queue.back();
  return row;
}

inline launch_overview launch_statistics_of(const timeline& tl, const diagnosis_options& o) {
  launch_overview out;
  const auto depth = queue_depths(tl);
  launch_columns columns;
  for (const auto& op : tl.ops) out.call_durations_from_api = out.call_durations_from_api || op.has_call;
  const op_groups by_name = group_ops(
      tl, [&](const gpu_op& op) { return op.kind == op_kind::kernel ? tl.t->kernels[op.index].name : op_groups::skip; },
      tl.t->strings.size());
  for (std::size_t g = 0; g < by_name.size(); ++g) {
    out.kernels.push_back(launch_row(tl, {by_name.begin(g), by_name.end(g)}, depth, o, columns));
    out.kernels.back().name = static_cast<string_id>(by_name.keys[g]);
    out.launches += out.kernels.back().launches;
    out.short_kernels += out.kernels.back().short_kernels;
  }
  std::sort(out.kernels.begin(), out.kernels.end(), [](const launch_stats_row& x, const launch_stats_row& y) {
    return x.launches != y.launches ? x.launches > y.launches : x.name < y.name;
  });
  auto& all = columns.queue;
  all.clear();
  for (std::uint32_t i = 0; i < tl.ops.size(); ++i)
    if (tl.ops[i].call_start != 0) all.push_back(depth[i]);
  order_places(all, {});
  out.queue_median = median(all);
  out.queue_max = all.empty() ? 0 : all.back();
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

// nvscope-target: nvscope
#pragma once

// The findings the verdict can name, each built from the passes' results: its figure, the
// ranges responsible, the kernels behind it and what to try. Internal.

#include <nvscope/analyze/diagnose/detail/timeline.hpp>
#include <nvscope/analyze/diagnose/results.hpp>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace nvscope {
inline namespace v1 {
namespace detail {
namespace diag {

// What the verdict reads, gathered by `diagnose`.
struct verdict_inputs {
  const timeline* tl = nullptr;
  const idle_breakdown* idle = nullptr;
  const launch_overview* launches = nullptr;
  const std::vector<rule_result>* rules = nullptr;
  const step_analysis* steps = nullptr;
};

inline double share_of(std::uint64_t ns, std::uint64_t window) noexcept {
  return window ? static_cast<double>(ns) / static_cast<double>(window) : 0.0;
}

inline std::vector<range_time> op_ranges(const timeline& tl, op_kind kind) {
  range_tally tally(*tl.t);
  for (const auto& op : tl.ops)
    if (op.kind == kind) tally.add(op.owner, op.end - op.start);
  return tally.top(3);
}

inline std::vector<range_time> row_ranges(const timeline& tl, const rule_result& r) {
  range_tally tally(*tl.t);
  for (const auto& row : r.rows) tally.add(row.range, row.duration);
  return tally.top(3);
}

inline std::vector<name_time> top_kernels(const launch_overview& l, bool by_short) {
  std::vector<name_time> out;
  for (const auto& k : l.kernels) out.push_back(name_time{k.name, k.kernel_total_ns, by_short ? k.short_kernels : k.launches});
  std::sort(out.begin(), out.end(), [&](const name_time& x, const name_time& y) {
    if (by_short && x.count != y.count) return x.count > y.count;
    return x.ns != y.ns ? x.ns > y.ns : x.name < y.name;
  });
  if (out.size() > 3) out.resize(3);
  return out;
}

inline finding gap_finding(const verdict_inputs& in, idle_cause c) {
  static constexpr finding_kind kinds[] = {finding_kind::launch_gaps, finding_kind::sync_gaps, finding_kind::host_gaps,
                                           finding_kind::other_gaps};
  static constexpr advice todo[] = {advice::fuse_or_graph, advice::drop_sync, advice::move_host_work,
                                    advice::check_dependencies};
  const auto i = static_cast<int>(c);
  finding f;
  f.kind = kinds[i];
  f.todo = todo[i];
  f.ns = in.idle->cause_ns[i];
  f.count = in.idle->cause_count[i];
  f.ranges = in.idle->cause_ranges[i];
  if (c == idle_cause::launch) f.kernels = top_kernels(*in.launches, false);
  return f;
}

inline finding copy_finding(const verdict_inputs& in) {
  const auto& pageable = (*in.rules)[static_cast<int>(rule_id::pageable_async_copy)];
  finding f;
  if (pageable.matches > 0) {
    f.kind = finding_kind::pageable_copies;
    f.todo = advice::pinned_memory;
    f.ns = pageable.total_ns;
    f.count = pageable.matches;
    f.ranges = row_ranges(*in.tl, pageable);
    return f;
  }
  f.kind = finding_kind::copy_time;
  f.todo = advice::overlap_copies;
  f.ns = in.idle->copy_only_ns;
  f.count = in.tl->t->copies.size();
  f.ranges = op_ranges(*in.tl, op_kind::copy);
  return f;
}

inline finding gpu_finding(const verdict_inputs& in) {
  finding f;
  f.kind = finding_kind::gpu_time;
  f.todo = advice::optimise_kernels;
  f.ns = in.idle->kernel_ns;
  f.count = in.launches->launches;
  f.ranges = op_ranges(*in.tl, op_kind::kernel);
  f.kernels = top_kernels(*in.launches, false);
  return f;
}

inline finding short_kernel_finding(const verdict_inputs& in) {
  finding f;
  f.kind = finding_kind::short_kernels;
  f.todo = advice::fuse_or_graph;
  f.count = in.launches->short_kernels;
  for (const auto& k : in.launches->kernels)
    if (k.short_kernels) f.ns += static_cast<std::uint64_t>(k.kernel_median_ns) * k.short_kernels;
  f.kernels = top_kernels(*in.launches, true);
  f.ranges = op_ranges(*in.tl, op_kind::kernel);
  return f;
}

inline finding sync_call_finding(const verdict_inputs& in) {
  const auto& r = (*in.rules)[static_cast<int>(rule_id::sync_call)];
  finding f;
  f.kind = finding_kind::sync_calls;
  f.ns = r.total_ns;
  f.count = r.matches;
  f.ranges = row_ranges(*in.tl, r);
  double busy = 0.0;
  for (const auto& row : r.rows) busy += row.gpu_busy_percent / 100.0 * static_cast<double>(row.duration);
  f.gpu_busy_share = share_of(static_cast<std::uint64_t>(busy), f.ns);
  f.todo = f.gpu_busy_share >= 0.8 ? advice::none : advice::drop_sync; // waiting on a busy GPU is fine
  return f;
}

inline finding step_finding(const verdict_inputs& in) {
  finding f;
  f.kind = finding_kind::outlier_steps;
  f.todo = advice::inspect_outlier_steps;
  f.count = in.steps->outlier_count;
  range_tally tally(*in.tl->t);
  for (const auto& o : in.steps->outliers) {
    const auto excess = static_cast<double>(o.duration) - in.steps->median_ns;
    f.ns += excess > 0 ? static_cast<std::uint64_t>(excess) : 0;
    tally.add(o.range, o.duration);
  }
  f.ranges = tally.top(3);
  return f;
}

} // namespace diag
} // namespace detail
} // namespace v1
} // namespace nvscope


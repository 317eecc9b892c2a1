// nvscope-target: nvscope
#pragma once

/// \file analyze/verdict.hpp
/// The verdict: what limits the program, by the first matching rule of docs/analysis.md,
/// with the figures that support it. Data only; export/table.hpp's `verdict_text` words it.
///
/// \code
///   auto v = nvscope::verdict_of(report.overall, report.steps, report.kernels_per_step);
///   if (v.kind == nvscope::verdict_kind::sync_bound) { /* remove a synchronisation */ }
/// \endcode

#include <nvscope/analyze/report.hpp>

namespace nvscope {
inline namespace v1 {

/// Rules, first match wins: no GPU work; copies fill at least half of GPU busy time
/// (copy-bound); GPU busy >= 85% (compute-bound); host waits >= 25% of the window
/// (sync-bound); median kernel < 20 us (launch-bound); else host-bound.
/// \code
///   nvscope::verdict_result v = nvscope::verdict_of(r.overall, r.steps, r.kernels_per_step);
/// \endcode
inline verdict_result verdict_of(const activity_metrics& o, std::uint64_t steps, double kernels_per_step) {
  verdict_result v;
  v.gpu_busy_percent = o.gpu_busy_percent;
  v.gpu_idle_percent = 100.0 - o.gpu_busy_percent;
  v.copy_share_of_busy_percent = o.busy_ns ? 100.0 * static_cast<double>(o.copy_ns) / static_cast<double>(o.busy_ns) : 0.0;
  v.copy_compute_overlap_percent = o.copy_compute_overlap_percent;
  v.sync_percent = o.sync_percent;
  v.kernels = o.kernels;
  v.steps = steps;
  v.kernels_per_step = kernels_per_step;
  v.kernel_median_ns = o.kernel_median_ns;
  v.gap_median_ns = o.gap_median_ns;
  if (o.kernels + o.copies + o.memsets == 0) v.kind = verdict_kind::no_gpu_activity;
  else if (o.busy_ns > 0 && 2 * o.copy_ns >= o.busy_ns) v.kind = verdict_kind::copy_bound;
  else if (o.gpu_busy_percent >= 85.0) v.kind = verdict_kind::compute_bound;
  else if (o.sync_percent >= 25.0) v.kind = verdict_kind::sync_bound;
  else if (o.kernels > 0 && o.kernel_median_ns < 20000.0) v.kind = verdict_kind::launch_bound;
  else v.kind = verdict_kind::host_bound;
  return v;
}

} // namespace v1
} // namespace nvscope

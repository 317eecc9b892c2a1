// nvscope-target: nvscope
#pragma once

/// \file analyze/diagnose/verdict.hpp
/// The verdict as data. The window (first GPU operation to the last) splits into kernel time,
/// copy-only time and the four idle causes. With kernels busy at least `gpu_bound_busy` of
/// it, the program is GPU-bound: a host that waits on a busy GPU is waiting for the GPU's
/// work, whatever its syncs say. Otherwise the largest of copy-only time and the idle causes
/// names the class when it holds at least `dominant_share` of the time not spent computing
/// (copy-bound, launch-bound, sync-bound, host-bound; "other" idle gives `mixed`), else
/// `mixed`. Then two or three findings, each with its figure, the ranges responsible and what
/// to try: the class's own, its companion (short kernels for launch-bound; the sync calls
/// for sync-bound and GPU-bound, with the GPU's busy share during the waits), the largest
/// remaining shares of the window (at least 1 %, at least two findings in all), and outlier
/// steps when there are any.
///
/// \code
///   nvscope::diagnosis d = nvscope::diagnose(t, nvscope::attribute(t));
///   if (d.verdict.kind == nvscope::bottleneck::gpu_bound) { /* d.verdict.findings[0].kernels */ }
/// \endcode

#include <nvscope/analyze/diagnose/detail/findings.hpp>
#include <nvscope/analyze/diagnose/detail/timeline.hpp>
#include <nvscope/analyze/diagnose/options.hpp>
#include <nvscope/analyze/diagnosis.hpp>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace nvscope {
inline namespace v1 {
namespace detail {
namespace diag {

// Candidate causes of lost time: 0 copy-only, 1 + idle_cause.
inline std::uint64_t candidate_ns(const idle_breakdown& b, int i) noexcept {
  return i == 0 ? b.copy_only_ns : b.cause_ns[i - 1];
}

inline finding candidate_finding(const verdict_inputs& in, int i) {
  return i == 0 ? copy_finding(in) : gap_finding(in, static_cast<idle_cause>(i - 1));
}

// The kind of candidate_finding(in, i), known without building it (a copy finding reads every
// operation for its ranges).
inline finding_kind candidate_kind(const verdict_inputs& in, int i) {
  if (i != 0) return gap_kind(static_cast<idle_cause>(i - 1));
  return pageable_copies_found(in) ? finding_kind::pageable_copies : finding_kind::copy_time;
}

inline bottleneck classify(const idle_breakdown& b, const diagnosis_options& o, int& largest) {
  largest = 0;
  for (int i = 1; i <= idle_cause_count; ++i)
    if (candidate_ns(b, i) > candidate_ns(b, largest)) largest = i;
  if (b.window_ns == 0) return bottleneck::gpu_bound; // operations, none of any length: no idle either
  if (static_cast<double>(b.kernel_ns) >= o.gpu_bound_busy * static_cast<double>(b.window_ns)) return bottleneck::gpu_bound;
  const auto not_computing = static_cast<double>(b.window_ns - std::min(b.window_ns, b.kernel_ns));
  if (static_cast<double>(candidate_ns(b, largest)) < o.dominant_share * not_computing) return bottleneck::mixed;
  static constexpr bottleneck by_candidate[] = {bottleneck::copy_bound, bottleneck::launch_bound, bottleneck::sync_bound,
                                                bottleneck::host_bound, bottleneck::mixed};
  return by_candidate[largest];
}

// Whether add_unique could take a finding of `kind`: room for it, and none of its kind yet.
inline bool room_for(const std::vector<finding>& out, finding_kind kind) {
  return out.size() < 3 && std::none_of(out.begin(), out.end(), [&](const finding& g) { return g.kind == kind; });
}

inline void add_unique(std::vector<finding>& out, finding f) {
  if (room_for(out, f.kind) && f.ns > 0) out.push_back(std::move(f));
}

// The class's own finding and its companion, the largest remaining shares of the window (at
// least 1 %, and at least one), then outlier steps.
inline std::vector<finding> findings_of(const verdict_inputs& in, bottleneck kind, int largest) {
  std::vector<finding> out;
  const std::uint64_t window = in.idle->window_ns;
  if (kind == bottleneck::gpu_bound) add_unique(out, gpu_finding(in));
  else add_unique(out, candidate_finding(in, largest));
  if (kind == bottleneck::launch_bound) add_unique(out, short_kernel_finding(in));
  if (kind == bottleneck::sync_bound || kind == bottleneck::gpu_bound) add_unique(out, sync_call_finding(in));
  std::vector<int> order;
  for (int i = 0; i <= idle_cause_count; ++i) order.push_back(i);
  std::stable_sort(order.begin(), order.end(),
                   [&](int x, int y) { return candidate_ns(*in.idle, x) > candidate_ns(*in.idle, y); });
  const std::size_t room = in.steps->outlier_count ? 2 : 3;
  for (int i : order)
    if (out.size() < room && (out.size() < 2 || share_of(candidate_ns(*in.idle, i), window) >= 0.01) && room_for(out, candidate_kind(in, i)))
      add_unique(out, candidate_finding(in, i)); // built only where it could be taken
  if (in.steps->outlier_count) add_unique(out, step_finding(in));
  for (auto& f : out) f.share = share_of(f.ns, window);
  return out;
}

inline diagnosis_verdict verdict_of(const verdict_inputs& in, const diagnosis_options& o) {
  diagnosis_verdict v;
  const idle_breakdown& b = *in.idle;
  if (in.tl->ops.empty()) return v;
  v.busy_share = share_of(b.busy_ns, b.window_ns);
  v.kernel_share = share_of(b.kernel_ns, b.window_ns);
  v.copy_only_share = share_of(b.copy_only_ns, b.window_ns);
  for (int i = 0; i < idle_cause_count; ++i) v.cause_share[i] = share_of(b.cause_ns[i], b.window_ns);
  int largest = 0;
  v.kind = classify(b, o, largest);
  v.findings = findings_of(in, v.kind, largest);
  return v;
}

} // namespace diag
} // namespace detail
} // namespace v1
} // namespace nvscope

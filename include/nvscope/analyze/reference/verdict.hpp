// nvscope-target: nvscope
#pragma once

/// \file analyze/reference/verdict.hpp
/// The verdict and its findings, defined plainly from the reference figures of the other
/// passes (docs/diagnosis.md, "Verdict"). Not included by `analysis.hpp`.
///
/// \code
///   #include <nvscope/analyze/reference/diagnosis.hpp>
///   nvscope::diagnosis d = nvscope::reference::diagnose(t, {});
///   bool launch_bound = d.verdict.kind == nvscope::bottleneck::launch_bound;
/// \endcode

#include <nvscope/analyze/diagnose/options.hpp>
#include <nvscope/analyze/diagnosis.hpp>
#include <nvscope/analyze/reference/rules.hpp>
#include <nvscope/analyze/reference/steps.hpp>
#include <nvscope/analyze/reference/timeline.hpp>

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace nvscope {
inline namespace v1 {
namespace reference {

/// What the verdict reads: the timeline and every other figure of the diagnosis.
struct verdict_inputs {
  const trace& t;
  const std::vector<gpu_op>& ops;
  const diagnosis& d;
  const diagnosis_options& o;
};

/// A share of the window, 0 for an empty one.
inline double window_share(std::uint64_t ns, std::uint64_t window) { return window ? static_cast<double>(ns) / static_cast<double>(window) : 0.0; }

/// The three kernel names a finding names, from the launch rows: by GPU time, or by short
/// kernels or launches (then GPU time), then by name.
inline std::vector<name_time> top_kernels(const launch_overview& l, bool by_time, bool by_short) {
  std::vector<name_time> out;
  for (const auto& k : l.kernels) out.push_back({k.name, k.kernel_total_ns, by_short ? k.short_kernels : k.launches});
  std::sort(out.begin(), out.end(), [&](const name_time& x, const name_time& y) {
    if (!by_time && x.count != y.count) return x.count > y.count;
    return x.ns != y.ns ? x.ns > y.ns : x.name < y.name;
  });
  if (out.size() > 3) out.resize(3);
  return out;
}

/// A finding of `kind` with its advice, time and count; its ranges by name from `charges`.
inline finding make_finding(const trace& t, finding_kind kind, advice todo, std::uint64_t ns, std::uint64_t count,
                            const std::vector<std::pair<std::uint32_t, std::uint64_t>>& charges) {
  finding f;
  f.kind = kind, f.todo = todo, f.ns = ns, f.count = count, f.ranges = by_range_name(t, charges, 3);
  return f;
}

/// The owners of the timeline's operations of `kind`, charged their GPU time.
inline std::vector<std::pair<std::uint32_t, std::uint64_t>> owners(const std::vector<gpu_op>& ops, op_kind kind) {
  std::vector<std::pair<std::uint32_t, std::uint64_t>> out;
  for (const auto& op : ops)
    if (op.kind == kind) out.emplace_back(op.owner, op.end - op.start);
  return out;
}

/// A rule's rows' ranges, charged the rows' time.
inline std::vector<std::pair<std::uint32_t, std::uint64_t>> row_ranges(const rule_result& r) {
  std::vector<std::pair<std::uint32_t, std::uint64_t>> out;
  for (const auto& row : r.rows) out.emplace_back(row.range, row.duration);
  return out;
}

/// The finding of a candidate cause of lost time: 0 copy-only time (the pageable-copy rule's
/// calls where it has any, else the copy-only time and the timeline's copies), 1 + an
/// `idle_cause` (its stretches; launch gaps name the most launched kernels).
inline finding candidate(const verdict_inputs& in, int i) {
  const auto& d = in.d;
  if (i == 0) {
    const auto& pageable = d.rules[static_cast<int>(rule_id::pageable_async_copy)];
    if (pageable.matches > 0) return make_finding(in.t, finding_kind::pageable_copies, advice::pinned_memory, pageable.total_ns, pageable.matches, row_ranges(pageable));
    const auto copies = owners(in.ops, op_kind::copy);
    return make_finding(in.t, finding_kind::copy_time, advice::overlap_copies, d.idle.copy_only_ns, copies.size(), copies);
  }
  static constexpr finding_kind kinds[] = {finding_kind::launch_gaps, finding_kind::sync_gaps, finding_kind::host_gaps, finding_kind::other_gaps};
  static constexpr advice todo[] = {advice::fuse_or_graph, advice::drop_sync, advice::move_host_work, advice::check_dependencies};
  finding f;
  f.kind = kinds[i - 1], f.todo = todo[i - 1], f.ns = d.idle.cause_ns[i - 1], f.count = d.idle.cause_count[i - 1], f.ranges = d.idle.cause_ranges[i - 1];
  if (i - 1 == static_cast<int>(idle_cause::launch)) f.kernels = top_kernels(d.launches, false, false);
  return f;
}

/// Candidate `i`'s time: copy-only time, then each cause's.
inline std::uint64_t candidate_ns(const idle_breakdown& b, int i) { return i == 0 ? b.copy_only_ns : b.cause_ns[i - 1]; }

/// The GPU-time finding: kernel time, the kernels' owners, the top kernels by time.
inline finding gpu_finding(const verdict_inputs& in) {
  auto f = make_finding(in.t, finding_kind::gpu_time, advice::optimise_kernels, in.d.idle.kernel_ns, in.d.launches.launches, owners(in.ops, op_kind::kernel));
  f.kernels = top_kernels(in.d.launches, true, false);
  return f;
}

/// Short kernels (launch-bound's companion): per name its median GPU time (truncated) times its
/// short kernels, summed; the top kernels by short kernels.
inline finding short_finding(const verdict_inputs& in) {
  std::uint64_t ns = 0;
  for (const auto& k : in.d.launches.kernels) ns += static_cast<std::uint64_t>(k.kernel_median_ns) * k.short_kernels;
  auto f = make_finding(in.t, finding_kind::short_kernels, advice::fuse_or_graph, ns, in.d.launches.short_kernels, owners(in.ops, op_kind::kernel));
  f.kernels = top_kernels(in.d.launches, false, true);
  return f;
}

/// Device and stream syncs (sync- and GPU-bound's companion): the sync rule's time, calls and
/// ranges, and the GPU's busy share during every matching wait (the waits' busy time, summed
/// and truncated, over their time); no advice when the GPU was busy 80 % of it.
inline finding sync_finding(const verdict_inputs& in) {
  const auto& r = in.d.rules[static_cast<int>(rule_id::sync_call)];
  auto f = make_finding(in.t, finding_kind::sync_calls, advice::none, r.total_ns, r.matches, row_ranges(r));
  double busy = 0.0;
  for (const auto& row : finished(rule_id::sync_call, sync_rows(in.t, in.ops, in.o), ~std::uint32_t{0}).rows) busy += row.gpu_busy_percent / 100.0 * static_cast<double>(row.duration);
  f.gpu_busy_share = window_share(static_cast<std::uint64_t>(busy), f.ns);
  f.todo = f.gpu_busy_share >= 0.8 ? advice::none : advice::drop_sync;
  return f;
}

/// Outlier steps: the time beyond the median of every outlier step (each truncated: the step
/// analysis' excess_ns), their count, and the listed ones' ranges charged their durations.
inline finding step_finding(const verdict_inputs& in) {
  std::vector<std::pair<std::uint32_t, std::uint64_t>> charges;
  for (const auto& os : in.d.steps.outliers) charges.emplace_back(os.range, os.duration);
  return make_finding(in.t, finding_kind::outlier_steps, advice::inspect_outlier_steps, in.d.steps.excess_ns, in.d.steps.outlier_count, charges);
}

/// The class (docs/diagnosis.md, Verdict): GPU-bound when kernel time is at least
/// `gpu_bound_busy` of the window (or the window has no length); else the largest candidate
/// (copy-only time, then each idle cause in order, the first of equals) names it when it holds
/// at least `dominant_share` of the time not computing (window less kernel time): copy-,
/// launch-, sync-, host-bound, or mixed for `other`; below that share, mixed.
inline bottleneck classify(const idle_breakdown& b, const diagnosis_options& o, int& largest) {
  largest = 0;
  for (int i = 1; i <= idle_cause_count; ++i)
    if (candidate_ns(b, i) > candidate_ns(b, largest)) largest = i;
  if (b.window_ns == 0 || static_cast<double>(b.kernel_ns) >= o.gpu_bound_busy * static_cast<double>(b.window_ns)) return bottleneck::gpu_bound;
  const double not_computing = static_cast<double>(b.window_ns - std::min(b.window_ns, b.kernel_ns));
  if (static_cast<double>(candidate_ns(b, largest)) < o.dominant_share * not_computing) return bottleneck::mixed;
  static constexpr bottleneck by_candidate[] = {bottleneck::copy_bound, bottleneck::launch_bound, bottleneck::sync_bound, bottleneck::host_bound, bottleneck::mixed};
  return by_candidate[largest];
}

/// Adds `f` where it has time, there is room (three) and no finding of its kind yet.
inline void add_finding(std::vector<finding>& out, finding f) {
  const bool room = out.size() < 3 && std::none_of(out.begin(), out.end(), [&](const finding& g) { return g.kind == f.kind; });
  if (room && f.ns > 0) out.push_back(std::move(f));
}

/// The findings, in order: the class's own (GPU time, or its candidate's), its companion
/// (short kernels for launch-bound, sync calls for sync- and GPU-bound), then the candidates
/// by time (ties in candidate order) while fewer than three (two with outlier steps) and, past
/// two findings, at least 1 % of the window; outlier steps last. Each with its share.
inline std::vector<finding> findings(const verdict_inputs& in, bottleneck kind, int largest) {
  std::vector<finding> out;
  const auto& b = in.d.idle;
  add_finding(out, kind == bottleneck::gpu_bound ? gpu_finding(in) : candidate(in, largest));
  if (kind == bottleneck::launch_bound) add_finding(out, short_finding(in));
  if (kind == bottleneck::sync_bound || kind == bottleneck::gpu_bound) add_finding(out, sync_finding(in));
  std::vector<int> order{0, 1, 2, 3, 4};
  std::stable_sort(order.begin(), order.end(), [&](int x, int y) { return candidate_ns(b, x) > candidate_ns(b, y); });
  const std::size_t room = in.d.steps.outlier_count ? 2 : 3;
  for (const int i : order)
    if (out.size() < room && (out.size() < 2 || window_share(candidate_ns(b, i), b.window_ns) >= 0.01)) add_finding(out, candidate(in, i));
  if (in.d.steps.outlier_count) add_finding(out, step_finding(in));
  for (auto& f : out) f.share = window_share(f.ns, b.window_ns);
  return out;
}

/// The verdict: nothing without GPU operations; else each share of the window, the class and
/// its findings.
inline diagnosis_verdict verdict(const verdict_inputs& in) {
  diagnosis_verdict v;
  const auto& b = in.d.idle;
  if (in.ops.empty()) return v;
  v.busy_share = window_share(b.busy_ns, b.window_ns);
  v.kernel_share = window_share(b.kernel_ns, b.window_ns);
  v.copy_only_share = window_share(b.copy_only_ns, b.window_ns);
  for (int i = 0; i < idle_cause_count; ++i) v.cause_share[i] = window_share(b.cause_ns[i], b.window_ns);
  int largest = 0;
  v.kind = classify(b, in.o, largest);
  v.findings = findings(in, v.kind, largest);
  return v;
}

} // namespace reference
} // namespace v1
} // namespace nvscope

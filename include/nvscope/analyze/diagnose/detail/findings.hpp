// nvscope-target: nvscope
#pragma once

// The findings the verdict can name, each built from the passes' results: its figure, the
// ranges responsible, the kernels behind it and what to try. Internal.

#include <nvscope/analyze/diagnose/detail/rule_rows.hpp>
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

// What the verdict reads, gathered by `diagnose`.
struct verdict_inputs {
  const timeline* tl = nullptr;
  const idle_breakdown* idle = nullptr;
  const launch_overview* launches = nullptr;
  const std::vector<rule_result>* rules = nullptr;
  const step_analysis* steps = nullptr;
  const diagnosis_options* o = nullptr;
};

inline double share_of(std::uint64_t ns, std::uint64_t window) noexcept {
  return window ? static_cast<double>(ns) / static_cast<double>(window) : 0.0;
}

inline std::vector<range_time> op_ranges(const timeline& tl, op_kind kind) {
  range_tally tally(*tl.t);
  for (const auto& op : tl.ops)
    if (op.kind() == kind) tally.add(tl.owner_of(op), op.end - op.start);
  return tally.top(3);
}

inline std::vector<range_time> row_ranges(const timeline& tl, const rule_result& r) {
  range_tally tally(*tl.t);
  for (const auto& row : r.rows) tally.add(row.range, row.duration);
  return tally.top(3);
}

// Which kernels a finding names: most GPU time, most short kernels, or most launches (the
// candidates for fusing or a graph when the GPU waits between launches).
enum class kernel_rank : std::uint8_t { time, short_kernels, launches };

inline std::vector<name_time> top_kernels(const launch_overview& l, kernel_rank rank) {
  std::vector<name_time> out;
  for (const auto& k : l.kernels)
    out.push_back(name_time{k.name, k.kernel_total_ns, rank == kernel_rank::short_kernels ? k.short_kernels : k.launches});
  std::sort(out.begin(), out.end(), [&](const name_time& x, const name_time& y) {
    if (rank != kernel_rank::time && x.count != y.count) return x.count > y.count;
    return x.ns != y.ns ? x.ns > y.ns : x.name < y.name;
  });
  if (out.size() > 3) out.resize(3);
  return out;
}

// A finding of `kind` with what to try; its figures are the caller's to fill.
inline finding named_finding(finding_kind kind, advice todo) {
  finding f;
  f.kind = kind;
  f.todo = todo;
  return f;
}

inline const rule_result& rule_of(const verdict_inputs& in, rule_id id) { return (*in.rules)[static_cast<int>(id)]; }

// A finding whose time, count and ranges are those of a rule's matching calls.
inline finding rule_finding(const verdict_inputs& in, rule_id id, finding_kind kind, advice todo) {
  const rule_result& r = rule_of(in, id);
  finding f = named_finding(kind, todo);
  f.ns = r.total_ns;
  f.count = r.matches;
  f.ranges = row_ranges(*in.tl, r);
  return f;
}

// A finding whose time is `ns`, spent in `count` records of one kind of GPU work.
inline finding op_finding(const verdict_inputs& in, op_kind op, finding_kind kind, advice todo, std::uint64_t ns,
                          std::uint64_t count) {
  finding f = named_finding(kind, todo);
  f.ns = ns;
  f.count = count;
  f.ranges = op_ranges(*in.tl, op);
  return f;
}

inline finding_kind gap_kind(idle_cause c) noexcept {
  static constexpr finding_kind kinds[] = {finding_kind::launch_gaps, finding_kind::sync_gaps, finding_kind::host_gaps,
                                           finding_kind::other_gaps};
  return kinds[static_cast<int>(c)];
}

inline finding gap_finding(const verdict_inputs& in, idle_cause c) {
  static constexpr advice todo[] = {advice::fuse_or_graph, advice::drop_sync, advice::move_host_work,
                                    advice::check_dependencies};
  const auto i = static_cast<int>(c);
  finding f = named_finding(gap_kind(c), todo[i]);
  f.ns = in.idle->cause_ns[i];
  f.count = in.idle->cause_count[i];
  f.ranges = in.idle->cause_ranges[i];
  if (c == idle_cause::launch) f.kernels = top_kernels(*in.launches, kernel_rank::launches);
  return f;
}

inline bool pageable_copies_found(const verdict_inputs& in) { return rule_of(in, rule_id::pageable_async_copy).matches > 0; }

inline finding copy_finding(const verdict_inputs& in) {
  if (pageable_copies_found(in))
    return rule_finding(in, rule_id::pageable_async_copy, finding_kind::pageable_copies, advice::pinned_memory);
  const timeline& tl = *in.tl;
  const auto copies = static_cast<std::uint64_t>(
      std::count_if(tl.transfers.begin(), tl.transfers.end(), [&](std::uint32_t i) { return tl.ops[i].kind() == op_kind::copy; }));
  return op_finding(in, op_kind::copy, finding_kind::copy_time, advice::overlap_copies, in.idle->copy_only_ns, copies); // the timeline's copies
}

inline finding gpu_finding(const verdict_inputs& in) {
  finding f = op_finding(in, op_kind::kernel, finding_kind::gpu_time, advice::optimise_kernels, in.idle->kernel_ns,
                         in.launches->launches);
  f.kernels = top_kernels(*in.launches, kernel_rank::time);
  return f;
}

inline finding short_kernel_finding(const verdict_inputs& in) {
  std::uint64_t ns = 0;
  for (const auto& k : in.launches->kernels)
    if (k.short_kernels) ns += whole_ns(k.kernel_median_ns) * k.short_kernels;
  finding f = op_finding(in, op_kind::kernel, finding_kind::short_kernels, advice::fuse_or_graph, ns,
                         in.launches->short_kernels);
  f.kernels = top_kernels(*in.launches, kernel_rank::short_kernels);
  return f;
}

// The sync rule's time, calls and ranges, and the GPU's busy share during every matching wait
// (not only the rows kept: where the rule cut them, its rows are made again, longest first).
inline finding sync_call_finding(const verdict_inputs& in) {
  const rule_result& r = rule_of(in, rule_id::sync_call);
  finding f = rule_finding(in, rule_id::sync_call, finding_kind::sync_calls, advice::none);
  rule_result every;
  if (r.matches > r.rows.size()) {
    every.rows = sync_rows(*in.tl, *in.idle, *in.o);
    finish_rule(every, ~std::uint32_t{0});
  }
  double busy = 0.0;
  for (const auto& row : (r.matches > r.rows.size() ? every : r).rows)
    busy += row.gpu_busy_percent / 100.0 * static_cast<double>(row.duration);
  f.gpu_busy_share = share_of(whole_ns(busy), f.ns);
  f.todo = f.gpu_busy_share >= 0.8 ? advice::none : advice::drop_sync; // waiting on a busy GPU is fine
  return f;
}

inline finding step_finding(const verdict_inputs& in) {
  finding f = named_finding(finding_kind::outlier_steps, advice::inspect_outlier_steps);
  f.count = in.steps->outlier_count;
  f.ns = in.steps->excess_ns; // over every outlier, not only the listed ones
  range_tally tally(*in.tl->t);
  for (const auto& o : in.steps->outliers) tally.add(o.range, o.duration);
  f.ranges = tally.top(3);
  return f;
}

} // namespace diag
} // namespace detail
} // namespace v1
} // namespace nvscope


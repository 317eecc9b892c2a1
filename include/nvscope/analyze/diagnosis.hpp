// nvscope-target: nvscope
#pragma once

/// \file analyze/diagnosis.hpp
/// What the diagnosis passes return: numbers, enums and indexes into the trace (ranges by
/// index into `trace::ranges`, names by `string_id`). Every word a person reads is made by
/// export/diagnosis_text.hpp and export/diagnosis_json.hpp.
///
/// \code
///   nvscope::diagnosis d = nvscope::diagnose(t, nvscope::attribute(t), {});
///   if (d.verdict.kind == nvscope::bottleneck::launch_bound) { /* fuse or graph */ }
///   std::uint64_t waited = d.idle.cause_ns[static_cast<int>(nvscope::idle_cause::sync)];
/// \endcode

#include <nvscope/trace.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace nvscope {
inline namespace v1 {

/// Index value meaning "no range", "no record".
inline constexpr std::uint32_t diagnosis_none = no_index;

/// Why the GPU (all streams together) was idle between two operations. nvscope's split of
/// HTA's "host wait": the host waited in a sync, was launching, or was doing other work.
enum class idle_cause : std::uint8_t {
  launch, ///< the next operation was already queued, or the host launched it within `launch_gap_max_ns`
  sync,   ///< the launching thread sat in a synchronisation after the GPU ran dry
  host,   ///< the host launched the next operation later than `launch_gap_max_ns`, not in a sync
  other,  ///< queued yet not started for `launch_gap_max_ns` or more (cross-stream waits, events)
};
inline constexpr int idle_cause_count = 4;

/// Time attributed to one NVTX range name (domain, name), with how many stretches or records.
struct range_time {
  std::uint32_t range = diagnosis_none; ///< one instance, into `trace::ranges` (the longest contribution)
  string_id domain = 0;
  string_id name = 0;
  std::uint64_t ns = 0;
  std::uint64_t count = 0;
};

/// One stream under HTA's definitions (idle_time_breakdown): between two consecutive
/// operations of the stream, host wait when the next one's launch call began after the
/// previous one ended, kernel wait when shorter than `kernel_wait_max_ns`, other otherwise.
struct stream_idle_row {
  std::uint16_t device = 0;
  std::uint32_t stream = 0;
  std::uint64_t operations = 0;
  std::uint64_t busy_ns = 0;
  std::uint64_t idle_ns = 0; ///< first operation's start to last one's end, minus busy
  std::uint64_t host_wait_ns = 0;
  std::uint64_t kernel_wait_ns = 0;
  std::uint64_t other_ns = 0;
};

/// One stretch with no GPU operation running on any stream.
struct idle_stretch {
  timestamp_ns start = 0;
  std::uint64_t duration = 0;
  idle_cause cause = idle_cause::other;
  std::uint32_t thread = diagnosis_none;    ///< the thread that launched the operation ending the stretch
  std::uint32_t range = diagnosis_none;     ///< innermost range open on that thread when the stretch began
  std::uint32_t next_owner = diagnosis_none; ///< range that launched the operation ending the stretch
};

/// GPU time over the window from the first operation's start to the last one's end.
struct idle_breakdown {
  timestamp_ns window_begin = 0;
  timestamp_ns window_end = 0;
  std::uint64_t window_ns = 0;
  std::uint64_t busy_ns = 0;      ///< union of kernels, copies, memsets
  std::uint64_t kernel_ns = 0;    ///< union of kernels and memsets
  std::uint64_t copy_only_ns = 0; ///< copies running with no kernel or memset beside them
  std::uint64_t idle_ns = 0;
  std::uint64_t cause_ns[idle_cause_count] = {0, 0, 0, 0};
  std::uint64_t cause_count[idle_cause_count] = {0, 0, 0, 0};
  std::vector<range_time> cause_ranges[idle_cause_count]; ///< by range at the stretch's start, largest first
  std::vector<stream_idle_row> streams;
  std::vector<idle_stretch> longest; ///< `top_idle` longest stretches
  std::vector<idle_stretch> stretches; ///< every stretch, in time order
};

/// Launch statistics of one kernel name (HTA cuda_kernel_launch_stats, per name).
struct launch_stats_row {
  string_id name = 0;
  std::uint64_t launches = 0;
  std::uint64_t with_call = 0;      ///< launches whose API call (start and end) is in the trace
  double call_median_ns = 0.0;      ///< CPU launch-call duration
  double call_p90_ns = 0.0;
  double delay_median_ns = 0.0;     ///< GPU start minus the end of the launch call
  double delay_p90_ns = 0.0;
  std::uint64_t delay_max_ns = 0;
  double kernel_median_ns = 0.0;
  std::uint64_t kernel_total_ns = 0;
  std::uint64_t short_kernels = 0;  ///< GPU time shorter than the launch call
  std::uint64_t call_outliers = 0;  ///< call longer than `call_outlier_ns`
  std::uint64_t delay_outliers = 0; ///< delay longer than `delay_outlier_ns`
  std::uint64_t duration_outliers = 0; ///< GPU time above Tukey's upper fence of the name
  double queue_median = 0.0;        ///< operations of the stream launched and not yet ended, at launch
  std::uint64_t queue_max = 0;
};

/// Launch statistics of the whole trace.
struct launch_overview {
  bool call_durations_from_api = false; ///< false: launch records only (calls assumed `assumed_launch_ns`)
  std::uint64_t launches = 0;
  std::uint64_t short_kernels = 0;
  std::uint64_t queue_max = 0;
  double queue_median = 0.0;
  std::vector<launch_stats_row> kernels; ///< by launches, most first
};

/// The expert rules (Nsight Systems `nsys analyze`).
enum class rule_id : std::uint8_t {
  pageable_async_copy, ///< cuda_memcpy_async: async copies from or to pageable memory
  sync_copy,           ///< cuda_memcpy_sync: copies issued by a synchronous memcpy call
  sync_memset,         ///< cuda_memset_sync: synchronous memsets of pinned or managed memory
  sync_call,           ///< cuda_api_sync: device and stream synchronisations
  gpu_gap,             ///< gpu_gaps: GPU idle at least `gpu_gap_min_ns`
  low_utilization,     ///< gpu_time_util: chunks of the window below the threshold
};
inline constexpr int rule_count = 6;

/// One row of a rule: the record, its call and the range responsible.
struct rule_row {
  timestamp_ns start = 0;
  std::uint64_t duration = 0;
  std::uint64_t bytes = 0;
  std::uint32_t record = diagnosis_none; ///< into copies, memsets or syncs, by rule; none for gaps and chunks
  string_id call = 0;              ///< API name when the trace has API records
  std::uint32_t range = diagnosis_none;  ///< innermost range on the calling thread (for chunks: most idle)
  std::uint32_t thread = diagnosis_none;
  std::uint32_t stream = 0;
  std::uint16_t device = 0;
  double in_use_percent = 0.0;     ///< low_utilization: summed operation time / chunk (may pass 100)
  double gpu_busy_percent = 0.0;   ///< sync_call: GPU busy during the wait
};

/// The rows of one rule.
struct rule_result {
  rule_id rule = rule_id::pageable_async_copy;
  bool evaluated = true;         ///< false: the trace lacks what the rule needs (API records)
  std::uint64_t matches = 0;     ///< rows before the `rule_rows` cut
  std::uint64_t total_ns = 0;
  std::vector<rule_row> rows;    ///< longest first (chunks: in time order)
};

/// What a step holds that can grow.
enum class component_kind : std::uint8_t { kernel, copy, memset, idle, sync };

/// How much one component of an outlier step grew against the median step.
struct step_growth {
  component_kind kind = component_kind::kernel;
  string_id name = 0;      ///< kernel name; 0 for the other kinds
  double median_ns = 0.0;  ///< median over all steps (0 where a step lacks it)
  std::uint64_t step_ns = 0;
};

/// A step well above the others.
struct outlier_step {
  std::uint32_t range = diagnosis_none; ///< into `trace::ranges`
  std::uint64_t ordinal = 0;      ///< 0-based, in time order
  std::uint64_t duration = 0;
  std::vector<step_growth> grew;
};

/// Step durations (host time of the step ranges).
struct step_analysis {
  std::uint64_t steps = 0;
  double median_ns = 0.0;
  double p90_ns = 0.0;
  std::uint64_t max_ns = 0;
  double fence_ns = 0.0; ///< max(Q3 + 1.5 IQR, median x (1 + step_outlier_min_excess))
  std::uint64_t outlier_count = 0;
  std::uint64_t excess_ns = 0; ///< time beyond the median, each outlier's truncated to whole ns, over every outlier
  std::vector<outlier_step> outliers; ///< the 10 longest outliers, longest first
  /// Step ranges left out of every figure above: they start inside `trace::lossy_steps`
  /// (records were lost while they ran). How many, and the first 10 by start.
  std::uint64_t lossy_steps = 0;
  std::vector<std::uint32_t> lossy_ranges;
};

/// The class the verdict names.
enum class bottleneck : std::uint8_t { none, gpu_bound, launch_bound, host_bound, sync_bound, copy_bound, mixed };

/// What a finding is about.
enum class finding_kind : std::uint8_t {
  gpu_time, copy_time, launch_gaps, sync_gaps, host_gaps, other_gaps, short_kernels, pageable_copies,
  sync_calls, outlier_steps,
};

/// What to try.
enum class advice : std::uint8_t {
  none, optimise_kernels, fuse_or_graph, pinned_memory, overlap_copies, drop_sync, move_host_work,
  check_dependencies, inspect_outlier_steps,
};

/// Time spent by one kernel name.
struct name_time {
  string_id name = 0;
  std::uint64_t ns = 0;
  std::uint64_t count = 0;
};

/// One piece of evidence: its figure and the ranges responsible.
struct finding {
  finding_kind kind = finding_kind::gpu_time;
  advice todo = advice::none;
  std::uint64_t ns = 0;
  double share = 0.0;          ///< of the window
  std::uint64_t count = 0;     ///< stretches, records or steps behind `ns`
  double gpu_busy_share = 0.0; ///< sync_calls: GPU busy during the waits (near 1: waiting on the GPU's work)
  std::vector<range_time> ranges;
  std::vector<name_time> kernels;
};

/// The verdict: a class chosen from the breakdown, then two or three findings.
struct diagnosis_verdict {
  bottleneck kind = bottleneck::none;
  double busy_share = 0.0;
  double kernel_share = 0.0;    ///< kernels and memsets, of the window
  double copy_only_share = 0.0;
  double cause_share[idle_cause_count] = {0, 0, 0, 0}; ///< of the window
  std::vector<finding> findings;
};

/// Durations of one group (a kernel name, a range name, the steps), what `nvscope diff` compares.
struct sample_set {
  std::string name;
  std::uint64_t count = 0;     ///< instances seen
  std::vector<std::uint64_t> ns; ///< sorted; all of them, or `max_samples` evenly spaced order statistics
};

/// The samples a saved summary carries.
struct run_samples {
  std::vector<sample_set> kernels;    ///< by demangled name
  std::vector<sample_set> ranges;     ///< by range label ("name", "domain:name"), host time
  std::vector<sample_set> steps;      ///< one set: every step range, host time
  std::vector<sample_set> ranges_gpu; ///< push/pop ranges that launched GPU work: summed GPU time of that work
  std::vector<sample_set> steps_gpu;  ///< one set: the GPU time of every step that launched work
  std::uint64_t lossy_steps = 0;      ///< step ranges left out of `steps` and `steps_gpu`: they start in trace::lossy_steps
};

/// Everything `diagnose` computes.
struct diagnosis {
  idle_breakdown idle;
  launch_overview launches;
  std::vector<rule_result> rules; ///< one per `rule_id`, in its order
  step_analysis steps;
  diagnosis_verdict verdict;
  run_samples samples;
};

} // namespace v1
} // namespace nvscope

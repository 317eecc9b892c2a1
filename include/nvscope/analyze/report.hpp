// nvscope-target: nvscope
#pragma once

/// \file analyze/report.hpp
/// What analysis returns: the rows of the tables `nsys stats` prints, activity metrics, step
/// figures, a structured verdict and the losses. Numbers and enums only, plus the names nsys
/// uses as keys; every sentence a person reads is made by an exporter (export/table.hpp).
///
/// \code
///   nvscope::analysis_report r = nvscope::analyze(t);
///   if (r.diagnosis.verdict.kind == nvscope::bottleneck::launch_bound) { /* fuse kernels */ }
/// \endcode

#include <nvscope/analyze/stats.hpp>
#include <nvscope/analyze/diagnosis.hpp>
#include <nvscope/trace.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace nvscope {
inline namespace v1 {

/// One row of `cuda_gpu_kern_sum`: kernels grouped by name.
struct kernel_summary_row {
  double time_percent = 0.0; ///< of the total kernel time in the table
  duration_stats time;       ///< count is "Instances"
  std::string name;
};

/// One row of `cuda_gpu_mem_time_sum`: copies by direction, memsets.
struct memop_time_row {
  double time_percent = 0.0;
  duration_stats time;   ///< count is "Count"
  std::string operation; ///< "[CUDA memcpy Host-to-Device]", "[CUDA memset]", ...
};

/// One row of `cuda_gpu_mem_size_sum`, in bytes (the tables print MB = 10^6 bytes).
struct memop_size_row {
  duration_stats bytes;
  std::string operation;
};

/// One row of `nvtx_sum`: host time of NVTX ranges, grouped by name and style.
struct range_summary_row {
  double time_percent = 0.0;
  duration_stats time;
  std::string style; ///< "PushPop" or "StartEnd"
  std::string range; ///< ":name" for push/pop ranges, "domain:name" in a named domain
  std::string name;  ///< the range's name alone
};

/// One row of `nvtx_kern_sum`: kernels launched inside each range (every range of the stack).
struct range_kernel_row {
  std::string range; ///< "domain:name", ":name" in the default domain
  std::string style;
  std::uint64_t pid = 0;
  std::uint64_t tid = 0;
  std::uint64_t range_instances = 0; ///< "NVTX Inst"
  duration_stats time;               ///< count is "Kern Inst"; a kernel under two nested ranges of one name counts twice in the rest, as in nsys
  std::string kernel;
  std::string name; ///< the range's name alone
  /// false for the row of kernels with no launch record: nsys prints its PID and TID empty
  /// (`pid`, `tid` are then 0). Rows of kernels no range encloses have an empty `range` and
  /// `style` and `range_instances` 0.
  bool launched = true;
};

/// One row of `nvtx_gpu_proj_sum`: ranges projected onto the GPU (first op start to last op
/// end of the GPU work launched inside), for ranges that launched any GPU work.
struct gpu_projection_row {
  std::string range;
  std::string style;
  duration_stats projected;           ///< count is "Range Instances"
  std::uint64_t total_range_time = 0; ///< host time of those instances
  std::uint64_t total_gpu_ops = 0;    ///< launches (a graph launch is one op, as in nsys)
  double avg_gpu_ops = 0.0;
  double avg_range_level = 0.0;
  double avg_children = 0.0; ///< children that launched GPU work
  std::string name;          ///< the range's name alone (`range` is nsys's "domain:name" key)
};

/// GPU activity over a window. Definitions (see docs/analysis.md):
/// busy = union of kernel, copy and memset intervals within the window / window;
/// overlap = time a copy and a kernel run at once / union of copy time;
/// sync = union of synchronisation intervals within the window / window;
/// gaps = idle time between consecutive stretches of GPU activity.
struct activity_metrics {
  timestamp_ns window_begin = 0;
  timestamp_ns window_end = 0;
  std::uint64_t window_ns = 0;
  std::uint64_t busy_ns = 0;
  std::uint64_t kernel_ns = 0; ///< union of kernel intervals
  std::uint64_t copy_ns = 0;   ///< union of copy intervals
  std::uint64_t overlap_ns = 0;
  std::uint64_t sync_ns = 0;
  double gpu_busy_percent = 0.0;
  double copy_compute_overlap_percent = 0.0;
  double sync_percent = 0.0;
  std::uint64_t gap_count = 0;
  double gap_median_ns = 0.0;
  double gap_p90_ns = 0.0;
  std::uint64_t kernels = 0;
  std::uint64_t copies = 0;
  std::uint64_t memsets = 0;
  double kernel_median_ns = 0.0;
};

/// Metrics of one range name over its instances (windows = projected windows).
struct range_metrics {
  std::string range;
  std::uint64_t instances = 0;
  std::uint64_t kernels = 0;
  double kernels_per_instance = 0.0;
  activity_metrics activity;
};

/// A kind of loss; export/table.hpp's `loss_text` words each one.
enum class loss_kind : std::uint8_t {
  dropped_records,    ///< collector: CUPTI dropped records (buffers full)
  incomplete_records, ///< collector: records without an end timestamp left out
  unclosed_ranges,    ///< collector: ranges still open when collection stopped
  incomplete_found,   ///< analysis: records without a valid end left out of the summaries
  unclosed_found,     ///< analysis: ranges never closed, closed at the end of the trace
  unattributed,       ///< analysis: GPU records with no launch record
  buffer_errors,      ///< collector: CUPTI buffers not read to their end
  late_buffers,       ///< collector: buffers delivered while no collector was recording
  foreign_releases,   ///< collector: buffers handed back that the pool never lent
  nvtx_too_early,     ///< collector: NVTX started before the collector could route it
  launches_lost,      ///< collector: launch records not kept
  names_itanium,      ///< kernel names (count) demangled without NVIDIA's libcufilt (nsys_spelling.hpp's rules)
  names_mangled,      ///< kernel names (count) left mangled
  bad_step_pattern,   ///< options: `step_pattern` is not a regular expression (the default rule was used)
};

/// One non-zero loss.
struct loss_entry {
  loss_kind kind = loss_kind::dropped_records;
  std::uint64_t count = 0;
};

/// Which start/end ranges a launch belongs to in `nvtx_kern_sum`, `nvtx_gpu_proj_sum` and the
/// per-range figures (docs/analysis.md).
enum class start_end_rule : std::uint8_t {
  nsys,          ///< as nsys: only ranges ended on the thread that opened them (`range_record::closing_thread`)
  opening_thread ///< every start/end range open on the launching thread, wherever it ended
};

/// What the analysis looks at.
/// \code
///   nvscope::analysis_options o;
///   o.step_pattern = "Train step \\d+";   // or o.step_range = "forward" for one exact name
///   o.window = {t0, t1};                 // explicit window; {0, 0}: the default
///   o.kernel_names = nvscope::name_form::base;
/// \endcode
struct analysis_options {
  /// Exactly the name of the range that marks one step. Empty: `step_pattern`, or the default
  /// rule (step_names.hpp: `step_7`, `step 7`, `Step#3`, `iteration 12`, `Train step 4`, ...).
  std::string step_range;
  /// A regular expression (ECMAScript, case-insensitive, whole name) for step names.
  std::string step_pattern;
  /// The window of the overall activity metrics; `end == 0`: the capture window when the
  /// trace has one (first begin to last end), else first to last GPU activity.
  time_window window{};
  /// How kernel names are spelled, and so grouped, in the kernel tables.
  name_form kernel_names = name_form::demangled;
  start_end_rule start_end = start_end_rule::nsys;
  /// `thread` (nsys's, so the tables stay equal to nsys's) or `process` (see attribution_rule).
  attribution_rule attribute = attribution_rule::thread;
};

/// The figures of one step range instance.
struct step_metrics {
  std::uint32_t range = 0; ///< index into trace::ranges
  std::string name;
  std::uint64_t kernels = 0;
  activity_metrics activity; ///< over its projected window
};

/// Kernels launched while no range enclosed the launch (neither a push/pop range credited by
/// the attribution rule nor a start/end range): in nsys's tables they belong to no range. With
/// PyTorch these are mostly the backward pass, launched by autograd's thread.
struct unranged_thread {
  std::uint32_t thread = 0; ///< index into trace::threads
  std::uint64_t os_id = 0;  ///< the thread's TID as nsys prints it (the index when the trace has no such thread)
  std::string name;         ///< from nvtxNameOsThread, or empty
  std::uint64_t kernels = 0;
  std::uint64_t gpu_ns = 0; ///< summed kernel durations
};
struct unranged_kernels {
  attribution_rule credit = attribution_rule::thread; ///< the rule the launches were credited by
  std::uint64_t kernels = 0; ///< valid kernels with a launch record and no range
  std::uint64_t gpu_ns = 0;
  std::vector<unranged_thread> threads; ///< by gpu_ns, largest first (then by thread)
};

/// Everything `analyze` computes.
struct analysis_report {
  std::vector<kernel_summary_row> kernels;     ///< cuda_gpu_kern_sum
  std::vector<memop_time_row> memops_by_time;  ///< cuda_gpu_mem_time_sum
  std::vector<memop_size_row> memops_by_size;  ///< cuda_gpu_mem_size_sum
  std::vector<range_summary_row> ranges;       ///< nvtx_sum
  std::vector<range_kernel_row> range_kernels; ///< nvtx_kern_sum
  std::vector<gpu_projection_row> projections; ///< nvtx_gpu_proj_sum
  activity_metrics overall;
  std::vector<range_metrics> per_range; ///< outermost ranges by name, step ranges as one family
  std::vector<step_metrics> step_details; ///< each step range instance that launched GPU work, in time order
  std::uint64_t steps = 0;
  double kernels_per_step = 0.0;
  /// The diagnosis (issue 11): idle-time breakdown, launch statistics, nsys's expert rules,
  /// step outliers, the verdict with its findings, and the samples `nvscope diff` compares.
  ::nvscope::v1::diagnosis diagnosis;
  loss_counts lost;                   ///< as the producer reported them
  std::uint64_t incomplete_found = 0; ///< records skipped here: no end, or end before start
  std::uint64_t unclosed_found = 0;   ///< ranges never closed (closed at the trace end here)
  std::uint64_t unattributed = 0;     ///< GPU records with no matching launch record
  unranged_kernels unranged;          ///< kernels outside every range, by launching thread
  /// Every non-zero loss, in the order of `loss_kind`; every export words and prints them.
  std::vector<loss_entry> losses;
};

} // namespace v1
} // namespace nvscope

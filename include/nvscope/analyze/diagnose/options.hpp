// nvscope-target: nvscope
#pragma once

/// \file analyze/diagnose/options.hpp
/// The thresholds of the diagnosis passes. Defaults come from the tools that defined each
/// figure (Holistic Trace Analysis, Nsight Systems' expert rules) or are nvscope's own, with
/// the reason; docs/diagnosis.md lists every one with its source.
///
/// \code
///   nvscope::diagnosis_options o;
///   o.gpu_gap_min_ns = 1'000'000;   // report GPU gaps of a millisecond and more (nsys: gap=1)
///   o.step_range = "train_step";
/// \endcode

#include <nvscope/trace.hpp>

#include <cstdint>
#include <string>

namespace nvscope {
inline namespace v1 {

/// What the diagnosis looks at and where its thresholds sit.
struct diagnosis_options {
  /// The range that marks one step; empty: `step`, `step_N`, `step N`, `stepN` (any case),
  /// as `analysis_options::step_range`.
  std::string step_range;
  /// A regular expression for step names, as `analysis_options::step_pattern`.
  std::string step_pattern;
  /// Only what starts inside [begin, end) is diagnosed (operations, syncs, steps, samples);
  /// `end == 0`: the whole trace. As `analysis_options::window`, e.g. to leave out a warm-up.
  time_window window{};
  /// How the reference definitions credit operations to ranges, as `analysis_options::attribute`
  /// (`diagnose(t, a, o)` takes the credit from `a`, the attribution it is given).
  attribution_rule attribute = attribution_rule::thread;

  /// HTA `get_idle_time_breakdown(consecutive_kernel_delay=30)`: a gap between two operations
  /// of one stream shorter than this, with the next one already launched, is "kernel wait".
  std::uint64_t kernel_wait_max_ns = 30;
  /// A gap the host caused (it launched the next operation only after the GPU ran dry) shorter
  /// than this is launch overhead, a longer one is host work. 20'000 ns: the top of HTA's "launch
  /// time on the CPU side is between 5-20 microseconds" (cuda_kernel_launch_stats).
  std::uint64_t launch_gap_max_ns = 20'000;
  /// Idle stretches listed with their ranges, longest first.
  std::uint32_t top_idle = 5;

  /// HTA `get_cuda_kernel_launch_stats(runtime_cutoff=50, launch_delay_cutoff=100)` (us).
  std::uint64_t call_outlier_ns = 50'000;
  std::uint64_t delay_outlier_ns = 100'000;
  /// Launch-call duration assumed when the trace has no API records (HTA: 5-20 microseconds, low end),
  /// for the short-kernel test "GPU time shorter than its launch".
  std::uint64_t assumed_launch_ns = 5'000;

  /// nsys `gpu_gaps` (DEFAULT_GAP = 500, in milliseconds): GPU idle at least this long is a row.
  std::uint64_t gpu_gap_min_ns = 500'000'000;
  /// nsys `gpu_time_util` (DEFAULT_NUM_CHUNKS = 30, DEFAULT_THRESHOLD = 50 %).
  std::uint32_t utilization_chunks = 30;
  double utilization_threshold_percent = 50.0;
  /// nsys `cuda_api_sync` flags cudaDeviceSynchronize and cudaStreamSynchronize; event waits
  /// (cudaEventSynchronize) are nsys's suggested alternative, so they are left out by default.
  bool sync_rule_includes_events = false;
  /// Rows kept per rule, longest first (nsys prints 50 by default).
  std::uint32_t rule_rows = 50;

  /// Steps: an outlier lies above Tukey's upper fence (Q3 + 1.5 IQR) and at least this far
  /// above the median step, so that a tight distribution does not flag 1 % noise.
  double step_outlier_min_excess = 0.10;
  /// What grew in an outlier step: at most this many components, largest growth first.
  std::uint32_t step_growth_rows = 3;

  /// Verdict: with the GPU busy at least this share of the window, removing every idle
  /// stretch would shorten the window by at most a fifth, so GPU work is the lever (nvscope's
  /// choice).
  double gpu_bound_busy = 0.80;
  /// Verdict: one cause of idle time (or copy-only time) must reach this share of the time
  /// not spent computing to name the class; below it, `mixed`.
  double dominant_share = 0.50;

  /// Samples kept per kernel name, range name and for steps (what `nvscope diff` compares);
  /// beyond it, evenly spaced order statistics of all of them (the distribution is kept).
  std::uint32_t max_samples = 4096;
};

} // namespace v1
} // namespace nvscope

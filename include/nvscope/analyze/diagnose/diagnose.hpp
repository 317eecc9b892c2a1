// nvscope-target: nvscope
#pragma once

/// \file analyze/diagnose/diagnose.hpp
/// The diagnosis of a trace in one call: the idle-time breakdown, launch statistics, the
/// expert rules, step outliers, the verdict and the samples `nvscope diff` compares. Each
/// pass is also callable alone (idle_time, launch_statistics, expert_rules, step_outliers,
/// collect_samples); `diagnose` builds the indexed view once and runs them in order.
/// Definitions, thresholds and their sources: docs/diagnosis.md.
///
/// \code
///   #include <nvscope/analyze/diagnose/diagnose.hpp>
///   #include <nvscope/export/diagnosis_text.hpp>
///
///   nvscope::diagnosis d = nvscope::diagnose(t, nvscope::attribute(t));
///   std::fputs(nvscope::diagnosis_text(t, d).c_str(), stdout);
/// \endcode

#include <nvscope/analyze/detail/inlining.hpp>
#include <nvscope/analyze/kernel_runs.hpp>
#include <nvscope/analyze/index.hpp>
#include <nvscope/analyze/diagnose/detail/timeline.hpp>
#include <nvscope/analyze/diagnose/idle.hpp>
#include <nvscope/analyze/diagnose/launches.hpp>
#include <nvscope/analyze/diagnose/options.hpp>
#include <nvscope/analyze/diagnosis.hpp>
#include <nvscope/analyze/diagnose/rules.hpp>
#include <nvscope/analyze/diagnose/samples.hpp>
#include <nvscope/analyze/diagnose/steps.hpp>
#include <nvscope/analyze/diagnose/verdict.hpp>
#include <nvscope/trace.hpp>

#include <vector>

namespace nvscope {
inline namespace v1 {

namespace detail {
namespace diag {

// The rules' and the step tally's readers of the idle walk, together: the walk hands each
// operation and stretch to both.
struct walk_readers {
  rule_readers& rules;
  step_tally& steps;
  NVSCOPE_DETAIL_INLINE void take_op(std::size_t i, const gpu_op& op) {
    rules.take_op(i, op);
    steps.take_op(i, op);
  }
  NVSCOPE_DETAIL_INLINE void take_stretch(const idle_stretch& s) { rules.take_stretch(s); }
  NVSCOPE_DETAIL_INLINE void take_idle(std::uint32_t range, std::uint64_t ns) { steps.take_idle(range, ns); }
};

// diagnose (below); `runs`: the kernels' durations by name, analyze's grouped and sorted once
// (analyze/kernel_runs.hpp) or runs_of's, for the kernel samples; let go once the samples are
// taken, so that their pages serve the timeline. `threads`: the trace's thread table.
inline diagnosis diagnose_with(const trace& t, const attribution& a, const diagnosis_options& o, kernel_runs& runs, const thread_table& threads) {
  const scratch_scope reuse; // the passes' large arrays reuse each other's pages
  diagnosis d;
  known_duration_figures durations; // each kernel name's, read off the samples' sorted runs
  d.samples = samples_of(t, a, o, durations, runs); // first: its arrays are gone before the timeline's, not added to them
  runs = {};
  auto tl = build_timeline(t, a, o.window, threads);
  std::vector<stream_idle_row> streams; // HTA's rows per stream, made on the queue depths' walk
  d.launches = launch_statistics_of(tl, o, durations, streams); // before the idle stretches exist:
                                                                  // its columns reuse pages, not add to them
  tl.by_stream = {}; // read by no pass below (the rows per stream are made): its pages serve the stretches
  rule_readers rules(tl, o);
  step_tally steps(tl, o);
  walk_readers readers{rules, steps};
  d.idle = idle_time_of(tl, o, readers, std::move(streams));
  d.rules = expert_rules_of(tl, d.idle, o, rules);
  d.steps = step_outliers_of(tl, o, steps);
  d.verdict = verdict_of({&tl, &d.idle, &d.launches, &d.rules, &d.steps, &o}, o);
  return d;
}

} // namespace diag
} // namespace detail

/// Every diagnosis pass over `t`; `a` from `attribute(t)`. The timeline's operations are read by
/// one walk for the idle stretches, the utilization chunks and the steps' components, and the
/// stretches are handed to the gap rule and the steps as they are found.
inline diagnosis diagnose(const trace& t, const attribution& a, const diagnosis_options& o = {}) {
  auto runs = detail::diag::runs_of(t, a, o.window);
  return detail::diag::diagnose_with(t, a, o, runs, detail::thread_table(t));
}

} // namespace v1
} // namespace nvscope

// nvscope-target: nvscope
#pragma once

/// \file analyze/analyze.hpp
/// `analyze(trace)`: the pipeline of named passes over one indexed view of the trace. Each
/// pass is a function of its own (index.hpp, summaries.hpp, projection.hpp,
/// range_kernels.hpp, activity.hpp, range_activity.hpp, steps.hpp, losses.hpp, and the diagnosis of diagnose/diagnose.hpp)
/// that a test or a tool can call alone.
///
/// \code
///   nvscope::trace t = session.stop();          // or built by hand
///   nvscope::analysis_report r = nvscope::analyze(t);
///   for (const auto& k : r.kernels) std::printf("%s %llu\n", k.name.c_str(), (unsigned long long)k.time.total);
/// \endcode

#include <nvscope/analyze/activity.hpp>
#include <nvscope/analyze/diagnose/diagnose.hpp>
#include <nvscope/analyze/entry.hpp>
#include <nvscope/analyze/index.hpp>
#include <nvscope/analyze/losses.hpp>
#include <nvscope/analyze/projection.hpp>
#include <nvscope/analyze/range_activity.hpp>
#include <nvscope/analyze/range_kernels.hpp>
#include <nvscope/analyze/report.hpp>
#include <nvscope/analyze/steps.hpp>
#include <nvscope/analyze/summaries.hpp>
#include <nvscope/analyze/unranged.hpp>

#include <stdexcept>

namespace nvscope {
inline namespace v1 {

namespace detail {

// diagnosis_options_for (below) with `runs` (analyze's, or sorted_kernel_runs_of's): the window's
// kernel extremes read off them (analysis_window_of).
inline diagnosis_options diagnosis_options_of(const trace& t, const analysis_options& options, const kernel_runs& runs) {
  diagnosis_options d;
  d.step_range = options.step_range;
  d.step_pattern = options.step_pattern;
  d.window = analysis_window_of(t, options, runs);
  d.attribute = options.attribute;
  return d;
}

} // namespace detail

/// The diagnosis sees what the summaries see: the same step names and the same window.
/// \code
///   auto d = nvscope::diagnose(t, nvscope::attribute(t), nvscope::diagnosis_options_for(t, {}));
/// \endcode
inline diagnosis_options diagnosis_options_for(const trace& t, const analysis_options& options) {
  return detail::diagnosis_options_of(t, options, detail::sorted_kernel_runs_of(t));
}

namespace detail {

// analyze's passes over `x`. `owned`: the same index where analyze made it for this call alone
// (else null): the columns per launch that only the passes before the diagnosis read (each
// launch's owner and open start/end ranges, 12 B a launch) are let go before it, so that the
// timeline and the idle stretches, the peak of memory, take their pages instead of fresh ones.
// `threads`: the trace's thread table (the one the index was made with), for the diagnosis' timeline.
inline analysis_report analyze_indexed(const trace& t, const trace_index& x, const analysis_options& options, trace_index* owned,
                                       const thread_table& threads) {
  detail::check_attribution(t, x.links, "analyze");
  if (x.launch_owner.size() != t.launches.size() || x.group_of.size() != t.ranges.size() || x.kernel_ok.size() != t.kernels.size() ||
      x.start_end_offset.size() != t.launches.size() + 1)
    throw std::invalid_argument("nvscope: analyze: the index is not of this trace (pass index_trace(t) of the same trace)");
  if (x.credit != options.attribute)
    throw std::invalid_argument("nvscope: analyze: the index credits launches by another rule than options.attribute (pass index_trace(t, o.start_end, o.attribute))");
  const detail::scratch_scope reuse; // the passes' large arrays reuse each other's pages
  analysis_report r;
  auto memops = memop_summary(t);
  r.memops_by_time = std::move(memops.by_time);
  r.memops_by_size = std::move(memops.by_size);
  r.ranges = range_summary(t, x);
  const range_projection projection = project_ranges(t, x);
  r.projections = gpu_projection_summary(t, x, projection);
  r.range_kernels = range_kernel_summary(t, x, options.kernel_names);
  auto per_range = range_activity(t, x, projection, options);
  r.per_range = std::move(per_range.per_range);
  r.step_details = std::move(per_range.steps);
  const step_summary steps = step_figures(t, x, options);
  r.steps = steps.steps;
  r.kernels_per_step = steps.kernels_per_step;
  r.unranged = unranged_of(t, x);
  if (owned != nullptr) // read by no pass below (losses_of reads the index's counts)
    for (auto* column : {&owned->launch_owner, &owned->start_end_offset, &owned->start_end_ranges}) record_indexes().swap(*column);
  {
    // The kernels' durations by name, grouped once and sorted once (analyze/kernel_runs.hpp) for
    // the three passes that read them by name; last, so that they are not held through the others.
    auto runs = detail::kernel_runs_of(t, x);
    const diagnosis_options diagnosis_settings = detail::diagnosis_options_of(t, options, runs); // the window found once, for both
    if (options.kernel_names == name_form::demangled) {
      r.kernels = detail::kernel_summary_of(t, runs);
    } else {
      r.kernels = kernel_summary(t, x, options.kernel_names);
      detail::sort_runs(runs);
    }
    r.overall = detail::overall_activity_of(t, diagnosis_settings.window, runs);
    r.diagnosis = detail::diag::diagnose_with(t, x.links, diagnosis_settings, runs, threads);
  }
  r.lost = t.lost;
  r.incomplete_found = x.incomplete_found;
  r.unclosed_found = x.unclosed_found;
  r.unattributed = x.unattributed;
  r.losses = losses_of(t, x, options);
  return r;
}

} // namespace detail

/// `analyze(t, options)` (analyze/entry.hpp) with `x`, the trace's index from
/// `index_trace(t, options.start_end, options.attribute)`: analysed without
/// indexing it again, and `x.links` left for the exports (to_folded, to_chrome_trace take it).
/// An index of another trace throws std::invalid_argument.
/// \code
///   const auto x = nvscope::index_trace(t, o.start_end, o.attribute);
///   auto r = nvscope::analyze(t, x, o);
///   auto folded = nvscope::to_folded(t, {}, x.links);
/// \endcode
inline analysis_report analyze(const trace& t, const trace_index& x, const analysis_options& options) { return detail::analyze_indexed(t, x, options, nullptr, detail::thread_table(t)); }

#if defined(NVSCOPE_IMPLEMENTATION)
// analyze(t, options) (declared in analyze/entry.hpp): indexes the trace
// (`index_trace(t, options.start_end, options.attribute)`), then analyses it.
analysis_report analyze(const trace& t, const analysis_options& options) {
  const detail::scratch_scope reuse; // the index's arrays, too, give their pages to the passes
  const detail::thread_table threads(t); // read once, for the index and the diagnosis' timeline
  auto x = detail::indexed(t, options.start_end, &threads, options.attribute);
  return detail::analyze_indexed(t, x, options, &x, threads);
}
#endif

} // namespace v1
} // namespace nvscope

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

#include <nvscope/analyze/index.hpp>
#include <nvscope/analyze/diagnose/detail/timeline.hpp>
#include <nvscope/analyze/diagnose/idle.hpp>
#include <nvscope/analyze/diagnose/launches.hpp>
#include <nvscope/analyze/diagnose/options.hpp>
#include <nvscope/analyze/diagnose/results.hpp>
#include <nvscope/analyze/diagnose/rules.hpp>
#include <nvscope/analyze/diagnose/samples.hpp>
#include <nvscope/analyze/diagnose/steps.hpp>
#include <nvscope/analyze/diagnose/verdict.hpp>
#include <nvscope/trace.hpp>

namespace nvscope {
inline namespace v1 {

/// Every diagnosis pass over `t`; `a` from `attribute(t)`.
inline diagnosis diagnose(const trace& t, const attribution& a, const diagnosis_options& o = {}) {
  const detail::scratch_scope reuse; // the passes' large arrays reuse each other's pages
  diagnosis d;
  d.samples = collect_samples(t, a, o); // first: its arrays are gone before the timeline's, not added to them
  const auto tl = detail::diag::build_timeline(t, a, o.window);
  d.launches = detail::diag::launch_statistics_of(tl, o); // before the idle stretches exist: its
  d.idle = detail::diag::idle_time_of(tl, o);             // columns reuse pages, not add to them
  d.rules = detail::diag::expert_rules_of(tl, d.idle, o);
  d.steps = detail::diag::step_outliers_of(tl, d.idle, o);
  d.verdict = detail::diag::verdict_of({&tl, &d.idle, &d.launches, &d.rules, &d.steps}, o);
  return d;
}

} // namespace v1
} // namespace nvscope

// nvscope-target: nvscope
#pragma once

/// \file analyze/reference/diagnosis.hpp
/// The diagnosis' figures defined plainly, one short function each, beside the fast passes of
/// analyze/diagnose/: the timeline and idle time (reference/timeline.hpp), launch statistics
/// (reference/launches.hpp), the expert rules (reference/rules.hpp), step outliers and samples
/// (reference/steps.hpp) and the verdict (reference/verdict.hpp). std containers, loops and
/// `std::sort` only; not included by `analysis.hpp`.
/// tests/diagnose/reference_diagnosis_test.cpp holds `diagnose` equal to these, field by field.
///
/// \code
///   #include <nvscope/analyze/reference/diagnosis.hpp>
///   nvscope::diagnosis d = nvscope::reference::diagnose(t, nvscope::diagnosis_options_for(t, {}));
///   auto idle = d.idle.idle_ns;
/// \endcode

#include <nvscope/analyze/diagnose/options.hpp>
#include <nvscope/analyze/diagnosis.hpp>
#include <nvscope/analyze/reference/launches.hpp>
#include <nvscope/analyze/reference/rules.hpp>
#include <nvscope/analyze/reference/steps.hpp>
#include <nvscope/analyze/reference/timeline.hpp>
#include <nvscope/analyze/reference/verdict.hpp>
#include <nvscope/trace.hpp>

namespace nvscope {
inline namespace v1 {
namespace reference {

/// The verdict of `d`, a diagnosis of `t` whose other figures are set, on timeline `ops`.
inline diagnosis_verdict verdict_of(const trace& t, const std::vector<gpu_op>& ops, const diagnosis& d, const diagnosis_options& o) {
  return verdict({t, ops, d, o});
}

/// Every figure of the diagnosis of `t` under `o` (its window and thresholds).
inline diagnosis diagnose(const trace& t, const diagnosis_options& o) {
  diagnosis d;
  const auto ops = timeline(t, o.window, o.attribute);
  d.idle = idle_time(t, ops, o);
  d.launches = launch_statistics(ops, o);
  d.rules = expert_rules(t, ops, d.idle, o);
  d.steps = step_outliers(t, ops, d.idle, o);
  d.samples = collect_samples(t, ops, o);
  d.verdict = verdict_of(t, ops, d, o);
  return d;
}

} // namespace reference
} // namespace v1
} // namespace nvscope

// nvscope-target: nvscope
#pragma once

/// \file analyze/entry.hpp
/// The analysis as a program calls it: `analyze(trace, options)` declared over the report's
/// plain types, so that a file that calls it parses the types alone. Its definition, with the
/// engine behind it, is compiled in the one file of the program that defines
/// `NVSCOPE_IMPLEMENTATION` before including `<nvscope/analysis.hpp>` (docs/analysis.md,
/// "Building"); a program without it fails to link with `undefined reference to
/// nvscope::v1::analyze`.
///
/// \code
///   #define NVSCOPE_IMPLEMENTATION   // in one .cpp of the program only
///   #include <nvscope/analysis.hpp>
///   nvscope::analysis_report r = nvscope::analyze(t);
/// \endcode

#include <nvscope/analyze/attribution.hpp>
#include <nvscope/analyze/report.hpp>
#include <nvscope/trace.hpp>

namespace nvscope {
inline namespace v1 {

/// Computes every summary and metric of `t`. Records with no end (or an end before their
/// start) are skipped and counted; ranges never closed are closed at the end of the trace
/// (as nsys does) and counted; every loss is listed in `losses`.
/// \code
///   nvscope::analysis_options o;
///   o.step_range = "train_step";
///   auto r = nvscope::analyze(t, o);
/// \endcode
analysis_report analyze(const trace& t, const analysis_options& options = {});

} // namespace v1
} // namespace nvscope

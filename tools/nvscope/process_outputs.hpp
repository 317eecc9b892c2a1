#pragma once
// What each profiled process leaves at its end: the files (STEM.txt, .json, .trace.json, ...)
// and the text it prints on stderr (one screen, the full tables or only the files line, as
// --summary says). Plain C++ over the trace and its report, so that the tests reach it
// without a GPU; the injection library calls it once the collector has stopped.

#include "run_options.hpp"

#include <nvscope/analysis.hpp>
#include <nvscope/analyze/step_names.hpp>
#include <nvscope/analyze/totals.hpp>
#include <nvscope/export.hpp>

#include <string>
#include <vector>

namespace nvscope {
inline namespace v1 {
namespace tool {

/// The files one process wrote and what it prints.
struct process_end {
  std::vector<screen_file> files;  ///< written, with their sizes
  std::vector<std::string> errors; ///< one line each
  std::string summary;             ///< printed first: the screen, the full text, or nothing
  std::string files_line;          ///< printed last; empty when the screen lists the files
};

/// Writes the files of `o` for trace `t` (its report `r`, its attribution `a`) and makes
/// what the process prints; `pid` and `why` ("exit", "SIGTERM") name the process in it,
/// `color` says whether the screen is coloured (nvscope::use_color on stderr). `run`: the whole
/// run's running totals, written as the JSON summary's "totals" (what `nvscope merge` merges
/// across ranks); null: those of `t` (run_totals_of).
process_end end_process(const run_options& o, const trace& t, const analysis_report& r, const attribution& a,
                        const std::string& pid, const char* why, bool color, const totals* run = nullptr);

/// `t` folded into running totals (analyze/totals.hpp) with `o`'s step rule.
totals run_totals_of(const run_options& o, const trace& t);

/// The paths of the files, ", " between them (the session note's detail).
std::string path_list(const std::vector<screen_file>& files);

} // namespace tool
} // namespace v1
} // namespace nvscope

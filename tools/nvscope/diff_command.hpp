#pragma once
// `nvscope diff [options] BASE NEW`: compares the samples two saved summaries carry (per
// kernel name, range name and step), prints the change of each median with its bootstrap
// interval, and exits 1 when a regression's whole interval lies above the threshold, 0
// otherwise, 2 on unreadable or mismatched input (one line saying why).

#include <nvscope/analyze/diagnosis.hpp>

#include <string>
#include <string_view>

namespace nvscope {
inline namespace v1 {
namespace tool {

/// argv[0] is the tool, argv[1] "diff". Prints to stdout and stderr; returns the exit status.
int diff_main(int argc, char** argv);

/// The same, with what it prints returned in `out` and `err` (for tests).
int diff_run(int argc, const char* const* argv, std::string& out, std::string& err);

/// Reads the samples of a saved summary (a JSON object with `samples`, or `diagnosis.samples`,
/// as export/diagnosis_json.hpp writes them). On failure returns false and sets `error` to
/// what is wrong and where (`samples.kernels[3].ns[7] is not a non-negative integer`).
bool read_samples(std::string_view text, run_samples& out, std::string& error);

} // namespace tool
} // namespace v1
} // namespace nvscope

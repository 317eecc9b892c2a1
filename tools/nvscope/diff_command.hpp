#pragma once
// `nvscope diff [options] BASE NEW`: compares the samples two saved summaries carry (per
// kernel name, range name and step), prints the change of each median with its bootstrap
// interval, and exits 1 when a regression's whole interval lies above the threshold, 0
// otherwise, 2 on unreadable or mismatched input (one line saying why), and on summaries of
// different GPU models unless --allow-different-devices; names every difference of device,
// driver or nvscope version between the two, one line each.

#include <nvscope/analyze/diagnosis.hpp>

#include <string>
#include <string_view>
#include <vector>

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

/// Where a summary says it came from ("provenance", export/provenance.hpp), as diff compares it.
struct summary_origin {
  bool recorded = false;           ///< the summary has "provenance" (older ones do not)
  std::string nvscope_version;     ///< empty: not known
  std::string driver;              ///< NVIDIA's driver version; empty: not known
  std::vector<std::string> models; ///< each device's name; empty: not known
  std::vector<std::string> uuids;  ///< each device's UUID, in the same order ("" where not known)
};

/// read_samples, and the summary's origin into `origin`.
bool read_summary(std::string_view text, run_samples& out, summary_origin& origin, std::string& error);

/// One line per difference of device, driver or nvscope version between `a` (named `an`)
/// and `b` (`bn`), and one per summary that recorded no provenance; `models_differ` says
/// whether both name their devices and the models differ (diff refuses that by default).
std::vector<std::string> origin_differences(const summary_origin& a, const std::string& an, const summary_origin& b,
                                            const std::string& bn, bool& models_differ);

} // namespace tool
} // namespace v1
} // namespace nvscope

// Instructions each of analyze's passes executes on a synthetic trace, counted by valgrind's
// callgrind (bench/analyze/instructions.sh runs it and writes bench/results/instructions.json).
// A count is exact and the same from run to run for one binary, where this VM's timings move
// 10-20 % between processes: a change of a few percent in one pass, lost in the spread of a
// timing, shows in the count. It says nothing of memory waits or the kernel's page faults, so
// it stands beside the timings (scale.json), never in their place.
//
//   instructions_bench [synthetic|pytorch] [kernels]   (default: synthetic, 2,000,000)
//
// Each pass runs once through a function of its own, named pass_<name> and kept out of line,
// so that callgrind's inclusive count of that function is the pass's; `whole_analyze` is one
// analyze(t) (the index included), as scale_bench times it. Prints the trace's records.
#define NVSCOPE_IMPLEMENTATION // this program's one file with the analysis definitions (docs/analysis.md, "Building")
#include "synthetic_trace.hpp"

#include <nvscope/analysis.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

using namespace nvscope;

volatile std::uint64_t keep_result; // what each pass made, so that it is made

#define NVSCOPE_PASS __attribute__((noinline))

NVSCOPE_PASS trace_index pass_index_trace(const trace& t, const analysis_options& o) { return index_trace(t, o.start_end); }
NVSCOPE_PASS void pass_summaries(const trace& t, const trace_index& x, const analysis_options& o) {
  keep_result = keep_result + kernel_summary(t, x, o.kernel_names).size() + memop_summary(t).by_time.size() + range_summary(t, x).size();
}
NVSCOPE_PASS range_projection pass_projection(const trace& t, const trace_index& x) {
  auto p = project_ranges(t, x);
  keep_result = keep_result + gpu_projection_summary(t, x, p).size();
  return p;
}
NVSCOPE_PASS void pass_range_kernel_summary(const trace& t, const trace_index& x, const analysis_options& o) {
  keep_result = keep_result + range_kernel_summary(t, x, o.kernel_names).size();
}
NVSCOPE_PASS void pass_overall_activity(const trace& t, const analysis_options& o) {
  keep_result = keep_result + overall_activity(t, analysis_window(t, o)).kernels;
}
NVSCOPE_PASS void pass_range_activity(const trace& t, const trace_index& x, const range_projection& p, const analysis_options& o) {
  keep_result = keep_result + range_activity(t, x, p, o).per_range.size();
}
NVSCOPE_PASS void pass_steps_and_losses(const trace& t, const trace_index& x, const analysis_options& o) {
  keep_result = keep_result + step_figures(t, x, o).steps + losses_of(t, x, o).size();
}
NVSCOPE_PASS void pass_diagnose(const trace& t, const trace_index& x, const analysis_options& o) {
  keep_result = keep_result + diagnose(t, x.links, diagnosis_options_for(t, o)).rules.size();
}
NVSCOPE_PASS void whole_analyze(const trace& t) { keep_result = keep_result + analyze(t).range_kernels.size(); }

} // namespace

int main(int argc, char** argv) {
  const std::string shape = argc > 1 ? argv[1] : "synthetic";
  const std::uint64_t kernels = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 2000000;
  if ((shape != "synthetic" && shape != "pytorch") || kernels == 0) {
    std::fprintf(stderr, "usage: instructions_bench [synthetic|pytorch] [kernels > 0]\n");
    return 2;
  }
  const auto t = shape == "synthetic" ? synthetic::make_trace(kernels) : synthetic::per_operator(kernels);
  const analysis_options o;
  {
    const detail::scratch_scope reuse; // as analyze holds one around its passes
    const auto x = pass_index_trace(t, o);
    pass_summaries(t, x, o);
    const auto p = pass_projection(t, x);
    pass_range_kernel_summary(t, x, o);
    pass_overall_activity(t, o);
    pass_range_activity(t, x, p, o);
    pass_steps_and_losses(t, x, o);
    pass_diagnose(t, x, o);
  }
  whole_analyze(t);
  std::printf("%llu\n", static_cast<unsigned long long>(synthetic::records(t)));
  return keep_result == 0 ? 1 : 0;
}

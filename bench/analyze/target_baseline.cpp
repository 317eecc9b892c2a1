// Warm analyze on the synthetic trace at 2 M kernels, for the ratio against the code issue 13 was
// filed on (bench/analyze/target_baseline.sh builds this against that commit's headers too).
//   target_baseline analyze   the whole analyze (what `nvscope::analyze` is at this commit)
//   target_baseline passes    the passes that analyze had at b962f3a: the index, summaries,
//                             projection, nvtx_kern_sum, overall and per-range activity, steps
//                             and losses; no diagnosis (this commit's headers only)
// Prints the median milliseconds of 5 calls after a first one dropped, then the records.
#include "synthetic_trace.hpp"

#include <nvscope/analysis.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

namespace {

volatile std::uint64_t keep_result; // what each call made, so that it is made

#if !defined(NVSCOPE_BASELINE_OLD_HEADERS)
void passes_without_diagnosis(const nvscope::trace& t) {
  using namespace nvscope;
  const analysis_options o;
  const detail::scratch_scope reuse; // as analyze holds one around its passes
  const auto x = index_trace(t, o.start_end);
  keep_result = keep_result + kernel_summary(t, x, o.kernel_names).size() + memop_summary(t).by_time.size() + range_summary(t, x).size();
  const auto p = project_ranges(t, x);
  keep_result = keep_result + gpu_projection_summary(t, x, p).size() + range_kernel_summary(t, x, o.kernel_names).size();
  keep_result = keep_result + overall_activity(t, analysis_window(t, o)).kernels + range_activity(t, x, p, o).per_range.size();
  keep_result = keep_result + step_figures(t, x, o).steps + losses_of(t, x, o).size();
}
#endif

} // namespace

int main(int argc, char** argv) {
  const bool whole = argc > 1 && std::strcmp(argv[1], "analyze") == 0;
  const bool passes = argc > 1 && std::strcmp(argv[1], "passes") == 0;
#if defined(NVSCOPE_BASELINE_OLD_HEADERS)
  if (passes) {
    std::fprintf(stderr, "target_baseline: 'passes' needs this commit's headers\n");
    return 2;
  }
#endif
  if (!whole && !passes) {
    std::fprintf(stderr, "usage: target_baseline analyze|passes\n");
    return 2;
  }
  const auto t = synthetic::make_trace(2000000);
  std::vector<double> ms;
  for (int call = 0; call < 6; ++call) {
    const auto start = std::chrono::steady_clock::now();
#if !defined(NVSCOPE_BASELINE_OLD_HEADERS)
    if (passes) passes_without_diagnosis(t);
    else
#endif
      keep_result = keep_result + nvscope::analyze(t).range_kernels.size();
    const auto stop = std::chrono::steady_clock::now();
    if (call > 0) ms.push_back(std::chrono::duration<double, std::milli>(stop - start).count());
  }
  std::sort(ms.begin(), ms.end());
  std::printf("%.1f %llu\n", ms[ms.size() / 2], static_cast<unsigned long long>(synthetic::records(t)));
  return keep_result == 0 ? 1 : 0;
}

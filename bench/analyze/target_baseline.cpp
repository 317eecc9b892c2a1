// Analyze on the synthetic trace at 2 M kernels, for the ratio against the code issue 13 was
// filed on (bench/analyze/target_baseline.sh builds this against that commit's headers too).
//   target_baseline analyze   the whole analyze (what `nvscope::analyze` is at this commit), warm:
//                             the median of 5 calls after a first one dropped (wall clock)
//   target_baseline passes    the passes that analyze had at b962f3a, warm as above: the index,
//                             summaries, projection, nvtx_kern_sum, overall and per-range
//                             activity, steps and losses; no diagnosis (this commit's headers only)
//   target_baseline fresh     the whole analyze as scale_bench times analyze_records_per_s: the
//                             median of 5 calls from the first, CPU time of this thread (page
//                             faults included)
// Prints the median milliseconds, then the records.
#define NVSCOPE_IMPLEMENTATION // this program's one file with the analysis definitions (docs/analysis.md, "Building")
#include "synthetic_trace.hpp"

#include <nvscope/analysis.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
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

double thread_ms() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

double wall_ms() { return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

} // namespace

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  const bool whole = std::strcmp(mode, "analyze") == 0, passes = std::strcmp(mode, "passes") == 0, fresh = std::strcmp(mode, "fresh") == 0;
#if defined(NVSCOPE_BASELINE_OLD_HEADERS)
  if (passes) {
    std::fprintf(stderr, "target_baseline: 'passes' needs this commit's headers\n");
    return 2;
  }
#endif
  if (!whole && !passes && !fresh) {
    std::fprintf(stderr, "usage: target_baseline analyze|passes|fresh\n");
    return 2;
  }
  const auto t = synthetic::make_trace(2000000);
  const auto clock = fresh ? thread_ms : wall_ms;
  std::vector<double> ms;
  for (int call = fresh ? 1 : 0; call < 6; ++call) { // warm: call 0 is dropped
    const double start = clock();
#if !defined(NVSCOPE_BASELINE_OLD_HEADERS)
    if (passes) passes_without_diagnosis(t);
    else
#endif
      keep_result = keep_result + nvscope::analyze(t).range_kernels.size();
    const double stop = clock();
    if (call > 0) ms.push_back(stop - start);
  }
  std::sort(ms.begin(), ms.end());
  std::printf("%.1f %llu\n", ms[ms.size() / 2], static_cast<unsigned long long>(synthetic::records(t)));
  return keep_result == 0 ? 1 : 0;
}

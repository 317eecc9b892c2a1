// The diagnosis' growth with trace size (label `scale`: in the cpu preset, out of the
// sanitizer presets). Read x13-x17 for x4 records inside diagnose_test's binary on CI's
// loaded machine and x4-x5 alone on a quiet one; two causes, both measured, neither the code:
//  - wall time: a 4 ms run fits in one scheduler slice, a 20 ms run is preempted by every
//    other runnable process (load 8 on 2 cores). Here: CPU time of this thread.
//  - page faults: at 96,000 kernels glibc hands the freed timeline back to the kernel after
//    every run (its trim threshold follows the largest block freed so far, so it depends on
//    what ran before in the process) and the next run faults it in again, at this virtual
//    machine's price; at 24,000 kernels the memory stays. In CPU time that read x7.4-x8.6;
//    with the allocator told to keep freed memory, x4.5. Here: it keeps it, and the best of
//    7 runs is taken, small and large interleaved (the first run warms the heap).
// The diagnosis' large arrays from that heap too, not mapped fresh per call
// (analyze/detail/scratch.hpp maps 4 MiB and more: at 96,000 kernels the timeline, at 24,000
// not, so the large trace alone paid its faults every run and read x6.3); as in
// analyze_scale_test, this binary bounds the work, bench/analyze/scale_bench the faults.
#define NVSCOPE_DETAIL_PLAIN_SCRATCH 1
#include "scenarios.hpp"

#include <nvscope/analyze/diagnose/diagnose.hpp>

#include <doctest/doctest.h>

#include <malloc.h>

#include <algorithm>
#include <climits>
#include <ctime>

using namespace nvscope;

namespace {

double thread_cpu() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// The best of `runs` runs of diagnose on each trace, the two interleaved (a neighbour's load
// falls on both alike); returns large / small.
double ratio(const trace& small, const trace& large, int runs) {
  const attribution a[2] = {attribute(small), attribute(large)}; // the attribution's growth is analyze_scale_test's
  double best[2] = {1e300, 1e300};
  for (int rep = 0; rep < runs; ++rep)
    for (int k = 0; k < 2; ++k) {
      const double start = thread_cpu();
      const auto d = diagnose(k ? large : small, a[k]);
      best[k] = std::min(best[k], thread_cpu() - start);
      CHECK(d.verdict.kind == bottleneck::launch_bound);
    }
  return best[1] / best[0];
}

} // namespace

TEST_CASE("n log n: four times the records take at most 2.3 x 2.3 times as long (CPU time)") {
  mallopt(M_MMAP_MAX, 0);             // every block from the heap, which
  mallopt(M_TRIM_THRESHOLD, INT_MAX); // keeps what is freed: runs after the first are warm
  // Sizes past the caches (a 6,000-kernel trace fits in them and made the ratio x7 on a
  // loaded machine for cache reasons, not complexity).
  const auto small = scenario::launch_bound(400);  // 24,000 kernels
  const auto large = scenario::launch_bound(1600); // 96,000 kernels
  double x = ratio(small, large, 7);
  if (x > 2.3 * 2.3) x = std::min(x, ratio(small, large, 7)); // a noisy neighbour, or the code: once more
  MESSAGE("x4 records: x" << x << " CPU time");
  CHECK(x <= 2.3 * 2.3);
}

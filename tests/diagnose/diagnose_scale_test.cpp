// The diagnosis' growth with trace size (label `scale`: timing bounds, run on an idle machine
// with `ctest --preset scale`; left out of CI's shared 2-core run). Open question (see the
// issue notes): built into diagnose_test's binary, beside the other cases, the ratio read
// x13-x17 on the CI machine, while alone (this binary, or a standalone -O2 program) it read
// x4.1-x5.3 for the same sizes.
#include "scenarios.hpp"

#include <nvscope/analyze/diagnose/diagnose.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>

using namespace nvscope;

TEST_CASE("n log n: four times the records take well under sixteen times as long") {
  auto seconds = [](const trace& t) {
    double best = 1e300;
    const auto a = attribute(t); // the attribution's own growth is analyze_scale_test's
    for (int rep = 0; rep < 5; ++rep) {
      const auto start = std::chrono::steady_clock::now();
      const auto d = diagnose(t, a);
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      CHECK(d.verdict.kind == bottleneck::launch_bound);
      best = std::min(best, s);
    }
    return best;
  };
  // Sizes past the caches (a 6,000-kernel trace fits in them and made the ratio x7 on a
  // loaded machine for cache reasons, not complexity).
  const auto small = scenario::launch_bound(400);  // 24,000 kernels
  const auto large = scenario::launch_bound(1600); // 96,000 kernels
  const double ratio = seconds(large) / seconds(small);
  MESSAGE("x4 records: x" << ratio << " time");
  CHECK(ratio < 12.0);
}


#pragma once
// Run samples as a noisy program gives them: per kernel a median, multiplicative log-normal
// noise (sigma 2 % to 10 %), 1 % of instances slowed 1.5x to 3x (preemption, clocks).
// Shared by the tests and bench/diagnose.

#include <nvscope/analyze/diagnosis.hpp>

#include <cstdint>
#include <algorithm>
#include <random>
#include <string>

namespace noise {

// `kernels` kernel names with `n` instances each; kernel `slow` (if >= 0) scaled by `factor`.
inline nvscope::run_samples run(std::uint64_t seed, int kernels, int n, int slow = -1, double factor = 1.0) {
  static constexpr double sigmas[] = {0.02, 0.05, 0.08, 0.10};
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  nvscope::run_samples s;
  for (int k = 0; k < kernels; ++k) {
    nvscope::sample_set set;
    set.name = "kernel_" + std::to_string(k);
    const double median = 5000.0 * (1 + k * 37 % 200);
    std::lognormal_distribution<double> d(0.0, sigmas[k % 4]);
    for (int i = 0; i < n; ++i) {
      double v = median * d(rng) * (k == slow ? factor : 1.0);
      if (unit(rng) < 0.01) v *= 1.5 + 1.5 * unit(rng);
      set.ns.push_back(static_cast<std::uint64_t>(v));
    }
    set.count = set.ns.size();
    std::sort(set.ns.begin(), set.ns.end());
    s.kernels.push_back(std::move(set));
  }
  return s;
}

} // namespace noise

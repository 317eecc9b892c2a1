// nvscope-target: nvscope
#pragma once

/// \file analyze/step_groups.hpp
/// Steps in groups, for a picture that cannot give each step a bar of its own (a run of
/// 10,000 steps on a screen 1,200 pixels wide): `group_steps` cuts the steps, in time order,
/// into at most `max_groups` runs of consecutive steps, all of one length except the last,
/// and gives each run the extremes and median of its steps' windows, the median of their GPU
/// busy time and how many lie past the outlier fence. Not included by `analysis.hpp`; the
/// steps picture (export/charts_svg.hpp) draws a bar per group. Defined plainly in
/// analyze/reference/step_groups.hpp.
///
/// \code
///   const auto r = nvscope::analyze(t);
///   for (const auto& g : nvscope::group_steps(r.step_details, r.diagnosis.steps.fence_ns, 500))
///     std::printf("steps %zu-%zu: median %.0f ns\n", g.first + 1, g.first + g.count, g.median_ns);
/// \endcode

#include <nvscope/analyze/report.hpp>
#include <nvscope/analyze/stats.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace nvscope {
inline namespace v1 {

/// A run of consecutive steps, drawn as one bar.
struct step_group {
  std::size_t first = 0;        ///< index into the steps of its first step
  std::size_t count = 0;        ///< steps in it
  std::uint64_t min_ns = 0;     ///< the shortest step's window
  double median_ns = 0;         ///< the median window (of an even count: the mean of the middle two)
  std::uint64_t max_ns = 0;     ///< the longest step's window
  double busy_median_ns = 0;    ///< the median of the steps' GPU busy time
  std::uint64_t outliers = 0;   ///< steps whose window is past `fence_ns` (when it is above 0)
};

/// Steps a group holds when `steps` steps go into at most `max_groups` groups: one when they
/// fit (or `max_groups` is 0: no grouping), else the fewest that fit.
inline std::size_t steps_per_group(std::size_t steps, std::size_t max_groups) noexcept {
  if (max_groups == 0 || steps <= max_groups) return 1;
  return (steps + max_groups - 1) / max_groups;
}

/// `steps` (in time order) in groups of `steps_per_group(steps.size(), max_groups)`
/// consecutive steps; linear in the steps (each group's medians by selection).
inline std::vector<step_group> group_steps(const std::vector<step_metrics>& steps, double fence_ns, std::size_t max_groups) {
  const std::size_t per = steps_per_group(steps.size(), max_groups);
  std::vector<step_group> out;
  out.reserve((steps.size() + per - 1) / per);
  std::vector<std::uint64_t> window, busy;
  for (std::size_t first = 0; first < steps.size(); first += per) {
    step_group g;
    g.first = first;
    g.count = std::min(per, steps.size() - first);
    window.clear();
    busy.clear();
    for (std::size_t i = first; i < first + g.count; ++i) {
      const auto& a = steps[i].activity;
      window.push_back(a.window_ns);
      busy.push_back(a.busy_ns);
      if (fence_ns > 0 && static_cast<double>(a.window_ns) > fence_ns) ++g.outliers;
    }
    const auto w = detail::stats_of(window.data(), window.data() + window.size());
    g.min_ns = w.min, g.median_ns = w.median, g.max_ns = w.max;
    g.busy_median_ns = detail::stats_of(busy.data(), busy.data() + busy.size()).median;
    out.push_back(g);
  }
  return out;
}

} // namespace v1
} // namespace nvscope

// nvscope-target: nvscope
#pragma once

/// \file analyze/reference/step_groups.hpp
/// The steps picture's groups defined plainly: nvscope's own figure (nsys's `nvtx_pace`
/// recipe and its notebook plot every iteration and group none; the rule is docs/output.md's,
/// "Pictures"). With N steps and at most M bars, a bar holds k = ceil(N / M) consecutive steps
/// (k = 1 when N <= M or M = 0); step i goes to bar floor(i / k); a bar's figures are the
/// minimum, median (nsys's: the mean of the two middle values of an even count) and maximum
/// of its steps' windows, the median of their GPU busy time, and the count of windows above
/// the fence. Not included by `analysis.hpp`; tests/export/pictures_test.cpp holds
/// `group_steps` equal to it.
///
/// \code
///   #include <nvscope/analyze/reference/step_groups.hpp>
///   auto bars = nvscope::reference::step_groups(r.step_details, r.diagnosis.steps.fence_ns, 500);
/// \endcode

#include <nvscope/analyze/reference/common.hpp>
#include <nvscope/analyze/report.hpp>

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

namespace nvscope {
inline namespace v1 {
namespace reference {

/// One bar of the steps picture.
struct step_group_row {
  std::size_t first = 0, count = 0;
  std::uint64_t min_ns = 0, max_ns = 0, outliers = 0;
  double median_ns = 0, busy_median_ns = 0;
};

/// The bars of `steps` (in time order), at most `max_bars` of them (0: a bar a step).
inline std::vector<step_group_row> step_groups(const std::vector<step_metrics>& steps, double fence_ns, std::size_t max_bars) {
  std::size_t k = 1;
  if (max_bars != 0 && steps.size() > max_bars) {
    k = steps.size() / max_bars;
    if (k * max_bars < steps.size()) ++k;
  }
  std::map<std::size_t, std::vector<std::size_t>> members; // bar -> its steps
  for (std::size_t i = 0; i < steps.size(); ++i) members[i / k].push_back(i);
  std::vector<step_group_row> out;
  for (const auto& [bar, in] : members) {
    std::vector<std::uint64_t> windows, busy;
    step_group_row row;
    row.first = in.front();
    row.count = in.size();
    for (const auto i : in) {
      windows.push_back(steps[i].activity.window_ns);
      busy.push_back(steps[i].activity.busy_ns);
      if (fence_ns > 0 && static_cast<double>(steps[i].activity.window_ns) > fence_ns) ++row.outliers;
    }
    const auto w = stats(windows);
    row.min_ns = w.min, row.median_ns = w.median, row.max_ns = w.max;
    row.busy_median_ns = stats(busy).median;
    out.push_back(row);
  }
  return out;
}

} // namespace reference
} // namespace v1
} // namespace nvscope

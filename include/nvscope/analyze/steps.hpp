// nvscope-target: nvscope
#pragma once

/// \file analyze/steps.hpp
/// Steps: how many step ranges there are and how many kernels were launched inside one
/// (at any depth), on average.
///
/// \code
///   auto s = nvscope::step_figures(t, nvscope::index_trace(t), {});
///   std::printf("%llu steps, %.1f kernels a step\n", (unsigned long long)s.steps, s.kernels_per_step);
/// \endcode

#include <nvscope/analyze/index.hpp>
#include <nvscope/analyze/projection.hpp>
#include <nvscope/analyze/step_names.hpp>

#include <vector>

namespace nvscope {
inline namespace v1 {

namespace detail {

// step_ranges(t, options) read through the index: a range is a step when its group's name names
// one (marks have no group), each group tried once through its first range. The index's 4 bytes
// a range are read, not the 64-byte records. Per-range activity and the step figures take it;
// the diagnosis, which has only the attribution, takes step_ranges(t, options).
inline std::vector<char> step_ranges(const trace& t, const trace_index& x, const analysis_options& options) {
  const step_matcher match(options);
  std::vector<char> of_group(x.group_first.size()), out(t.ranges.size(), 0);
  for (std::size_t g = 0; g < of_group.size(); ++g) of_group[g] = match(t.strings[t.ranges[x.group_first[g]].name]);
  for (std::size_t i = 0; i < out.size() && i < x.group_of.size(); ++i)
    if (x.group_of[i] < of_group.size()) out[i] = of_group[x.group_of[i]];
  return out;
}

} // namespace detail

/// The step figures of a trace.
struct step_summary {
  std::uint64_t steps = 0;          ///< step ranges (marks left out)
  std::uint64_t kernels_in_steps = 0; ///< valid kernels launched inside at least one step range
  double kernels_per_step = 0.0;
};

/// Counts step ranges and the kernels launched inside them (linear: each push/pop range
/// knows whether a step encloses it).
/// \code
///   auto s = nvscope::step_figures(t, x, options);
/// \endcode
inline step_summary step_figures(const trace& t, const trace_index& x, const analysis_options& options) {
  step_summary s;
  const auto nr = t.ranges.size();
  const auto is_step = detail::step_ranges(t, x, options);
  std::vector<char> in_step(nr, 0);
  for (const char c : is_step) s.steps += c;
  if (!s.steps) return s;
  const auto order = detail::deepest_first(t, x);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const auto parent = x.links.parent[*it];
    in_step[*it] = is_step[*it] || (parent != attribution::none && in_step[parent]);
  }
  for (std::size_t i = 0; i < t.kernels.size(); ++i) {
    const auto l = x.links.kernel_launch[i];
    if (!x.kernel_ok[i] || l == attribution::none) continue;
    bool inside = x.launch_owner[l] != attribution::none && in_step[x.launch_owner[l]];
    for (auto e = x.start_end_offset[l]; !inside && e < x.start_end_offset[l + 1]; ++e) inside = is_step[x.start_end_ranges[e]];
    s.kernels_in_steps += inside;
  }
  s.kernels_per_step = static_cast<double>(s.kernels_in_steps) / static_cast<double>(s.steps);
  return s;
}

} // namespace v1
} // namespace nvscope

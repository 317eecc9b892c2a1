// nvscope-target: nvscope
#pragma once

/// \file analyze/losses.hpp
/// The losses pass: every non-zero count of what the collector could not keep
/// (`trace::lost`, every field), of what analysis had to leave out, and of what makes figures
/// differ from nsys's (kernel names not spelled by NVIDIA's demangler, a bad step pattern):
/// one entry each, in the order of `loss_kind`. Export words each entry (`loss_text`).
///
/// \code
///   for (const auto& l : nvscope::losses_of(t, nvscope::index_trace(t), {})) std::printf("%llu\n", (unsigned long long)l.count);
/// \endcode

#include <nvscope/analyze/index.hpp>
#include <nvscope/analyze/report.hpp>
#include <nvscope/analyze/step_names.hpp>

#include <vector>

namespace nvscope {
inline namespace v1 {

static_assert(sizeof(loss_counts) == 8 * sizeof(std::uint64_t),
              "loss_counts gained a field: list it in losses_of and word it in export/table.hpp's loss_text");

namespace detail {

inline std::uint64_t distinct_kernel_names(const trace& t) {
  std::vector<char> seen(t.strings.size() + 1, 0);
  std::uint64_t n = 0;
  for (const auto& k : t.kernels) {
    auto& s = seen[k.name < t.strings.size() ? k.name : t.strings.size()];
    n += !s;
    s = 1;
  }
  return n;
}

} // namespace detail

/// The non-zero losses of the producer's counts and of the analysis' own findings.
/// \code
///   auto losses = nvscope::losses_of(t, nvscope::index_trace(t), options);
/// \endcode
inline std::vector<loss_entry> losses_of(const trace& t, const trace_index& x, const analysis_options& options) {
  const auto& lost = t.lost;
  const auto names = t.kernel_name_spelling == name_spelling::nvidia ? 0 : detail::distinct_kernel_names(t);
  const loss_entry all[] = {
      {loss_kind::dropped_records, lost.dropped_records},
      {loss_kind::incomplete_records, lost.incomplete_records},
      // A range open at stop() is counted by the collector and found again here: one line,
      // the collector's words when it counted them all, else the analysis' finding.
      {loss_kind::unclosed_ranges, lost.unclosed_ranges >= x.unclosed_found ? lost.unclosed_ranges : 0},
      {loss_kind::incomplete_found, x.incomplete_found},
      {loss_kind::unclosed_found, lost.unclosed_ranges >= x.unclosed_found ? 0 : x.unclosed_found},
      {loss_kind::unattributed, x.unattributed},
      {loss_kind::buffer_errors, lost.buffer_errors},
      {loss_kind::late_buffers, lost.late_buffers},
      {loss_kind::foreign_releases, lost.foreign_releases},
      {loss_kind::nvtx_too_early, lost.nvtx_too_early},
      {loss_kind::launches_lost, lost.launches_lost},
      {loss_kind::names_itanium, t.kernel_name_spelling == name_spelling::itanium ? names : 0},
      {loss_kind::names_mangled, t.kernel_name_spelling == name_spelling::mangled ? names : 0},
      {loss_kind::bad_step_pattern, step_matcher(options).error() ? 1u : 0u},
  };
  std::vector<loss_entry> out;
  for (const auto& l : all)
    if (l.count) out.push_back(l);
  return out;
}

} // namespace v1
} // namespace nvscope

// nvscope-target: nvscope
#pragma once

/// \file analyze/losses.hpp
/// The losses pass: every non-zero count of what the collector could not keep
/// (`trace::lost`) and of what analysis had to leave out, one entry each, in a fixed order.
/// Export words each entry (export/table.hpp's `loss_text`).
///
/// \code
///   for (const auto& l : nvscope::losses_of(t.lost, x)) std::printf("%llu\n", (unsigned long long)l.count);
/// \endcode

#include <nvscope/analyze/index.hpp>
#include <nvscope/analyze/report.hpp>

#include <vector>

namespace nvscope {
inline namespace v1 {

/// The non-zero losses of the producer's counts and of the analysis' own findings.
/// \code
///   auto losses = nvscope::losses_of(t.lost, nvscope::index_trace(t));
/// \endcode
inline std::vector<loss_entry> losses_of(const loss_counts& lost, const trace_index& x) {
  const loss_entry all[] = {
      {loss_kind::dropped_records, lost.dropped_records},
      {loss_kind::incomplete_records, lost.incomplete_records},
      {loss_kind::unclosed_ranges, lost.unclosed_ranges},
      {loss_kind::incomplete_found, x.incomplete_found},
      {loss_kind::unclosed_found, x.unclosed_found},
      {loss_kind::unattributed, x.unattributed},
  };
  std::vector<loss_entry> out;
  for (const auto& l : all)
    if (l.count) out.push_back(l);
  return out;
}

} // namespace v1
} // namespace nvscope

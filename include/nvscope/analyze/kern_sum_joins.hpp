// nvscope-target: nvscope
#pragma once

/// \file analyze/kern_sum_joins.hpp
/// Two rows of nsys's `nvtx_kern_sum` query that the range pairs of range_kernels.hpp do not
/// make (reference::nvtx_kern_sum defines both):
/// - the outer join's rows: kernels no range encloses, one row per (launching thread, kernel
///   name) with an empty range and style and NVTX Inst 0, and one per kernel name with no PID
///   or TID for kernels with no launch record;
/// - Kern Inst as `count(DISTINCT kernid)` where two instances of one start/end range (one row)
///   are open at a kernel's launch: the pairs count the kernel once per instance, the times
///   rightly so (every joined row), the count once.
///
/// \code
///   auto rows = nvscope::range_kernel_summary(t, nvscope::index_trace(t)); // both applied
/// \endcode

#include <nvscope/analyze/index.hpp>
#include <nvscope/analyze/names.hpp>
#include <nvscope/analyze/report.hpp>
#include <nvscope/analyze/stats.hpp>
#include <nvscope/analyze/unranged.hpp>
#include <nvscope/trace.hpp>

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace nvscope {
inline namespace v1 {
namespace detail {

// The rows of kernels no range encloses (valid ones only), in the table's order: no launch
// first, then by TID, the larger total first, then by kernel name. Kernels outside every range
// are few beside the rest in a trace with ranges: a map keyed by name is enough.
inline std::vector<range_kernel_row> unranged_kernel_rows(const trace& t, const trace_index& x, name_form form) {
  std::map<std::tuple<bool, std::uint64_t, std::string>, std::vector<std::uint64_t>> durations; // (launched, tid, name)
  for (std::size_t k = 0; k < t.kernels.size(); ++k) {
    if (!x.kernel_ok[k]) continue;
    const auto l = x.links.kernel_launch[k];
    if (l != attribution::none && !encloses_none(x, l)) continue;
    const std::uint64_t tid = l == attribution::none ? 0 : os_thread_id(t, t.launches[l].thread);
    durations[{l != attribution::none, tid, std::string(kernel_name(t, t.kernels[k].name, form))}].push_back(t.kernels[k].end - t.kernels[k].start);
  }
  std::vector<range_kernel_row> out;
  for (const auto& [key, values] : durations) {
    range_kernel_row row;
    row.launched = std::get<0>(key);
    row.pid = t.process_id;
    row.tid = std::get<1>(key);
    row.time = stats_of(values.data(), values.data() + values.size());
    row.kernel = std::get<2>(key);
    out.push_back(std::move(row));
  }
  std::stable_sort(out.begin(), out.end(), [](const range_kernel_row& a, const range_kernel_row& b) {
    return std::make_tuple(a.launched, a.tid, ~a.time.total, a.kernel) < std::make_tuple(b.launched, b.tid, ~b.time.total, b.kernel);
  });
  return out;
}

// Kern Inst counted once per kernel in start/end rows: for each kernel at whose launch two or
// more instances of one start/end range group are open, the extra instances are taken off
// that row's count. Rows are found by (label, TID, kernel name), the keys that make a start/end
// row; nothing is looked up unless such a kernel exists.
inline void count_start_end_kernels_once(const trace& t, const trace_index& x, name_form form, std::vector<range_kernel_row>& rows) {
  std::map<std::tuple<std::string, std::uint64_t, std::string>, std::uint64_t> extra; // (label, tid, name): instances past the first
  std::vector<std::uint32_t> groups;
  for (std::size_t k = 0; k < t.kernels.size(); ++k) {
    const auto l = x.links.kernel_launch[k];
    if (!x.kernel_ok[k] || l == attribution::none || x.start_end_offset[l + 1] - x.start_end_offset[l] < 2) continue;
    groups.assign(x.start_end_ranges.begin() + x.start_end_offset[l], x.start_end_ranges.begin() + x.start_end_offset[l + 1]);
    for (auto& r : groups) r = x.group_of[r];
    std::sort(groups.begin(), groups.end());
    for (std::size_t i = 1; i < groups.size(); ++i) {
      if (groups[i] != groups[i - 1]) continue;
      const auto& first = t.ranges[x.group_first[groups[i]]];
      ++extra[{range_label(t, first), os_thread_id(t, t.launches[l].thread), std::string(kernel_name(t, t.kernels[k].name, form))}];
    }
  }
  if (extra.empty()) return;
  for (auto& row : rows) {
    if (row.style != "StartEnd") continue;
    const auto it = extra.find({row.range, row.tid, row.kernel});
    if (it != extra.end()) row.time.count -= it->second;
  }
}

} // namespace detail
} // namespace v1
} // namespace nvscope

// nvscope-target: nvscope
#pragma once

/// \file trace/totals.hpp
/// The running totals a long run keeps of the records it does not keep raw, as plain data:
/// per kernel name and per range group a `duration_sketch`, one for the steps' wall times,
/// the run's counts and summed durations and every loss count; and `merge`, which combines
/// totals of two windows, processes or ranks into those of their union. Here, in the trace
/// layer, because the collector writes them as it records (collect may read the trace layer,
/// never analyze) and analysis reads them; `fold` and the rows are analysis' (analyze/totals.hpp).

#include <nvscope/trace.hpp>
#include <nvscope/trace/sketch.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace nvscope {
inline namespace v1 {

/// A range group by its strings: nsys's (domain, text, style).
struct range_key {
  std::string domain; ///< empty in the default domain
  std::string name;
  bool push_pop = true; ///< false: a start/end range

  friend bool operator<(const range_key& a, const range_key& b) {
    return std::tie(a.domain, a.name, a.push_pop) < std::tie(b.domain, b.name, b.push_pop);
  }
  friend bool operator==(const range_key& a, const range_key& b) {
    return a.domain == b.domain && a.name == b.name && a.push_pop == b.push_pop;
  }
};

/// The run's counts and summed durations (ns; sums of durations, not unions of intervals).
struct run_totals {
  std::uint64_t kernels = 0, kernel_ns = 0;
  std::uint64_t copies = 0, copy_ns = 0;
  std::uint64_t memsets = 0, memset_ns = 0;
  std::uint64_t syncs = 0, sync_ns = 0;
  std::uint64_t ranges = 0;           ///< ranges folded (marks left out)
  std::uint64_t marks = 0;            ///< NVTX marks folded (the collector's; analysis' `fold` leaves marks out)
  std::uint64_t api_calls = 0, api_ns = 0; ///< runtime and driver API records folded (the collector's)
  loss_counts lost;                   ///< the producers' counts, summed
  std::uint64_t incomplete_found = 0; ///< GPU records and syncs left out: no end, or end before start
  std::uint64_t unclosed_found = 0;   ///< ranges never closed, closed at their trace's end
};

/// Everything kept of the records folded.
struct totals {
  std::map<std::string, duration_sketch> kernels; ///< by kernel name, in the form its producer shows
  std::map<range_key, duration_sketch> ranges;    ///< host time of ranges, by group
  duration_sketch steps;                          ///< wall time of the step ranges
  run_totals run;
};

static_assert(sizeof(loss_counts) == 8 * sizeof(std::uint64_t), "loss_counts gained a field: add it in add_losses");

/// `into` += `from`, field by field.
inline void add_losses(loss_counts& into, const loss_counts& from) noexcept {
  into.dropped_records += from.dropped_records;
  into.incomplete_records += from.incomplete_records;
  into.unclosed_ranges += from.unclosed_ranges;
  into.buffer_errors += from.buffer_errors;
  into.late_buffers += from.late_buffers;
  into.foreign_releases += from.foreign_releases;
  into.nvtx_too_early += from.nvtx_too_early;
  into.launches_lost += from.launches_lost;
}

/// A kernel name's share of one step.
struct step_kernel {
  std::string name;
  std::uint64_t count = 0, ns = 0;
};

/// One step as it ended: what a long run keeps of every step, whether or not its raw records
/// are kept. GPU records belong to the step their launch (or, where the launch is not known
/// yet, their start) falls in; syncs by their start. Durations in ns; sums of durations
/// except `gpu_busy_ns`, the union of its kernels', copies' and memsets' intervals.
struct step_totals {
  std::uint64_t number = 0; ///< 0-based, in the order steps began
  std::string name;
  timestamp_ns begin = 0, end = 0;
  std::uint64_t wall_ns = 0, gpu_busy_ns = 0, kernel_ns = 0, copy_ns = 0, memset_ns = 0, sync_ns = 0;
  std::uint64_t launches = 0;      ///< kernels, copies and memsets launched inside
  loss_counts lost;                ///< losses noticed while it was the step running
  bool lossy = false;              ///< any loss: its figures are not used to judge the run
  bool raw_kept = false;           ///< its raw records were kept (flight recorder) when it ended
  std::vector<step_kernel> top_kernels; ///< its largest kernel names by time, most first
};

/// True when `l` counts any loss.
inline bool any_loss(const loss_counts& l) noexcept {
  return (l.dropped_records | l.incomplete_records | l.unclosed_ranges | l.buffer_errors | l.late_buffers |
          l.foreign_releases | l.nvtx_too_early | l.launches_lost) != 0;
}

/// `into` becomes the totals of both: sketches merged by key, counts and losses added.
/// \code
///   nvscope::totals job;
///   for (const auto& rank : ranks) nvscope::merge(job, rank);
/// \endcode
inline void merge(totals& into, const totals& from) {
  for (const auto& [name, s] : from.kernels) into.kernels[name].merge(s);
  for (const auto& [key, s] : from.ranges) into.ranges[key].merge(s);
  into.steps.merge(from.steps);
  auto& a = into.run;
  const auto& b = from.run;
  a.kernels += b.kernels, a.kernel_ns += b.kernel_ns, a.copies += b.copies, a.copy_ns += b.copy_ns;
  a.memsets += b.memsets, a.memset_ns += b.memset_ns, a.syncs += b.syncs, a.sync_ns += b.sync_ns;
  a.ranges += b.ranges, a.marks += b.marks, a.api_calls += b.api_calls, a.api_ns += b.api_ns;
  a.incomplete_found += b.incomplete_found, a.unclosed_found += b.unclosed_found;
  add_losses(a.lost, b.lost);
}

} // namespace v1
} // namespace nvscope

// nvscope-target: nvscope
#pragma once

/// \file analyze/activity.hpp
/// GPU activity over a window: busy, copy/compute overlap, sync wait, gaps between GPU work
/// (definitions on `activity_metrics`), for the whole analysis window.
///
/// \code
///   auto o = nvscope::overall_activity(t, nvscope::analysis_window(t, {}));
///   std::printf("GPU busy %.1f%%\n", o.gpu_busy_percent);
/// \endcode

#include <nvscope/analyze/intervals.hpp>
#include <nvscope/analyze/report.hpp>
#include <nvscope/analyze/stats.hpp>

#include <algorithm>
#include <limits>
#include <tuple>
#include <vector>

namespace nvscope {
inline namespace v1 {
namespace detail {

// The valid intervals of each kind of record.
struct gpu_intervals {
  interval_list kernels, copies, memsets, syncs;
};

template <class Records>
void take_intervals(const Records& records, interval_list& out) {
  out.reserve(records.size());
  for (const auto& r : records)
    if (valid_interval(r.start, r.end)) out.emplace_back(r.start, r.end);
}

inline gpu_intervals intervals_of(const trace& t) {
  gpu_intervals g;
  auto take = [](const auto& records, interval_list& out) { take_intervals(records, out); };
  take(t.kernels, g.kernels);
  take(t.copies, g.copies);
  take(t.memsets, g.memsets);
  take(t.syncs, g.syncs);
  return g;
}

// The metrics of one window from its intervals (merged here, in place; the kernels already
// where `kernels_merged`); appends its gaps to `gaps`. `medians`: false leaves the kernel and
// gap medians to the caller (per-range rows take them over all their instances at once).
inline activity_metrics activity_of(gpu_intervals& g, timestamp_ns lo, timestamp_ns hi, value_list& gaps, bool medians = true,
                                    bool kernels_merged = false) {
  activity_metrics m;
  m.kernels = g.kernels.size();
  m.copies = g.copies.size();
  m.memsets = g.memsets.size();
  if (medians) m.kernel_median_ns = median_by([&](auto&& f) {
    for (const auto& k : g.kernels) f(k.second - k.first);
  }, g.kernels.size());
  if (!kernels_merged) merge_intervals(g.kernels);
  for (auto* v : {&g.copies, &g.memsets, &g.syncs}) merge_intervals(*v);
  m.window_begin = lo;
  m.window_end = hi > lo ? hi : lo;
  m.window_ns = m.window_end - m.window_begin;
  const auto at = gaps.size();
  // Every GPU record's union: the kernels' with the (few) transfers', walked, not written.
  const auto transfers = union_of(g.copies, g.memsets);
  m.busy_ns = covered_union(g.kernels, transfers, lo, hi, gaps);
  m.kernel_ns = transfers.empty() ? m.busy_ns : covered(g.kernels, lo, hi);
  m.copy_ns = covered(g.copies, lo, hi);
  m.overlap_ns = intersection(g.kernels, g.copies);
  m.sync_ns = covered(g.syncs, lo, hi);
  if (m.window_ns > 0) {
    m.gpu_busy_percent = 100.0 * static_cast<double>(m.busy_ns) / static_cast<double>(m.window_ns);
    m.sync_percent = 100.0 * static_cast<double>(m.sync_ns) / static_cast<double>(m.window_ns);
  }
  std::uint64_t copy_total = 0;
  for (const auto& c : g.copies) copy_total += c.second - c.first;
  if (copy_total > 0) m.copy_compute_overlap_percent = 100.0 * static_cast<double>(m.overlap_ns) / static_cast<double>(copy_total);
  m.gap_count = gaps.size() - at;
  if (medians && m.gap_count) std::tie(m.gap_median_ns, m.gap_p90_ns) = median_and_p90(gaps.data() + at, gaps.data() + gaps.size());
  return m;
}

} // namespace detail

/// The window the overall metrics cover: `options.window` when set; else the capture window
/// when the trace has one (first begin to last end; an unclosed one ends at `trace::finish`);
/// else first to last GPU activity (kernels, copies, memsets).
/// \code
///   nvscope::time_window w = nvscope::analysis_window(t, options);
/// \endcode
inline time_window analysis_window(const trace& t, const analysis_options& options) {
  if (options.window.end != 0) return options.window;
  if (!t.capture_windows.empty()) {
    time_window w{t.capture_windows.front().begin, 0};
    for (const auto& c : t.capture_windows) {
      w.begin = std::min(w.begin, c.begin);
      w.end = std::max(w.end, c.end ? c.end : t.finish);
    }
    if (w.end > w.begin) return w;
  }
  timestamp_ns lo = std::numeric_limits<timestamp_ns>::max(), hi = 0;
  auto extend = [&](const auto& records) {
    for (const auto& r : records)
      if (detail::valid_interval(r.start, r.end)) { lo = std::min(lo, r.start); hi = std::max(hi, r.end); }
  };
  extend(t.kernels);
  extend(t.copies);
  extend(t.memsets);
  return hi == 0 ? time_window{} : time_window{lo, hi};
}

/// GPU activity over `window` (every record counts; busy, kernel, copy and sync time are
/// clipped to the window).
/// \code
///   auto o = nvscope::overall_activity(t, {t.begin, t.finish});
/// \endcode
inline activity_metrics overall_activity(const trace& t, time_window window) {
  auto g = detail::intervals_of(t);
  detail::value_list gaps;
  return detail::activity_of(g, window.begin, window.end, gaps);
}

} // namespace v1
} // namespace nvscope

// nvscope-target: nvscope
#pragma once

/// \file analyze/reference/activity.hpp
/// The activity figures of docs/analysis.md ("Metrics and verdict") as plain definitions: the
/// analysis window, and GPU busy, kernel, copy and sync time, copy/compute overlap and the
/// launch gaps over it (seed 001's metrics). Interval sets are sorted vectors merged by one
/// loop. `analyze()` is tested equal to these (tests/analyze/reference_test.cpp).
///
/// \code
///   #include <nvscope/analyze/reference/activity.hpp>
///   auto w = nvscope::reference::analysis_window(t, {});
///   auto m = nvscope::reference::overall_activity(t, w);
/// \endcode

#include <nvscope/analyze/reference/common.hpp>

#include <algorithm>
#include <utility>
#include <vector>

namespace nvscope {
inline namespace v1 {
namespace reference {

using span = std::pair<timestamp_ns, timestamp_ns>; ///< [first, second)

/// The union of `spans` as disjoint spans in time order: empty spans dropped, spans that
/// overlap or touch joined.
inline std::vector<span> merged(std::vector<span> spans) {
  spans.erase(std::remove_if(spans.begin(), spans.end(), [](const span& s) { return s.second <= s.first; }), spans.end());
  std::sort(spans.begin(), spans.end());
  std::vector<span> out;
  for (const auto& s : spans) {
    if (!out.empty() && s.first <= out.back().second) out.back().second = std::max(out.back().second, s.second);
    else out.push_back(s);
  }
  return out;
}

/// Total length of merged spans, each clipped to [lo, hi).
inline std::uint64_t length(const std::vector<span>& spans, timestamp_ns lo, timestamp_ns hi) {
  std::uint64_t sum = 0;
  for (const auto& s : spans) {
    const auto a = std::max(s.first, lo), b = std::min(s.second, hi);
    if (b > a) sum += b - a;
  }
  return sum;
}

/// Length of the intersection of two merged span sets.
inline std::uint64_t overlap(const std::vector<span>& a, const std::vector<span>& b) {
  std::uint64_t sum = 0;
  for (const auto& x : a)
    for (const auto& y : b)
      if (std::min(x.second, y.second) > std::max(x.first, y.first)) sum += std::min(x.second, y.second) - std::max(x.first, y.first);
  return sum;
}

/// The [start, end) spans of the records with a valid end.
template <class Records>
std::vector<span> spans_of(const Records& records) {
  std::vector<span> out;
  for (const auto& r : records)
    if (valid(r.start, r.end)) out.emplace_back(r.start, r.end);
  return out;
}

/// The window the overall figures cover: `options.window` when set; else the capture windows'
/// first begin to last end (an unclosed one ends at `trace::finish`) when that is not empty;
/// else first start to last end of the kernels, copies and memsets with a valid end.
inline time_window analysis_window(const trace& t, const analysis_options& options) {
  if (options.window.end != 0) return options.window;
  if (!t.capture_windows.empty()) {
    time_window w{t.capture_windows.front().begin, 0};
    for (const auto& c : t.capture_windows) w.begin = std::min(w.begin, c.begin), w.end = std::max(w.end, c.end ? c.end : t.finish);
    if (w.end > w.begin) return w;
  }
  std::vector<span> all = spans_of(t.kernels);
  for (const auto& s : spans_of(t.copies)) all.push_back(s);
  for (const auto& s : spans_of(t.memsets)) all.push_back(s);
  if (all.empty()) return {};
  time_window w{all.front().first, all.front().second};
  for (const auto& s : all) w.begin = std::min(w.begin, s.first), w.end = std::max(w.end, s.second);
  return w.end == 0 ? time_window{} : w;
}

/// GPU activity over `window` (`activity_metrics`' definitions): busy, kernel, copy and sync
/// time are unions clipped to the window; the overlap of kernels and copies, the copy time it
/// is a share of, the gaps between the busy union's spans and the counts and kernel median
/// take every record, inside the window or not.
inline activity_metrics overall_activity(const trace& t, time_window window) {
  activity_metrics m;
  const auto lo = window.begin, hi = window.end;
  const auto kernels = spans_of(t.kernels), copies = spans_of(t.copies), memsets = spans_of(t.memsets);
  std::vector<span> all = kernels;
  all.insert(all.end(), copies.begin(), copies.end());
  all.insert(all.end(), memsets.begin(), memsets.end());
  const auto busy = merged(all), kernel_union = merged(kernels), copy_union = merged(copies), sync_union = merged(spans_of(t.syncs));
  m.window_begin = lo;
  m.window_end = std::max(hi, lo);
  m.window_ns = m.window_end - m.window_begin;
  m.busy_ns = length(busy, lo, hi);
  m.kernel_ns = length(kernel_union, lo, hi);
  m.copy_ns = length(copy_union, lo, hi);
  m.sync_ns = length(sync_union, lo, hi);
  m.overlap_ns = overlap(kernel_union, copy_union);
  const auto copy_total = length(copy_union, 0, ~timestamp_ns{0});
  if (m.window_ns > 0) m.gpu_busy_percent = percent(m.busy_ns, m.window_ns), m.sync_percent = percent(m.sync_ns, m.window_ns);
  if (copy_total > 0) m.copy_compute_overlap_percent = percent(m.overlap_ns, copy_total);
  std::vector<std::uint64_t> gaps;
  for (std::size_t i = 1; i < busy.size(); ++i) gaps.push_back(busy[i].first - busy[i - 1].second);
  m.gap_count = gaps.size();
  if (!gaps.empty()) m.gap_median_ns = stats(gaps).median, m.gap_p90_ns = nearest_rank(gaps, 0.9);
  std::vector<std::uint64_t> durations;
  for (const auto& k : t.kernels)
    if (valid(k.start, k.end)) durations.push_back(k.end - k.start);
  m.kernels = durations.size();
  m.copies = copies.size();
  m.memsets = memsets.size();
  if (!durations.empty()) m.kernel_median_ns = stats(durations).median;
  return m;
}

} // namespace reference
} // namespace v1
} // namespace nvscope

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

#include <nvscope/analyze/detail/inlining.hpp>
#include <nvscope/analyze/kernel_runs.hpp>
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

// The figures of one window that its merged copies and syncs and its gaps gaps[at, end) give,
// with busy and overlap time already in `m` (the gap median and p90 left to the caller).
inline void window_figures(const gpu_intervals& g, timestamp_ns lo, timestamp_ns hi, const value_list& gaps, std::size_t at,
                           activity_metrics& m) noexcept {
  m.window_begin = lo;
  m.window_end = hi > lo ? hi : lo;
  m.window_ns = m.window_end - m.window_begin;
  m.copy_ns = covered(g.copies, lo, hi);
  m.sync_ns = covered(g.syncs, lo, hi);
  if (m.window_ns > 0) {
    m.gpu_busy_percent = 100.0 * static_cast<double>(m.busy_ns) / static_cast<double>(m.window_ns);
    m.sync_percent = 100.0 * static_cast<double>(m.sync_ns) / static_cast<double>(m.window_ns);
  }
  std::uint64_t copy_total = 0;
  for (const auto& c : g.copies) copy_total += c.second - c.first;
  if (copy_total > 0) m.copy_compute_overlap_percent = 100.0 * static_cast<double>(m.overlap_ns) / static_cast<double>(copy_total);
  m.gap_count = gaps.size() - at;
}

// The gaps' median and p90 (nearest rank) of [first, last), into `m`.
inline void gap_figures(const std::uint64_t* first, const std::uint64_t* last, activity_metrics& m) noexcept {
  if (first == last) return;
  const auto q = quantiles_of(first, last, {0.9});
  m.gap_median_ns = q.median;
  m.gap_p90_ns = q.quantiles[0];
}

// The metrics of one window from its intervals (merged here, in place); appends its gaps to
// `gaps`. The overall activity's path where the kernels come out of start order. `runs`
// (sorted): the kernels' durations, their median read across them.
inline activity_metrics activity_of(gpu_intervals& g, timestamp_ns lo, timestamp_ns hi, value_list& gaps, const kernel_runs& runs) {
  activity_metrics m;
  m.kernels = g.kernels.size();
  m.copies = g.copies.size();
  m.memsets = g.memsets.size();
  m.kernel_median_ns = median_of_runs(runs);
  for (auto* v : {&g.kernels, &g.copies, &g.memsets, &g.syncs}) merge_intervals(*v);
  const auto at = gaps.size();
  // Every GPU record's union: the kernels' with the (few) transfers', walked, not written.
  const auto transfers = union_of(g.copies, g.memsets);
  m.busy_ns = covered_union(g.kernels, transfers, lo, hi, gaps);
  m.kernel_ns = transfers.empty() ? m.busy_ns : covered(g.kernels, lo, hi);
  m.overlap_ns = intersection(g.kernels, g.copies);
  window_figures(g, lo, hi, gaps, at, m);
  gap_figures(gaps.data() + at, gaps.data() + gaps.size(), m);
  return m;
}

// The kernels' union, merged as their intervals come in start order, feeding the busy union with
// the transfers (their intervals with earlier starts first, as covered_union takes them), the
// kernel time, and the overlap with the copies (intersection's walk, one side fed). The next
// transfer's and the next copy's starts are kept at hand: most merged intervals meet neither,
// and cost two compares for them, not a walk of each list.
class kernel_union_sink {
 public:
  kernel_union_sink(const interval_list& transfers, const interval_list& copies, timestamp_ns lo, timestamp_ns hi, value_list& gaps)
      : transfers_(transfers), copies_(copies), s_{lo, hi, {0, 0}, union_walk(lo, hi, gaps), 0, start_at(transfers, 0), start_at(copies, 0)} {}
  // Takes intervals 0, 1, ... n - 1 in turn: `next(j, x)` sets x to the j-th and says whether it
  // counts (it may do more with the j-th: the caller's reading of its record). Those that count
  // and are not empty must come in start order: returns the first that does not (taking
  // nothing of it or after it: the caller starts over another way), else n.
  template <class Next>
  NVSCOPE_DETAIL_INLINE std::size_t add_each(std::size_t n, Next&& next) {
    state s = s_;
    std::size_t j = 0;
    for (interval x; j < n; ++j) {
      if (!next(j, x) || x.second == x.first) continue;
      if (x.first < s.run.first) break;
      if (s.run.second != 0 && x.first <= s.run.second) {
        s.run.second = x.second > s.run.second ? x.second : s.run.second;
        continue;
      }
      if (s.run.second != 0) take(s);
      s.run = x;
    }
    s_ = s;
    return j;
  }
  void finish(activity_metrics& m) { // no interval after this
    if (s_.run.second != 0) take(s_);
    for (; next_transfer_ < transfers_.size(); ++next_transfer_) s_.busy.add(transfers_[next_transfer_]);
    m.busy_ns = s_.busy.finish();
    m.kernel_ns = s_.kernel_ns;
    m.overlap_ns = overlap_ns_;
  }

 private:
  struct state { // what each merged interval reads and changes
    timestamp_ns lo, hi; // the window
    interval run;        // the merged interval being extended: taken once the next one starts past it
    union_walk busy;
    std::uint64_t kernel_ns;
    timestamp_ns transfer_start, copy_start; // of transfers_[next_transfer_], copies_[next_copy_]
  };
  static timestamp_ns start_at(const interval_list& v, std::size_t i) noexcept { // none: past every time
    return i < v.size() ? v[i].first : ~timestamp_ns{0};
  }
  // Takes s.run, one merged interval of the kernels' union, into `s` (s_ or a loop's copy of it).
  NVSCOPE_DETAIL_INLINE void take(state& s) {
    const auto& a = s.run;
    const auto from = a.first > s.lo ? a.first : s.lo, to = a.second < s.hi ? a.second : s.hi;
    if (to > from) s.kernel_ns += to - from;
    if (s.transfer_start < a.first) { // the transfers' walk adds to s_: a copy written back first, read again after
      s_.busy = s.busy;
      s.transfer_start = transfers_before(a.first);
      s.busy = s_.busy;
    }
    s.busy.add(a);
    if (s.copy_start < a.second) s.copy_start = overlap_copies(a); // else the next copy starts at or after a's end: it overlaps none of it
  }
  // The transfers that start before `start`, taken into s_.busy; returns the next one's start.
  NVSCOPE_DETAIL_COLD timestamp_ns transfers_before(timestamp_ns start) {
    for (; next_transfer_ < transfers_.size() && transfers_[next_transfer_].first < start; ++next_transfer_) s_.busy.add(transfers_[next_transfer_]);
    return start_at(transfers_, next_transfer_);
  }
  // The copies' overlap with merged interval a, added; returns the next copy's start.
  NVSCOPE_DETAIL_COLD timestamp_ns overlap_copies(const interval& a) {
    for (; next_copy_ < copies_.size(); ++next_copy_) {
      const auto& c = copies_[next_copy_];
      const auto l = std::max(a.first, c.first), h = std::min(a.second, c.second);
      if (h > l) overlap_ns_ += h - l;
      if (a.second < c.second) break;
    }
    return start_at(copies_, next_copy_);
  }
  const interval_list &transfers_, &copies_;
  state s_;
  std::size_t next_transfer_ = 0, next_copy_ = 0;
  std::uint64_t overlap_ns_ = 0;
};

// activity_of's figures with the kernels read once from their records when the non-empty ones
// come in start order, as a trace's usually do: their union is merged as it is read by a
// kernel_union_sink, never copied; the kernel median is read across `runs` (sorted). False,
// with `gaps` and `m` to be thrown away, where one comes out of order. `g`: the copies, memsets
// and syncs.
inline bool activity_of_kernels_in_order(const std::vector<kernel_record>& kernels, gpu_intervals& g, timestamp_ns lo, timestamp_ns hi,
                                         value_list& gaps, activity_metrics& m, const kernel_runs& runs) {
  m.copies = g.copies.size();
  m.memsets = g.memsets.size();
  for (auto* v : {&g.copies, &g.memsets, &g.syncs}) merge_intervals(*v);
  const auto transfers = union_of(g.copies, g.memsets);
  gaps.reserve(kernels.size() + transfers.size());
  kernel_union_sink sink(transfers, g.copies, lo, hi, gaps);
  const kernel_record* const record = kernels.data();
  const auto taken = sink.add_each(kernels.size(), [record](std::size_t j, interval& x) {
    x = {record[j].start, record[j].end};
    return valid_interval(x.first, x.second);
  });
  if (taken != kernels.size()) return false;
  m.kernels = runs.count();
  m.kernel_median_ns = median_of_runs(runs);
  sink.finish(m);
  window_figures(g, lo, hi, gaps, 0, m);
  gap_figures(gaps.data(), gaps.data() + gaps.size(), m);
  return true;
}

// overall_activity (below) with `runs`, the valid kernels' durations by name, sorted (analyze's,
// or sorted_kernel_runs_of's): their median read across them.
inline activity_metrics overall_activity_of(const trace& t, time_window window, const kernel_runs& runs) {
  value_list gaps;
  {
    gpu_intervals g; // the kernels read in place
    take_intervals(t.copies, g.copies);
    take_intervals(t.memsets, g.memsets);
    take_intervals(t.syncs, g.syncs);
    activity_metrics m;
    if (activity_of_kernels_in_order(t.kernels, g, window.begin, window.end, gaps, m, runs)) return m;
    gaps.clear();
  }
  auto g = intervals_of(t); // kernels out of start order: copied, sorted, merged
  return activity_of(g, window.begin, window.end, gaps, runs);
}

// analysis_window (below) with `runs` (analyze's, or sorted_kernel_runs_of's): the valid kernels'
// earliest start and latest end read off them, not the kernel records.
inline time_window analysis_window_of(const trace& t, const analysis_options& options, const kernel_runs& runs) {
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
      if (valid_interval(r.start, r.end)) lo = std::min(lo, r.start), hi = std::max(hi, r.end);
  };
  if (runs.count() != 0) lo = runs.first_start, hi = runs.last_end;
  extend(t.copies);
  extend(t.memsets);
  return hi == 0 ? time_window{} : time_window{lo, hi};
}

} // namespace detail

/// The window the overall metrics cover: `options.window` when set; else the capture window
/// when the trace has one (first begin to last end; an unclosed one ends at `trace::finish`);
/// else first to last GPU activity (kernels, copies, memsets).
/// \code
///   nvscope::time_window w = nvscope::analysis_window(t, options);
/// \endcode
inline time_window analysis_window(const trace& t, const analysis_options& options) {
  return detail::analysis_window_of(t, options, detail::sorted_kernel_runs_of(t));
}

/// GPU activity over `window` (every record counts; busy, kernel, copy and sync time are
/// clipped to the window).
/// \code
///   auto o = nvscope::overall_activity(t, {t.begin, t.finish});
/// \endcode
inline activity_metrics overall_activity(const trace& t, time_window window) {
  return detail::overall_activity_of(t, window, detail::sorted_kernel_runs_of(t));
}

} // namespace v1
} // namespace nvscope

// nvscope-target: nvscope
#pragma once

/// \file analyze/reference/activity.hpp
/// The activity figures of docs/analysis.md ("Metrics and verdict") as plain definitions: the
/// analysis window, and GPU busy, kernel, copy and sync time, copy/compute overlap and the
/// launch gaps over it (seed 001's metrics). Interval sets are sorted vectors merged by one
/// loop; per range and per step over each instance's projected window. `analyze()` is
/// tested equal to these (tests/analyze/reference_test.cpp).
///
/// \code
///   #include <nvscope/analyze/reference/activity.hpp>
///   auto w = nvscope::reference::analysis_window(t, {});
///   auto m = nvscope::reference::overall_activity(t, w);
/// \endcode

#include <nvscope/analyze/reference/common.hpp>
#include <nvscope/analyze/reference/tables.hpp>
#include <nvscope/analyze/step_names.hpp>

#include <algorithm>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
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

/// The figures of one set of GPU records over [lo, hi): `overall_activity`'s definitions, with
/// the syncs of the whole trace; the medians are left to the caller (a row takes them over all
/// its instances).
struct record_spans {
  std::vector<span> kernels, copies, memsets;
};
inline activity_metrics activity_of(const record_spans& g, const std::vector<span>& syncs, timestamp_ns lo, timestamp_ns hi,
                                    std::vector<std::uint64_t>& gaps) {
  activity_metrics m;
  std::vector<span> all = g.kernels;
  all.insert(all.end(), g.copies.begin(), g.copies.end());
  all.insert(all.end(), g.memsets.begin(), g.memsets.end());
  const auto busy = merged(all), kernel_union = merged(g.kernels), copy_union = merged(g.copies);
  m.window_begin = lo;
  m.window_end = std::max(hi, lo);
  m.window_ns = m.window_end - m.window_begin;
  m.busy_ns = length(busy, lo, hi);
  m.kernel_ns = length(kernel_union, lo, hi);
  m.copy_ns = length(copy_union, lo, hi);
  m.sync_ns = length(merged(syncs), lo, hi);
  m.overlap_ns = overlap(kernel_union, copy_union);
  const auto copy_total = length(copy_union, 0, ~timestamp_ns{0});
  if (m.window_ns > 0) m.gpu_busy_percent = percent(m.busy_ns, m.window_ns), m.sync_percent = percent(m.sync_ns, m.window_ns);
  if (copy_total > 0) m.copy_compute_overlap_percent = percent(m.overlap_ns, copy_total);
  const auto before = gaps.size();
  for (std::size_t i = 1; i < busy.size(); ++i) gaps.push_back(busy[i].first - busy[i - 1].second);
  m.gap_count = gaps.size() - before;
  m.kernels = g.kernels.size();
  m.copies = g.copies.size();
  m.memsets = g.memsets.size();
  return m;
}

/// GPU activity over `window` (`activity_metrics`' definitions): busy, kernel, copy and sync
/// time are unions clipped to the window; the overlap of kernels and copies, the copy time it
/// is a share of, the gaps between the busy union's spans and the counts and kernel median
/// take every record, inside the window or not.
inline activity_metrics overall_activity(const trace& t, time_window window) {
  const record_spans all{spans_of(t.kernels), spans_of(t.copies), spans_of(t.memsets)};
  std::vector<std::uint64_t> gaps, durations;
  auto m = activity_of(all, spans_of(t.syncs), window.begin, window.end, gaps);
  if (!gaps.empty()) m.gap_median_ns = stats(gaps).median, m.gap_p90_ns = nearest_rank(gaps, 0.9);
  for (const auto& k : all.kernels) durations.push_back(k.second - k.first);
  if (!durations.empty()) m.kernel_median_ns = stats(durations).median;
  return m;
}

/// A step's family: its name with each run of digits written `N` (`step_12` -> `step_N`).
inline std::string family_of(std::string_view name) {
  std::string out;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const bool digit = name[i] >= '0' && name[i] <= '9';
    if (!digit) out.push_back(name[i]);
    else if (i == 0 || !(name[i - 1] >= '0' && name[i - 1] <= '9')) out.push_back('N');
  }
  return out;
}

/// Which ranges are steps for the per-range figures: the step rule's (`step_ranges`), less
/// every step that a step of its own family (the name with digits as N) encloses on the
/// push/pop stack; that one is part of the enclosing step, as `nvscope run` counts steps.
inline std::vector<char> own_steps(const trace& t, const analysis_options& options, const nesting& n) {
  auto is_step = step_ranges(t, options);
  const auto original = is_step;
  for (std::uint32_t r = 0; r < t.ranges.size(); ++r) {
    if (!original[r]) continue;
    const auto family = family_of(t.strings[t.ranges[r].name]);
    for (auto up = n.parent[r]; up != no_index; up = n.parent[up])
      if (original[up] && family_of(t.strings[t.ranges[up].name]) == family) is_step[r] = 0;
  }
  return is_step;
}

/// Per-range metrics (`range_activity`): every range that launched GPU work and is outermost
/// (depth 0) or a step, an instance over its projected window with the GPU records whose
/// launch it encloses; instances summed per range name (each range group its own row) or, for
/// steps, per step family; ratios and medians over the sums. Rows by kernel time descending,
/// then name; steps, each instance on its own, in start order.
/// A per-range row's ratios of its sums, and its gap and kernel medians over all its instances.
inline void finish_row(range_metrics& m, const std::vector<std::uint64_t>& gaps, const std::vector<std::uint64_t>& durations) {
  auto& a = m.activity;
  m.kernels_per_instance = static_cast<double>(m.kernels) / static_cast<double>(m.instances);
  if (a.window_ns) a.gpu_busy_percent = percent(a.busy_ns, a.window_ns), a.sync_percent = percent(a.sync_ns, a.window_ns);
  if (a.copy_ns) a.copy_compute_overlap_percent = percent(a.overlap_ns, a.copy_ns);
  a.gap_count = gaps.size();
  if (!gaps.empty()) a.gap_median_ns = stats(gaps).median, a.gap_p90_ns = nearest_rank(gaps, 0.9);
  if (!durations.empty()) a.kernel_median_ns = stats(durations).median;
}

struct range_figures {
  std::vector<range_metrics> per_range; ///< the report's `per_range`
  std::vector<step_metrics> steps;      ///< the report's `step_details`
};
inline range_figures range_activity(const trace& t, const analysis_options& options) {
  const auto end = range_ends(t);
  const auto n = nest(t, end);
  const auto p = projections(t, options.start_end, options.attribute);
  const auto is_step = own_steps(t, options, n);
  std::vector<record_spans> held(t.ranges.size());
  auto add = [&](const auto& records, std::vector<span> record_spans::*kind) {
    for (const auto& g : records) {
      const auto l = launch_of(t, g.correlation);
      if (!valid(g.start, g.end) || l == no_index) continue;
      for (const auto r : enclosing(t, end, n, l, options.start_end, options.attribute)) (held[r].*kind).emplace_back(g.start, g.end);
    }
  };
  add(t.kernels, &record_spans::kernels);
  add(t.copies, &record_spans::copies);
  add(t.memsets, &record_spans::memsets);
  const auto syncs = spans_of(t.syncs);
  std::map<std::tuple<bool, range_group, std::string>, std::size_t> row_of; // (step, group, family): row
  std::vector<std::vector<std::uint64_t>> gaps, durations;
  range_figures out;
  for (std::uint32_t r = 0; r < t.ranges.size(); ++r) {
    const auto& range = t.ranges[r];
    if (range.is_mark || p[r].ops == 0 || (n.depth[r] != 0 && !is_step[r])) continue;
    const auto family = is_step[r] ? family_of(t.strings[range.name]) : std::string();
    const auto key = is_step[r] ? std::make_tuple(true, range_group{}, family) : std::make_tuple(false, group_of(t, range), family);
    if (row_of.emplace(key, out.per_range.size()).second) {
      out.per_range.emplace_back();
      out.per_range.back().range = is_step[r] ? family : std::string(t.strings[range.name]);
      gaps.emplace_back(), durations.emplace_back();
    }
    const auto row = row_of[key];
    const auto a = activity_of(held[r], syncs, p[r].first, p[r].last, gaps[row]);
    for (const auto& k : held[r].kernels) durations[row].push_back(k.second - k.first);
    auto& m = out.per_range[row];
    auto& s = m.activity;
    s.window_begin = m.instances ? std::min(s.window_begin, a.window_begin) : a.window_begin;
    s.window_end = std::max(s.window_end, a.window_end);
    ++m.instances;
    m.kernels += a.kernels, s.kernels += a.kernels, s.copies += a.copies, s.memsets += a.memsets;
    s.window_ns += a.window_ns, s.busy_ns += a.busy_ns, s.kernel_ns += a.kernel_ns, s.copy_ns += a.copy_ns;
    s.overlap_ns += a.overlap_ns, s.sync_ns += a.sync_ns;
    if (is_step[r]) out.steps.push_back({r, std::string(t.strings[range.name]), a.kernels, a});
  }
  for (std::size_t q = 0; q < out.per_range.size(); ++q) finish_row(out.per_range[q], gaps[q], durations[q]);
  std::sort(out.per_range.begin(), out.per_range.end(), [](const range_metrics& a, const range_metrics& b) {
    return std::make_tuple(~a.activity.kernel_ns, a.range) < std::make_tuple(~b.activity.kernel_ns, b.range);
  });
  std::sort(out.steps.begin(), out.steps.end(), [&](const step_metrics& a, const step_metrics& b) {
    return std::make_pair(t.ranges[a.range].start, a.range) < std::make_pair(t.ranges[b.range].start, b.range);
  });
  return out;
}

/// The step figures (`step_figures`): step ranges by the step rule (marks never), and the
/// kernels with a valid end and a launch that some step range encloses, per step.
struct step_counts {
  std::uint64_t steps = 0, kernels_in_steps = 0;
  double kernels_per_step = 0.0;
};
inline step_counts steps(const trace& t, const analysis_options& options) {
  const auto end = range_ends(t);
  const auto n = nest(t, end);
  const auto is_step = step_ranges(t, options);
  step_counts s;
  for (const char c : is_step) s.steps += c;
  if (s.steps == 0) return s;
  for (const auto& k : t.kernels) {
    const auto l = launch_of(t, k.correlation);
    if (!valid(k.start, k.end) || l == no_index) continue;
    bool inside = false;
    for (const auto r : enclosing(t, end, n, l, options.start_end, options.attribute)) inside = inside || is_step[r];
    s.kernels_in_steps += inside;
  }
  s.kernels_per_step = static_cast<double>(s.kernels_in_steps) / static_cast<double>(s.steps);
  return s;
}

/// The kernels outside every range (`analysis_report::unranged`): each kernel with a valid end
/// and a launch that no range encloses (`enclosing` under the options' rules), counted with
/// its duration per launching thread (its TID and name as `trace::threads` holds them); threads
/// by GPU time, largest first, then by index.
inline unranged_kernels unranged(const trace& t, const analysis_options& options) {
  const auto end = range_ends(t);
  const auto n = nest(t, end);
  unranged_kernels out;
  out.credit = options.attribute;
  std::map<std::uint32_t, unranged_thread> per_thread;
  for (const auto& k : t.kernels) {
    const auto l = launch_of(t, k.correlation);
    if (!valid(k.start, k.end) || l == no_index || !enclosing(t, end, n, l, options.start_end, options.attribute).empty()) continue;
    const auto thread = t.launches[l].thread;
    auto& row = per_thread[thread];
    row.thread = thread;
    row.os_id = thread < t.threads.size() ? t.threads[thread].os_id : thread;
    row.name = thread < t.threads.size() && t.threads[thread].name ? std::string(t.strings[t.threads[thread].name]) : std::string();
    ++row.kernels, row.gpu_ns += k.end - k.start;
    ++out.kernels, out.gpu_ns += k.end - k.start;
  }
  for (const auto& [thread, row] : per_thread) out.threads.push_back(row);
  std::sort(out.threads.begin(), out.threads.end(), [](const unranged_thread& a, const unranged_thread& b) {
    return std::make_pair(~a.gpu_ns, a.thread) < std::make_pair(~b.gpu_ns, b.thread);
  });
  return out;
}

} // namespace reference
} // namespace v1
} // namespace nvscope

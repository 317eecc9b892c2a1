// nvscope-target: nvscope
#pragma once

/// \file analyze/range_activity.hpp
/// Per-range metrics: GPU activity over the projected windows of outermost ranges and step
/// ranges, summed per range name. Each GPU record reaches its interesting ranges through
/// precomputed "nearest interesting ancestor" links, so the pass is linear in the records.
///
/// \code
///   const auto x = nvscope::index_trace(t);
///   auto per_range = nvscope::range_activity(t, x, nvscope::project_ranges(t, x), {});
/// \endcode

#include <nvscope/analyze/activity.hpp>
#include <nvscope/analyze/grouping.hpp>
#include <nvscope/analyze/index.hpp>
#include <nvscope/analyze/projection.hpp>
#include <nvscope/analyze/step_names.hpp>

#include <string>
#include <string_view>
#include <tuple>
#include <vector>

namespace nvscope {
inline namespace v1 {
namespace detail {

// A GPU record seen from one interesting range: kind 0 kernel, 1 copy, 2 memset.
struct range_op {
  std::uint32_t range;
  std::uint8_t kind;
  timestamp_ns start, end;
};

// Per range, the nearest interesting ancestor-or-self (outermost ranges and steps that
// launched GPU work), so that each record reaches them in as many steps as there are.
inline std::vector<std::uint32_t> interesting_links(const trace& t, const trace_index& x, const range_projection& p,
                                                    const analysis_options& options) {
  const auto nr = t.ranges.size();
  std::vector<char> interesting(nr, 0);
  for (std::size_t i = 0; i < nr; ++i) {
    const auto& r = t.ranges[i];
    interesting[i] = !r.is_mark && p.ops[i] && (x.links.depth[i] == 0 || is_step_name(t.strings[r.name], options));
  }
  std::vector<std::uint32_t> up(nr, attribution::none);
  const auto order = deepest_first(t, x);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const auto r = *it, parent = x.links.parent[r];
    up[r] = interesting[r] ? r : parent == attribution::none ? attribution::none : up[parent];
  }
  for (std::size_t i = 0; i < nr; ++i)
    if (!t.ranges[i].is_push_pop && interesting[i]) up[i] = static_cast<std::uint32_t>(i);
  return up;
}

// Calls f(range) for every interesting range enclosing launch l.
template <class F>
void for_interesting(const trace_index& x, const std::vector<std::uint32_t>& up, std::uint32_t l, F&& f) {
  for (auto r = x.launch_owner[l] == attribution::none ? attribution::none : up[x.launch_owner[l]]; r != attribution::none;) {
    f(r);
    const auto parent = x.links.parent[r];
    r = parent == attribution::none ? attribution::none : up[parent];
  }
  for (auto s = x.start_end_offset[l]; s < x.start_end_offset[l + 1]; ++s)
    if (up[x.start_end_ranges[s]] != attribution::none) f(x.start_end_ranges[s]);
}

// Every (interesting range, GPU record) pair, grouped by range: counted, then placed.
inline std::vector<range_op> range_ops(const trace& t, const trace_index& x, const std::vector<std::uint32_t>& up) {
  std::vector<std::uint32_t> offset(t.ranges.size() + 1, 0);
  std::vector<range_op> ops;
  auto visit = [&](auto&& emit) {
    auto each = [&](const auto& records, const std::vector<std::uint32_t>& launch, std::uint8_t kind) {
      for (std::size_t i = 0; i < records.size(); ++i) {
        const auto& rec = records[i];
        if (launch[i] == attribution::none || !valid_interval(rec.start, rec.end)) continue;
        for_interesting(x, up, launch[i], [&](std::uint32_t r) { emit(r, kind, rec); });
      }
    };
    each(t.kernels, x.links.kernel_launch, 0);
    each(t.copies, x.links.copy_launch, 1);
    each(t.memsets, x.links.memset_launch, 2);
  };
  visit([&](std::uint32_t r, std::uint8_t, const auto&) { ++offset[r + 1]; });
  for (std::size_t r = 1; r < offset.size(); ++r) offset[r] += offset[r - 1];
  ops.resize(offset.back());
  visit([&](std::uint32_t r, std::uint8_t kind, const auto& rec) { ops[offset[r]++] = {r, kind, rec.start, rec.end}; });
  return ops;
}

// Sums one instance's window figures into its name's row.
inline void add_instance(range_metrics& m, const activity_metrics& a) {
  auto& s = m.activity;
  s.window_begin = m.instances ? std::min(s.window_begin, a.window_begin) : a.window_begin;
  s.window_end = std::max(s.window_end, a.window_end);
  ++m.instances;
  m.kernels += a.kernels;
  s.kernels += a.kernels;
  s.copies += a.copies;
  s.memsets += a.memsets;
  s.window_ns += a.window_ns;
  s.busy_ns += a.busy_ns;
  s.kernel_ns += a.kernel_ns;
  s.copy_ns += a.copy_ns;
  s.overlap_ns += a.overlap_ns;
  s.sync_ns += a.sync_ns;
}

// Ratios of the summed figures; gap and kernel medians over every instance's values.
inline void finish_metrics(range_metrics& m, std::vector<std::uint64_t>& gaps, std::vector<std::uint64_t>& kernel_ns) {
  auto& a = m.activity;
  m.kernels_per_instance = m.instances ? static_cast<double>(m.kernels) / static_cast<double>(m.instances) : 0.0;
  if (a.window_ns) {
    a.gpu_busy_percent = 100.0 * static_cast<double>(a.busy_ns) / static_cast<double>(a.window_ns);
    a.sync_percent = 100.0 * static_cast<double>(a.sync_ns) / static_cast<double>(a.window_ns);
  }
  if (a.copy_ns) a.copy_compute_overlap_percent = 100.0 * static_cast<double>(a.overlap_ns) / static_cast<double>(a.copy_ns);
  a.gap_count = gaps.size();
  if (!gaps.empty()) {
    a.gap_median_ns = stats_of(gaps).median;
    a.gap_p90_ns = nearest_rank_select(gaps, 0.9);
  }
  if (!kernel_ns.empty()) a.kernel_median_ns = stats_of(kernel_ns).median;
}

} // namespace detail

namespace detail {

// The activity of one range instance from its ops [first, last) and the merged syncs;
// leaves its gaps in `gaps` and appends its kernel durations to `kernel_ns`.
inline activity_metrics instance_activity(const range_op* first, const range_op* last, timestamp_ns lo, timestamp_ns hi,
                                          const std::vector<interval>& syncs, gpu_intervals& g, std::vector<std::uint64_t>& gaps,
                                          std::vector<std::uint64_t>& kernel_ns) {
  g.kernels.clear();
  g.copies.clear();
  g.memsets.clear();
  g.syncs.clear();
  for (auto o = first; o != last; ++o) {
    (o->kind == 0 ? g.kernels : o->kind == 1 ? g.copies : g.memsets).emplace_back(o->start, o->end);
    if (o->kind == 0) kernel_ns.push_back(o->end - o->start);
  }
  auto y = std::upper_bound(syncs.begin(), syncs.end(), lo, [](timestamp_ns v, const interval& s) { return v < s.second; });
  for (; y != syncs.end() && y->first < hi; ++y) g.syncs.push_back(*y);
  return activity_of(g, lo, hi, gaps);
}

} // namespace detail

/// Per-range metrics: outermost ranges and step ranges that launched GPU work, over their
/// projected windows, summed per range name; most kernel time first.
/// \code
///   for (const auto& m : nvscope::range_activity(t, x, p, options)) std::puts(m.range.c_str());
/// \endcode
inline std::vector<range_metrics> range_activity(const trace& t, const trace_index& x, const range_projection& p,
                                                 const analysis_options& options) {
  const auto ops = detail::range_ops(t, x, detail::interesting_links(t, x, p, options));
  auto syncs = detail::intervals_of(t).syncs;
  detail::merge_intervals(syncs);
  std::vector<range_metrics> rows;
  std::vector<std::uint32_t> row_of(x.group_first.size(), attribution::none);
  std::vector<std::vector<std::uint64_t>> gaps, kernel_ns;
  detail::gpu_intervals g;
  std::vector<std::uint64_t> scratch;
  for (std::size_t i = 0, j = 0; i < ops.size(); i = j) {
    const auto r = ops[i].range;
    for (j = i; j < ops.size() && ops[j].range == r; ++j) {}
    auto& row = row_of[x.group_of[r]];
    if (row == attribution::none) {
      row = static_cast<std::uint32_t>(rows.size());
      rows.emplace_back();
      rows.back().range = std::string(t.strings[t.ranges[r].name]);
      gaps.emplace_back();
      kernel_ns.emplace_back();
    }
    const auto a = detail::instance_activity(ops.data() + i, ops.data() + j, p.first[r], p.last[r], syncs, g, scratch, kernel_ns[row]);
    gaps[row].insert(gaps[row].end(), scratch.begin(), scratch.end());
    detail::add_instance(rows[row], a);
  }
  for (std::size_t q = 0; q < rows.size(); ++q) detail::finish_metrics(rows[q], gaps[q], kernel_ns[q]);
  detail::order_rows(rows, [](const range_metrics& m) { return std::make_tuple(detail::descending(m.activity.kernel_ns), std::string_view(m.range)); });
  return rows;
}

} // namespace v1
} // namespace nvscope

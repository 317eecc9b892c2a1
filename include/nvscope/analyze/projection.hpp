// nvscope-target: nvscope
#pragma once

/// \file analyze/projection.hpp
/// Ranges projected onto the GPU (`nvtx_gpu_proj_sum`): per range instance, the first start
/// and last end of the GPU work launched inside it, and how many launches that was. Push/pop
/// figures are computed at each launch's innermost range and carried up the nesting (linear);
/// start/end ranges take the launches they enclose directly.
///
/// \code
///   const auto x = nvscope::index_trace(t);
///   const auto p = nvscope::project_ranges(t, x);
///   auto rows = nvscope::gpu_projection_summary(t, x, p);
/// \endcode

#include <nvscope/analyze/grouping.hpp>
#include <nvscope/analyze/index.hpp>
#include <nvscope/analyze/names.hpp>
#include <nvscope/analyze/report.hpp>

#include <algorithm>
#include <limits>
#include <string_view>
#include <tuple>
#include <vector>

namespace nvscope {
inline namespace v1 {

/// Per range: the projected window of the GPU work launched inside, and the launch count
/// (0: the range launched no GPU work; `first`/`last` are then meaningless).
struct range_projection {
  std::vector<timestamp_ns> first, last;
  std::vector<std::uint32_t> ops;
};

namespace detail {

// Every range, children before their parents (detail::children_first): made here from an
// attribution's parents, or the index's own order (index_trace makes it once with the nesting).
inline scratch_vector<std::uint32_t> deepest_first(const trace& t, const attribution& a) {
  scratch_vector<std::uint32_t> order;
  children_first(a.parent, static_cast<std::uint32_t>(t.ranges.size()), order);
  return order;
}

inline scratch_vector<std::uint32_t> deepest_first(const trace& t, const trace_index& x) {
  if (x.children_first.size() == t.ranges.size()) return scratch_vector<std::uint32_t>(x.children_first.begin(), x.children_first.end());
  return deepest_first(t, x.links);
}

} // namespace detail

/// Projects every range onto the GPU work launched inside it (docs/analysis.md).
/// \code
///   auto p = nvscope::project_ranges(t, nvscope::index_trace(t));
/// \endcode
inline range_projection project_ranges(const trace& t, const trace_index& x) {
  range_projection p;
  p.first.assign(t.ranges.size(), std::numeric_limits<timestamp_ns>::max());
  p.last.assign(t.ranges.size(), 0);
  p.ops.assign(t.ranges.size(), 0);
  timestamp_ns *const first = p.first.data(), *const last = p.last.data();
  std::uint32_t* const ops = p.ops.data();
  const std::uint32_t *const owner = x.launch_owner.data(), *const se_offset = x.start_end_offset.data(), *const se_ranges = x.start_end_ranges.data();
  auto add = [&](std::uint32_t r, timestamp_ns f, timestamp_ns l, std::uint32_t n) {
    first[r] = std::min(first[r], f);
    last[r] = std::max(last[r], l);
    ops[r] += n;
  };
  // Each valid GPU record widens the windows of the ranges holding its launch (the launch's
  // innermost push/pop range and its open start/end ranges); a launch counts once, at its first
  // valid record (`counted`), with no per-launch window made first.
  detail::scratch_vector<std::uint8_t> counted(t.launches.size(), 0);
  std::uint8_t* const seen = counted.data();
  auto note = [&](const auto& records, const record_indexes& launch) {
    const std::uint32_t* const launch_of = launch.data();
    const auto* const record = records.data();
    for (std::size_t i = 0, n = records.size(); i < n; ++i) {
      const auto l = launch_of[i];
      const auto& r = record[i];
      if (l == attribution::none || !detail::valid_interval(r.start, r.end)) continue;
      const std::uint32_t first_time = seen[l] == 0;
      seen[l] = 1;
      if (owner[l] != attribution::none) add(owner[l], r.start, r.end, first_time);
      for (auto s = se_offset[l]; s < se_offset[l + 1]; ++s) add(se_ranges[s], r.start, r.end, first_time);
    }
  };
  note(t.kernels, x.links.kernel_launch);
  note(t.copies, x.links.copy_launch);
  note(t.memsets, x.links.memset_launch);
  for (const auto r : detail::deepest_first(t, x)) {
    const auto up = x.links.parent[r];
    if (up != attribution::none && p.ops[r]) add(up, p.first[r], p.last[r], p.ops[r]);
  }
  return p;
}

/// `nvtx_gpu_proj_sum`: per range group, the projections of its instances that launched GPU
/// work, their host time, launches, nesting level and children that launched work.
/// \code
///   auto rows = nvscope::gpu_projection_summary(t, x, nvscope::project_ranges(t, x));
/// \endcode
inline std::vector<gpu_projection_row> gpu_projection_summary(const trace& t, const trace_index& x, const range_projection& p) {
  const auto nr = t.ranges.size(), ng = x.group_first.size();
  auto group_of = [&](std::size_t i) -> std::size_t { return x.group_of[i] != attribution::none && p.ops[i] ? x.group_of[i] : ng; };
  const auto stats = detail::grouped_stats(ng, nr, group_of, [&](std::size_t i) { return p.last[i] - p.first[i]; });
  std::vector<std::uint64_t> host(ng, 0), ops(ng, 0), level(ng, 0), kids(ng, 0);
  for (std::size_t i = 0; i < nr; ++i) {
    const auto up = x.links.parent[i];
    if (p.ops[i] && up != attribution::none && group_of(up) != ng) ++kids[group_of(up)];
    const auto g = group_of(i);
    if (g == ng) continue;
    host[g] += x.links.range_end[i] - t.ranges[i].start;
    ops[g] += p.ops[i];
    level[g] += x.links.depth[i];
  }
  std::vector<gpu_projection_row> rows;
  for (std::size_t g = 0; g < ng; ++g) {
    if (!stats[g].count) continue;
    const auto& first = t.ranges[x.group_first[g]];
    const auto n = static_cast<double>(stats[g].count);
    rows.push_back({detail::range_label(t, first), detail::style_name(first), stats[g], host[g], ops[g],
                    static_cast<double>(ops[g]) / n, static_cast<double>(level[g]) / n, static_cast<double>(kids[g]) / n,
                    std::string(t.strings[first.name])});
  }
  detail::order_rows(rows, [](const auto& r) {
    return std::make_tuple(detail::descending(r.projected.total), std::string_view(r.range), std::string_view(r.style));
  });
  return rows;
}

} // namespace v1
} // namespace nvscope

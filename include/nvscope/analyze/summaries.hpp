// nvscope-target: nvscope
#pragma once

/// \file analyze/summaries.hpp
/// The flat summaries: `cuda_gpu_kern_sum` (kernels by name), `cuda_gpu_mem_time_sum` and
/// `cuda_gpu_mem_size_sum` (copies by direction, memsets), `nvtx_sum` (host time of ranges by
/// name and style). Each a pass over the indexed trace, linear in its records.
///
/// \code
///   const auto x = nvscope::index_trace(t);
///   for (const auto& row : nvscope::kernel_summary(t, x)) std::puts(row.name.c_str());
/// \endcode

#include <nvscope/analyze/kernel_runs.hpp>
#include <nvscope/analyze/grouping.hpp>
#include <nvscope/analyze/index.hpp>
#include <nvscope/analyze/names.hpp>
#include <nvscope/analyze/report.hpp>

#include <string>
#include <string_view>
#include <tuple>
#include <vector>

namespace nvscope {
inline namespace v1 {

namespace detail {

// The rows of the kernel groups (group n: name id n's kernels; the last, ids past the string
// table) that hold any, `stats_of(n)` each, in cuda_gpu_kern_sum's order.
template <class StatsOf>
std::vector<kernel_summary_row> kernel_summary_rows(const trace& t, std::size_t groups, StatsOf&& stats_of) {
  std::vector<kernel_summary_row> rows;
  for (std::size_t n = 0; n < groups; ++n)
    if (auto s = stats_of(n); s.count) rows.push_back({0.0, s, std::string(t.strings[static_cast<string_id>(n)])});
  set_percent(rows, [](const auto& r) { return r.time.total; }, [](auto& r) -> double& { return r.time_percent; });
  order_rows(rows, [](const auto& r) { return std::make_tuple(descending(r.time.total), r.time.count, std::string_view(r.name)); });
  return rows;
}

// kernel_summary in name_form::demangled from analyze's runs (each name id its own group), each
// run sorted in place as its figures are taken (stats_then_sort): no selection for the medians,
// and the runs left sorted for the passes after.
inline std::vector<kernel_summary_row> kernel_summary_of(const trace& t, kernel_runs& runs) {
  auto& g = runs.by_name;
  runs.sorted = true;
  return kernel_summary_rows(t, g.offset.size() - 1, [&](std::size_t n) {
    return g.offset[n + 1] > g.offset[n] ? stats_then_sort(g.values.data() + g.offset[n], g.values.data() + g.offset[n + 1]) : duration_stats{};
  });
}

} // namespace detail

/// `cuda_gpu_kern_sum`: valid kernels grouped by name in `form`, largest total first.
/// \code
///   auto rows = nvscope::kernel_summary(t, nvscope::index_trace(t), nvscope::name_form::base);
/// \endcode
inline std::vector<kernel_summary_row> kernel_summary(const trace& t, const trace_index& x, name_form form = name_form::demangled) {
  const auto ids = detail::kernel_name_ids(t, form);
  const auto names = ids.size(); // and one group more: ids outside the string table
  const auto stats = detail::grouped_stats(
      names + 1, t.kernels.size(),
      [&](std::size_t i) -> std::size_t {
        if (!x.kernel_ok[i]) return names + 1;
        return t.kernels[i].name < names ? ids[t.kernels[i].name] : names;
      },
      [&](std::size_t i) { return t.kernels[i].end - t.kernels[i].start; }, detail::item_reads::once);
  return detail::kernel_summary_rows(t, stats.size(), [&](std::size_t n) { return stats[n]; });
}

/// Both memory-operation summaries: by time and by size.
struct memop_summaries {
  std::vector<memop_time_row> by_time; ///< cuda_gpu_mem_time_sum
  std::vector<memop_size_row> by_size; ///< cuda_gpu_mem_size_sum
};

/// `cuda_gpu_mem_time_sum` and `cuda_gpu_mem_size_sum`: copies by direction, then memsets.
/// \code
///   auto m = nvscope::memop_summary(t);
/// \endcode
inline memop_summaries memop_summary(const trace& t) {
  constexpr std::size_t kinds = 12; // 11 copy kinds + memset
  const auto nc = t.copies.size();
  auto kind_of = [&](std::size_t i) -> std::size_t {
    if (i >= nc) return detail::valid_interval(t.memsets[i - nc].start, t.memsets[i - nc].end) ? kinds - 1 : kinds;
    const auto& c = t.copies[i];
    const auto kind = static_cast<std::size_t>(c.kind); // a value past the enum is an unknown kind, as copy_operation_name words it
    return detail::valid_interval(c.start, c.end) ? (kind <= kinds - 2 ? kind : std::size_t{0}) : kinds;
  };
  auto time_of = [&](std::size_t i) { return i < nc ? t.copies[i].end - t.copies[i].start : t.memsets[i - nc].end - t.memsets[i - nc].start; };
  auto size_of = [&](std::size_t i) { return i < nc ? t.copies[i].bytes : t.memsets[i - nc].bytes; };
  const auto n = nc + t.memsets.size();
  const auto times = detail::grouped_stats(kinds, n, kind_of, time_of);
  const auto sizes = detail::grouped_stats(kinds, n, kind_of, size_of);
  memop_summaries m;
  for (std::size_t k = 0; k < kinds; ++k) {
    if (!times[k].count) continue;
    const char* op = k == kinds - 1 ? detail::memset_operation_name : detail::copy_operation_name(static_cast<copy_kind>(k));
    m.by_time.push_back({0.0, times[k], op});
    m.by_size.push_back({sizes[k], op});
  }
  detail::set_percent(m.by_time, [](const auto& r) { return r.time.total; }, [](auto& r) -> double& { return r.time_percent; });
  detail::order_rows(m.by_time, [](const auto& r) { return std::make_tuple(detail::descending(r.time.total), r.time.count, std::string_view(r.operation)); });
  detail::order_rows(m.by_size, [](const auto& r) { return std::make_tuple(detail::descending(r.bytes.total), r.bytes.count, std::string_view(r.operation)); });
  return m;
}

/// `nvtx_sum`: host time of ranges (marks left out) per (domain, name, style) group.
/// \code
///   auto rows = nvscope::range_summary(t, nvscope::index_trace(t));
/// \endcode
inline std::vector<range_summary_row> range_summary(const trace& t, const trace_index& x) {
  const auto ng = x.group_first.size();
  const auto stats = detail::grouped_stats(
      ng, t.ranges.size(), [&](std::size_t i) -> std::size_t { return x.group_of[i] == attribution::none ? ng : x.group_of[i]; },
      [&](std::size_t i) { return x.links.range_end[i] - t.ranges[i].start; });
  std::vector<range_summary_row> rows;
  for (std::size_t g = 0; g < ng; ++g) {
    const auto& first = t.ranges[x.group_first[g]];
    rows.push_back({0.0, stats[g], detail::style_name(first), detail::range_label(t, first), std::string(t.strings[first.name])});
  }
  detail::set_percent(rows, [](const auto& r) { return r.time.total; }, [](auto& r) -> double& { return r.time_percent; });
  detail::order_rows(rows, [](const auto& r) {
    return std::make_tuple(detail::descending(r.time.total), r.time.count, std::string_view(r.range), std::string_view(r.style));
  });
  return rows;
}

} // namespace v1
} // namespace nvscope

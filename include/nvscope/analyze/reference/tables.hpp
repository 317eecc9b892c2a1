// nvscope-target: nvscope
#pragma once

/// \file analyze/reference/tables.hpp
/// The six `nsys stats` tables nvscope prints, each defined as plainly as nsys's report script
/// states it (`reports/cuda_gpu_kern_sum.py`, `cuda_gpu_mem_time_sum.py`,
/// `cuda_gpu_mem_size_sum.py`, `nvtx_sum.py`, `nvtx_kern_sum.py`, `nvtx_gpu_proj_sum.py` of
/// Nsight Systems 2025.3), with nvscope's documented departures (docs/analysis.md) named where
/// they apply. `analyze()` is tested equal to these, field by field (tests/analyze/reference_test.cpp).
///
/// \code
///   #include <nvscope/analyze/reference/tables.hpp>
///   auto rows = nvscope::reference::cuda_gpu_kern_sum(t, nvscope::name_form::demangled);
/// \endcode

#include <nvscope/analyze/reference/common.hpp>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace nvscope {
inline namespace v1 {
namespace reference {

/// `cuda_gpu_kern_sum`: `SELECT name, sum(end - start), count(*), avg, median, min, max, stdev
/// FROM CUPTI_ACTIVITY_KIND_KERNEL GROUP BY name ORDER BY total DESC`, over kernels with a
/// valid end; ties by instances, then name. A name id past the string table prints
/// `<unknown>`.
/// `label(i)` names kernel `t.kernels[i]` (the `:nvtx-name` variant's name in reference/reports.hpp).
template <class Label>
std::vector<kernel_summary_row> kernel_sum_by(const trace& t, Label label) {
  std::map<std::string, std::vector<std::uint64_t>> by_name;
  for (std::size_t i = 0; i < t.kernels.size(); ++i)
    if (valid(t.kernels[i].start, t.kernels[i].end)) by_name[label(i)].push_back(t.kernels[i].end - t.kernels[i].start);
  std::vector<kernel_summary_row> rows;
  std::uint64_t whole = 0;
  for (const auto& [name, values] : by_name) {
    rows.push_back({0.0, stats(values), name});
    whole += rows.back().time.total;
  }
  for (auto& r : rows) r.time_percent = percent(r.time.total, whole);
  std::sort(rows.begin(), rows.end(), [](const kernel_summary_row& a, const kernel_summary_row& b) {
    return std::make_tuple(~a.time.total, a.time.count, a.name) < std::make_tuple(~b.time.total, b.time.count, b.name);
  });
  return rows;
}
inline std::vector<kernel_summary_row> cuda_gpu_kern_sum(const trace& t, name_form form) {
  return kernel_sum_by(t, [&](std::size_t i) { return std::string(kernel_name(t, t.kernels[i].name, form)); });
}

/// The operation nsys names a copy or memset by (`[CUDA memcpy Host-to-Device]`, ...,
/// `[CUDA memset]`).
inline std::string operation_of(const copy_record& c) {
  static const char* const names[] = {"Unknown",        "Host-to-Device",  "Device-to-Host",   "Host-to-Array",
                                      "Array-to-Host",  "Array-to-Array",  "Array-to-Device",  "Device-to-Array",
                                      "Device-to-Device", "Host-to-Host",  "Peer-to-Peer"};
  const auto k = static_cast<std::size_t>(c.kind);
  return std::string("[CUDA memcpy ") + (k < 11 ? names[k] : "Unknown") + "]";
}
inline std::string operation_of(const memset_record&) { return "[CUDA memset]"; }

/// Copies and memsets with a valid end, by operation: durations and bytes side by side.
struct memop_values {
  std::map<std::string, std::vector<std::uint64_t>> time, bytes;
};
inline memop_values memops_by_operation(const trace& t) {
  memop_values m;
  auto add = [&](const auto& r) {
    if (!valid(r.start, r.end)) return;
    m.time[operation_of(r)].push_back(r.end - r.start);
    m.bytes[operation_of(r)].push_back(r.bytes);
  };
  for (const auto& c : t.copies) add(c);
  for (const auto& s : t.memsets) add(s);
  return m;
}

/// `cuda_gpu_mem_time_sum`: `SELECT ... FROM CUPTI_ACTIVITY_KIND_MEMCPY UNION MEMSET GROUP BY
/// copyKind ORDER BY total DESC`; ties by count, then operation.
inline std::vector<memop_time_row> cuda_gpu_mem_time_sum(const trace& t) {
  std::vector<memop_time_row> rows;
  std::uint64_t whole = 0;
  for (const auto& [op, values] : memops_by_operation(t).time) {
    rows.push_back({0.0, stats(values), op});
    whole += rows.back().time.total;
  }
  for (auto& r : rows) r.time_percent = percent(r.time.total, whole);
  std::sort(rows.begin(), rows.end(), [](const memop_time_row& a, const memop_time_row& b) {
    return std::make_tuple(~a.time.total, a.time.count, a.operation) < std::make_tuple(~b.time.total, b.time.count, b.operation);
  });
  return rows;
}

/// `cuda_gpu_mem_size_sum`: the same groups by bytes, largest total first.
inline std::vector<memop_size_row> cuda_gpu_mem_size_sum(const trace& t) {
  std::vector<memop_size_row> rows;
  for (const auto& [op, values] : memops_by_operation(t).bytes) rows.push_back({stats(values), op});
  std::sort(rows.begin(), rows.end(), [](const memop_size_row& a, const memop_size_row& b) {
    return std::make_tuple(~a.bytes.total, a.bytes.count, a.operation) < std::make_tuple(~b.bytes.total, b.bytes.count, b.operation);
  });
  return rows;
}

/// A range group: nsys groups NVTX rows by the label it prints and the style (`GROUP BY name,
/// style`, the name being `domain:text`), so two ranges that print one label (`:q` in the
/// default domain, `q` in a domain named `:`) are one row.
using range_group = std::tuple<std::string, bool>;
inline range_group group_of(const trace& t, const range_record& r) { return {label(t, r), r.is_push_pop}; }

/// Each range group's first range, in order of first appearance (marks have none).
inline std::vector<std::uint32_t> group_firsts(const trace& t) {
  std::vector<std::uint32_t> first;
  std::set<range_group> seen;
  for (std::uint32_t r = 0; r < t.ranges.size(); ++r)
    if (!t.ranges[r].is_mark && seen.insert(group_of(t, t.ranges[r])).second) first.push_back(r);
  return first;
}

/// `nvtx_sum`: host time of ranges (`end - start`, unclosed ones closed at the trace's end)
/// grouped by (label, style), marks left out; `ORDER BY total DESC`, ties by instances,
/// label, style.
inline std::vector<range_summary_row> nvtx_sum(const trace& t) {
  const auto end = range_ends(t);
  std::vector<range_summary_row> rows;
  std::uint64_t whole = 0;
  for (const auto f : group_firsts(t)) {
    std::vector<std::uint64_t> values;
    for (std::uint32_t r = 0; r < t.ranges.size(); ++r)
      if (!t.ranges[r].is_mark && group_of(t, t.ranges[r]) == group_of(t, t.ranges[f])) values.push_back(end[r] - t.ranges[r].start);
    const auto& first = t.ranges[f];
    rows.push_back({0.0, stats(values), first.is_push_pop ? "PushPop" : "StartEnd", label(t, first), std::string(t.strings[first.name])});
    whole += rows.back().time.total;
  }
  for (auto& r : rows) r.time_percent = percent(r.time.total, whole);
  std::sort(rows.begin(), rows.end(), [](const range_summary_row& a, const range_summary_row& b) {
    return std::make_tuple(~a.time.total, a.time.count, a.range, a.style) < std::make_tuple(~b.time.total, b.time.count, b.range, b.style);
  });
  return rows;
}

/// The TID nsys prints for a thread: its OS id, or the index itself for a thread the trace
/// does not describe.
inline std::uint64_t tid_of(const trace& t, std::uint32_t thread) { return thread < t.threads.size() ? t.threads[thread].os_id : thread; }

/// The kernel name `nvtx_kern_sum` prints: in `form`, `<unknown>` for an id past the string table.
inline std::string kernel_label(const trace& t, string_id name, name_form form) { return std::string(kernel_name(t, name, form)); }

/// One joined row of nsys's `nvtx_kern_sum` query: (range, kernel) for each range enclosing the
/// kernel's launch on its thread; `range` is `no_index` for a kernel no range encloses (the
/// query's outer join keeps it, with no range).
struct range_kernel_join {
  std::uint32_t range, kernel;
};

/// `nvtx_kern_sum.py`'s join: each kernel with a valid end, with every range that encloses its
/// launch (the push/pop stack and the start/end ranges, `enclosing`), or once with no range
/// when none does or it has no launch (`LEFT JOIN` of the runtime calls and the ranges).
inline std::vector<range_kernel_join> range_kernel_joins(const trace& t, start_end_rule rule, attribution_rule credit = attribution_rule::thread) {
  const auto end = range_ends(t);
  const auto n = nest(t, end);
  std::vector<range_kernel_join> joined;
  for (std::uint32_t k = 0; k < t.kernels.size(); ++k) {
    const auto& kernel = t.kernels[k];
    if (!valid(kernel.start, kernel.end)) continue;
    const auto l = launch_of(t, kernel.correlation);
    const auto ranges = l == no_index ? std::vector<std::uint32_t>{} : enclosing(t, end, n, l, rule, credit);
    for (const auto r : ranges) joined.push_back({r, k});
    if (ranges.empty()) joined.push_back({no_index, k});
  }
  return joined;
}

/// `nvtx_kern_sum`: the joined rows grouped by (range group, thread, kernel name). NVTX Inst
/// counts distinct range instances; Kern Inst distinct kernels (`count(DISTINCT kernid)`), and
/// the time figures every joined row (a kernel under two nested ranges of one name, or two
/// instances of one start/end range, counts twice in Total, Avg, Med, StdDev). A kernel no
/// range encloses makes a row with an empty range and style and NVTX Inst 0, grouped by its
/// launching thread, and with no PID or TID (`launched` false) when it has no launch.
/// `ORDER BY "NVTX Range", PID, TID, total DESC` (no PID first), ties by style and kernel name.
inline std::vector<range_kernel_row> nvtx_kern_sum(const trace& t, name_form form, start_end_rule rule, attribution_rule credit = attribution_rule::thread) {
  using key = std::tuple<bool, range_group, std::uint32_t, std::string>; // ranged, group, thread, kernel name
  struct gathered {
    std::set<std::uint32_t> ranges, kernels;
    std::vector<std::uint64_t> durations; // one per joined row
    std::uint32_t first = no_index;
  };
  std::map<key, gathered> rows;
  for (const auto& j : range_kernel_joins(t, rule, credit)) {
    const auto& kernel = t.kernels[j.kernel];
    const auto name = kernel_label(t, kernel.name, form);
    const auto l = launch_of(t, kernel.correlation);
    auto& g = j.range == no_index ? rows[key{false, {}, l == no_index ? no_index : t.launches[l].thread, name}]
                                  : rows[key{true, group_of(t, t.ranges[j.range]), t.ranges[j.range].thread, name}];
    if (j.range != no_index) g.ranges.insert(j.range), g.first = j.range;
    g.kernels.insert(j.kernel);
    g.durations.push_back(kernel.end - kernel.start);
  }
  std::vector<range_kernel_row> out;
  for (auto& [k, g] : rows) {
    const bool ranged = std::get<0>(k);
    const auto thread = std::get<2>(k);
    range_kernel_row row{ranged ? label(t, t.ranges[g.first]) : std::string(), ranged ? (t.ranges[g.first].is_push_pop ? "PushPop" : "StartEnd") : "",
                         t.process_id, thread == no_index ? 0 : tid_of(t, thread), g.ranges.size(), stats(g.durations), std::get<3>(k),
                         ranged ? std::string(t.strings[t.ranges[g.first].name]) : std::string()};
    row.time.count = g.kernels.size();
    row.launched = thread != no_index;
    out.push_back(std::move(row));
  }
  std::stable_sort(out.begin(), out.end(), [](const range_kernel_row& a, const range_kernel_row& b) {
    return std::make_tuple(a.range, a.launched, a.tid, ~a.time.total, a.style, a.kernel) <
           std::make_tuple(b.range, b.launched, b.tid, ~b.time.total, b.style, b.kernel);
  });
  return out;
}

/// Per range, the GPU work launched inside it: the first start and last end of the kernels,
/// copies and memsets (with a valid end) whose launch it encloses, and how many distinct
/// launches that was (a graph launch is one op: nsys counts distinct correlation ids).
struct projected_range {
  timestamp_ns first = ~timestamp_ns{0}, last = 0;
  std::uint64_t ops = 0;
};

inline std::vector<projected_range> projections(const trace& t, start_end_rule rule, attribution_rule credit = attribution_rule::thread) {
  const auto end = range_ends(t);
  const auto n = nest(t, end);
  std::vector<projected_range> p(t.ranges.size());
  std::vector<std::set<std::uint32_t>> launches(t.ranges.size());
  auto add = [&](const auto& records) {
    for (const auto& g : records) {
      const auto l = launch_of(t, g.correlation);
      if (!valid(g.start, g.end) || l == no_index) continue;
      for (const auto r : enclosing(t, end, n, l, rule, credit)) {
        p[r].first = std::min(p[r].first, g.start);
        p[r].last = std::max(p[r].last, g.end);
        launches[r].insert(l);
      }
    }
  };
  add(t.kernels);
  add(t.copies);
  add(t.memsets);
  for (std::size_t r = 0; r < p.size(); ++r) p[r].ops = launches[r].size();
  return p;
}

/// `nvtx_gpu_proj_sum`: per range group, its instances that launched GPU work: projected
/// time (last end - first start), host time, GPU ops, mean nesting level, and mean children
/// that launched GPU work (push/pop nesting only: issue 48, item 3). `ORDER BY total proj
/// DESC`, ties by label and style.
inline std::vector<gpu_projection_row> nvtx_gpu_proj_sum(const trace& t, start_end_rule rule, attribution_rule credit = attribution_rule::thread) {
  const auto end = range_ends(t);
  const auto n = nest(t, end);
  const auto p = projections(t, rule, credit);
  std::vector<std::uint64_t> children(t.ranges.size(), 0); // per range: its children that launched GPU work
  for (std::uint32_t c = 0; c < t.ranges.size(); ++c)
    if (n.parent[c] != no_index && p[c].ops > 0) ++children[n.parent[c]];
  std::vector<gpu_projection_row> rows;
  for (const auto f : group_firsts(t)) {
    std::vector<std::uint64_t> projected;
    std::uint64_t host = 0, ops = 0, level = 0, kids = 0;
    for (std::uint32_t r = 0; r < t.ranges.size(); ++r) {
      const auto& range = t.ranges[r];
      if (range.is_mark || group_of(t, range) != group_of(t, t.ranges[f]) || p[r].ops == 0) continue;
      projected.push_back(p[r].last - p[r].first);
      host += end[r] - range.start;
      ops += p[r].ops;
      level += n.depth[r];
      kids += children[r];
    }
    if (projected.empty()) continue;
    const auto& first = t.ranges[f];
    const auto count = static_cast<double>(projected.size());
    rows.push_back({label(t, first), first.is_push_pop ? "PushPop" : "StartEnd", stats(projected), host, ops, static_cast<double>(ops) / count,
                    static_cast<double>(level) / count, static_cast<double>(kids) / count, std::string(t.strings[first.name])});
  }
  std::sort(rows.begin(), rows.end(), [](const gpu_projection_row& a, const gpu_projection_row& b) {
    return std::make_tuple(~a.projected.total, a.range, a.style) < std::make_tuple(~b.projected.total, b.range, b.style);
  });
  return rows;
}

} // namespace reference
} // namespace v1
} // namespace nvscope

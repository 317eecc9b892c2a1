// nvscope-target: nvscope
#pragma once

/// \file analyze/reference/reports.hpp
/// The `nsys stats` reports beyond the six tables, each defined as plainly as nsys's report
/// script states it (`reports/cuda_api_sum.py`, `cuda_api_trace.py`, `cuda_gpu_trace.py`,
/// `cuda_gpu_sum.py`, `cuda_api_gpu_sum.py`, `cuda_gpu_kern_gb_sum.py`, `cuda_kern_exec_trace.py`, `cuda_kern_exec_sum.py`,
/// `nvtx_pushpop_sum.py`, `nvtx_pushpop_trace.py`, `nvtx_startend_sum.py`, `nvtx_gpu_proj_trace.py`), with nvscope's
/// documented departures (docs/analysis.md, "The other nsys reports") named where they apply;
/// the `:nvtx-name` variants read kernel names from `kernel_labels_nvtx` (reports/kernel_helper.py).
/// Ties the script leaves to SQLite's scan order are broken by the record's place in the trace.
/// analyze/reports.hpp is tested equal to these (tests/analyze/reports_test.cpp).
///
/// \code
///   #include <nvscope/analyze/reference/reports.hpp>
///   auto rows = nvscope::reference::cuda_api_sum(t);
/// \endcode

#include <nvscope/analyze/reference/common.hpp>
#include <nvscope/analyze/reference/tables.hpp>
#include <nvscope/analyze/report_rows.hpp>

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace nvscope {
inline namespace v1 {
namespace reference {

/// The API name nsys prints: `CASE substr(name, -6, 2) WHEN '_v' THEN substr(name, 1,
/// length(name) - 6) ELSE name END` (a version suffix `_vNNNN` cut).
inline std::string api_name(std::string_view name) {
  if (name.size() >= 6 && name.substr(name.size() - 6, 2) == "_v") return std::string(name.substr(0, name.size() - 6));
  return std::string(name);
}

/// A call nsys's API reports read: CUPTI_ACTIVITY_KIND_RUNTIME holds every runtime and driver
/// call but cudaGetLastError (nsys 2025.3.1 records none of the calls nvscope sees on the
/// fidelity workload), and the scripts take the rows with an end.
inline bool nsys_api_row(const trace& t, const api_record& a) {
  return valid(a.start, a.end) && api_name(t.strings[a.name]) != "cudaGetLastError";
}

/// `cuda_api_sum`: `SELECT sum(end - start), count(*), avg, median, min, max, stdev FROM
/// CUPTI_ACTIVITY_KIND_RUNTIME GROUP BY nameId ORDER BY total DESC`, the name printed by
/// `api_name`; calls without a valid end left out; ties by count, then name.
inline std::vector<api_summary_row> cuda_api_sum(const trace& t) {
  std::map<string_id, std::vector<std::uint64_t>> by_name;
  for (const auto& a : t.api_calls)
    if (nsys_api_row(t, a)) by_name[a.name].push_back(a.end - a.start);
  std::vector<api_summary_row> rows;
  std::uint64_t whole = 0;
  for (const auto& [name, values] : by_name) {
    rows.push_back({0.0, stats(values), api_name(t.strings[name])});
    whole += rows.back().time.total;
  }
  for (auto& r : rows) r.time_percent = percent(r.time.total, whole);
  std::stable_sort(rows.begin(), rows.end(), [](const api_summary_row& a, const api_summary_row& b) {
    return std::make_tuple(~a.time.total, a.time.count, a.name) < std::make_tuple(~b.time.total, b.time.count, b.name);
  });
  return rows;
}

/// `cuda_api_trace`: every API call with a valid end, `ORDER BY start`, with its thread's OS
/// id and name (`ThreadNames`); nsys's Result and T-Pri are not recorded.
inline std::vector<api_trace_row> cuda_api_trace(const trace& t) {
  std::vector<api_trace_row> rows;
  for (const auto& a : t.api_calls) {
    if (!nsys_api_row(t, a)) continue;
    const auto named = a.thread < t.threads.size() ? t.threads[a.thread].name : 0;
    rows.push_back({a.start, a.end - a.start, api_name(t.strings[a.name]), a.correlation, t.process_id, tid_of(t, a.thread),
                    named ? std::string(t.strings[named]) : std::string()});
  }
  std::stable_sort(rows.begin(), rows.end(), [](const api_trace_row& a, const api_trace_row& b) { return a.start < b.start; });
  return rows;
}

/// A device's label in `cuda_gpu_trace`'s Device column is `printf('%s (%d)', gpu.name,
/// deviceId)`; this is the name, empty where `TARGET_INFO_GPU` (the trace's devices) lacks it.
inline std::string device_name(const trace& t, std::uint16_t device) {
  for (const auto& d : t.devices)
    if (d.id == device) return std::string(t.strings[d.name]);
  return {};
}

/// `cuda_gpu_kern_sum:nvtx-name` (reports/kernel_helper.py, `QUERY_NVTX_KERNEL_NAME`): each
/// kernel joined to the API calls of its correlation id, each call to the NVTX ranges of its
/// thread with `startNS <= call.start AND endNS >= call.end` (push/pop and start/end ranges
/// whose `endGlobalTid` is NULL, so not a start/end range ended on another thread), and
/// `max(startNS)` picks the range; the name is `range || '/' || kernel`, or the kernel's alone
/// when no range matched (`COALESCE`). The script leaves which range wins a tie of starts to
/// SQLite; nvscope takes the first to end, then the later record. Unclosed ranges end at the
/// trace's end (nvscope's rule; the script ends them at the last NVTX timestamp).
inline std::string kernel_name_with_range(const trace& t, const std::vector<timestamp_ns>& end, const kernel_record& k, name_form form) {
  std::uint32_t best = no_index;
  for (const auto& a : t.api_calls) {
    if (a.correlation != k.correlation || !valid(a.start, a.end)) continue;
    for (std::uint32_t r = 0; r < t.ranges.size(); ++r) {
      const auto& x = t.ranges[r];
      if (x.is_mark || x.closing_thread() != x.thread || x.thread != a.thread || x.start > a.start || end[r] < a.end) continue;
      if (best == no_index || x.start > t.ranges[best].start || (x.start == t.ranges[best].start && (end[r] < end[best] || (end[r] == end[best] && r > best))))
        best = r;
    }
  }
  const std::string kernel(kernel_name(t, k.name, form));
  return best == no_index ? kernel : std::string(t.strings[t.ranges[best].name]) + "/" + kernel;
}

/// The Name each kernel row prints, indexed as `t.kernels`: kernel_helper.py's
/// `CUPTI_ACTIVITY_KIND_KERNEL_NAMED` view without `:nvtx-name`, the name in `form`
/// (`demangledName`, `shortName` with `:base`, `mangledName` with `:mangled`).
inline std::vector<std::string> kernel_labels(const trace& t, name_form form) {
  std::vector<std::string> names;
  for (const auto& k : t.kernels) names.push_back(kernel_label(t, k.name, form));
  return names;
}

/// The same view with `:nvtx-name`: each kernel's name by `kernel_name_with_range`. Every
/// report below that offers `[:nvtx-name][:base|:mangled]` reads its kernels from this view and
/// nothing else: the kernel rows' Name changes, API calls, copies and memsets keep theirs.
inline std::vector<std::string> kernel_labels_nvtx(const trace& t, name_form form) {
  const auto end = range_ends(t);
  std::vector<std::string> names;
  for (const auto& k : t.kernels) names.push_back(kernel_name_with_range(t, end, k, form));
  return names;
}

/// `cuda_gpu_kern_sum:nvtx-name[:base|:mangled]`: `cuda_gpu_kern_sum`'s query over
/// `kernel_name_with_range`'s names.
inline std::vector<kernel_summary_row> cuda_gpu_kern_sum_nvtx(const trace& t, name_form form) {
  const auto names = kernel_labels_nvtx(t, form);
  return kernel_sum_by(t, [&](std::size_t i) { return names[i]; });
}

/// nsys's throughput of a copy or memset: `bytes * (1000000000 / duration)`, integer division
/// as SQLite does it; no value for 0 ns (SQLite's division by zero is NULL).
inline void set_throughput(gpu_trace_row& row) {
  row.has_throughput = row.duration != 0;
  row.throughput = row.duration ? row.bytes * (1000000000ull / row.duration) : 0;
}

/// `cuda_gpu_trace`'s three sub-queries: kernels (named by `names`, indexed as `t.kernels`),
/// copies, memsets with a valid end.
inline std::vector<gpu_trace_row> gpu_operations(const trace& t, const std::vector<std::string>& names) {
  std::vector<gpu_trace_row> rows;
  for (std::size_t i = 0; i < t.kernels.size(); ++i) {
    const auto& k = t.kernels[i];
    if (!valid(k.start, k.end)) continue;
    const auto& c = t.kernel_configs[k.config];
    gpu_trace_row r;
    r.start = k.start, r.duration = k.end - k.start, r.correlation = k.correlation, r.op = gpu_operation::kernel;
    for (int j = 0; j < 3; ++j) r.grid[j] = c.grid[j], r.block[j] = c.block[j];
    r.registers = c.registers, r.shared_bytes = c.shared_bytes, r.device = c.device, r.context = c.context, r.stream = k.stream;
    r.device_name = device_name(t, c.device);
    r.name = names[i];
    rows.push_back(std::move(r));
  }
  auto add = [&](const auto& m, gpu_operation op, memory_kind src, memory_kind dst) {
    if (!valid(m.start, m.end)) return;
    gpu_trace_row r;
    r.start = m.start, r.duration = m.end - m.start, r.correlation = m.correlation, r.op = op, r.bytes = m.bytes;
    r.src = src, r.dst = dst, r.device = m.device, r.context = m.context, r.stream = m.stream;
    set_throughput(r);
    r.device_name = device_name(t, m.device);
    r.name = operation_of(m);
    rows.push_back(std::move(r));
  };
  for (const auto& c : t.copies) add(c, gpu_operation::copy, c.src, c.dst);
  for (const auto& s : t.memsets) add(s, gpu_operation::memset, s.memory, memory_kind::unknown);
  return rows;
}

/// `cuda_gpu_trace`: kernels, copies and memsets `UNION ALL ... ORDER BY start`; a tie keeps
/// kernels, then copies, then memsets, each in record order.
inline std::vector<gpu_trace_row> gpu_trace_by(const trace& t, const std::vector<std::string>& names) {
  auto rows = gpu_operations(t, names);
  std::stable_sort(rows.begin(), rows.end(), [](const gpu_trace_row& a, const gpu_trace_row& b) { return a.start < b.start; });
  return rows;
}
inline std::vector<gpu_trace_row> cuda_gpu_trace(const trace& t, name_form form) { return gpu_trace_by(t, kernel_labels(t, form)); }

/// `cuda_gpu_trace:nvtx-name[:base|:mangled]`: the query over the `:nvtx-name` view
/// (`kern.name AS "name"` from `CUPTI_ACTIVITY_KIND_KERNEL_NAMED`); a copy's
/// `'[CUDA memcpy ' || memopstr.label || ']'` and `'[CUDA memset]'` as they were.
inline std::vector<gpu_trace_row> cuda_gpu_trace_nvtx(const trace& t, name_form form) { return gpu_trace_by(t, kernel_labels_nvtx(t, form)); }

/// The category of a GPU operation in `cuda_gpu_sum`: `'CUDA_KERNEL'` or `'MEMORY_OPER'`.
inline operation_category category_of(gpu_operation op) {
  return op == gpu_operation::kernel ? operation_category::cuda_kernel : operation_category::memory_oper;
}

/// Named durations grouped by name, `ORDER BY total DESC`, the category of each group's first
/// (in the given order); ties by count, then name.
inline std::vector<gpu_summary_row> summary_by_name(const std::vector<std::tuple<std::string, std::uint64_t, operation_category>>& ops) {
  std::map<std::string, std::vector<std::uint64_t>> by_name;
  std::map<std::string, operation_category> category;
  for (const auto& [name, duration, cat] : ops) {
    by_name[name].push_back(duration);
    category.emplace(name, cat);
  }
  std::vector<gpu_summary_row> rows;
  std::uint64_t whole = 0;
  for (const auto& [name, values] : by_name) {
    rows.push_back({0.0, stats(values), category[name], name});
    whole += rows.back().time.total;
  }
  for (auto& r : rows) r.time_percent = percent(r.time.total, whole);
  std::stable_sort(rows.begin(), rows.end(), [](const gpu_summary_row& a, const gpu_summary_row& b) {
    return std::make_tuple(~a.time.total, a.time.count, a.name) < std::make_tuple(~b.time.total, b.time.count, b.name);
  });
  return rows;
}

/// `cuda_gpu_sum`: the operations of `cuda_gpu_trace` (kernels, copies, memsets `UNION ALL`)
/// `GROUP BY name ORDER BY total DESC`, Category `CUDA_KERNEL` or `MEMORY_OPER`.
inline std::vector<gpu_summary_row> gpu_sum_by(const trace& t, const std::vector<std::string>& names) {
  std::vector<std::tuple<std::string, std::uint64_t, operation_category>> ops;
  for (const auto& r : gpu_operations(t, names)) ops.emplace_back(r.name, r.duration, category_of(r.op));
  return summary_by_name(ops);
}
inline std::vector<gpu_summary_row> cuda_gpu_sum(const trace& t, name_form form) { return gpu_sum_by(t, kernel_labels(t, form)); }

/// `cuda_gpu_sum:nvtx-name[:base|:mangled]`: the kernels' sub-query reads the `:nvtx-name` view
/// (`SELECT name ... FROM CUPTI_ACTIVITY_KIND_KERNEL_NAMED`), so kernels group by `range/kernel`;
/// the memcpy and memset rows keep their names.
inline std::vector<gpu_summary_row> cuda_gpu_sum_nvtx(const trace& t, name_form form) { return gpu_sum_by(t, kernel_labels_nvtx(t, form)); }

/// `cuda_api_gpu_sum`: API calls (`'CUDA_API'`, the name spelled by `api_name`), then the
/// operations of `cuda_gpu_sum`, `UNION ALL ... GROUP BY name ORDER BY total DESC`.
inline std::vector<gpu_summary_row> api_gpu_sum_by(const trace& t, const std::vector<std::string>& names) {
  std::vector<std::tuple<std::string, std::uint64_t, operation_category>> ops;
  for (const auto& a : t.api_calls)
    if (nsys_api_row(t, a)) ops.emplace_back(api_name(t.strings[a.name]), a.end - a.start, operation_category::cuda_api);
  for (const auto& r : gpu_operations(t, names)) ops.emplace_back(r.name, r.duration, category_of(r.op));
  return summary_by_name(ops);
}
inline std::vector<gpu_summary_row> cuda_api_gpu_sum(const trace& t, name_form form) { return api_gpu_sum_by(t, kernel_labels(t, form)); }

/// `cuda_api_gpu_sum:nvtx-name[:base|:mangled]`: its `query_kernel` (`SELECT name, end - start,
/// 'CUDA_KERNEL' FROM CUPTI_ACTIVITY_KIND_KERNEL_NAMED`) over the `:nvtx-name` view; the API,
/// memcpy and memset rows keep their names.
inline std::vector<gpu_summary_row> cuda_api_gpu_sum_nvtx(const trace& t, name_form form) { return api_gpu_sum_by(t, kernel_labels_nvtx(t, form)); }

/// `cuda_gpu_kern_gb_sum`: kernels `GROUP BY name, gridX, gridY, gridZ, blockX, blockY, blockZ
/// ORDER BY total DESC, count, name`; ties then by grid and block.
inline std::vector<kernel_grid_summary_row> kern_gb_sum_by(const trace& t, const std::vector<std::string>& names) {
  using key = std::tuple<std::string, std::uint32_t, std::uint32_t, std::uint32_t, std::uint16_t, std::uint16_t, std::uint16_t>;
  std::map<key, std::vector<std::uint64_t>> groups;
  for (std::size_t i = 0; i < t.kernels.size(); ++i) {
    const auto& k = t.kernels[i];
    if (!valid(k.start, k.end)) continue;
    const auto& c = t.kernel_configs[k.config];
    groups[key{names[i], c.grid[0], c.grid[1], c.grid[2], c.block[0], c.block[1], c.block[2]}].push_back(k.end - k.start);
  }
  std::vector<kernel_grid_summary_row> rows;
  std::uint64_t whole = 0;
  for (const auto& [k, values] : groups) {
    kernel_grid_summary_row r;
    r.time = stats(values), r.name = std::get<0>(k);
    r.grid[0] = std::get<1>(k), r.grid[1] = std::get<2>(k), r.grid[2] = std::get<3>(k);
    r.block[0] = std::get<4>(k), r.block[1] = std::get<5>(k), r.block[2] = std::get<6>(k);
    whole += r.time.total;
    rows.push_back(std::move(r));
  }
  for (auto& r : rows) r.time_percent = percent(r.time.total, whole);
  std::stable_sort(rows.begin(), rows.end(), [](const kernel_grid_summary_row& a, const kernel_grid_summary_row& b) {
    return std::make_tuple(~a.time.total, a.time.count, a.name) < std::make_tuple(~b.time.total, b.time.count, b.name);
  });
  return rows;
}
inline std::vector<kernel_grid_summary_row> cuda_gpu_kern_gb_sum(const trace& t, name_form form) { return kern_gb_sum_by(t, kernel_labels(t, form)); }

/// `cuda_gpu_kern_gb_sum:nvtx-name[:base|:mangled]`: the same `GROUP BY name, grid, block` over
/// the `:nvtx-name` view, so a kernel launched in two ranges is two rows.
inline std::vector<kernel_grid_summary_row> cuda_gpu_kern_gb_sum_nvtx(const trace& t, name_form form) {
  return kern_gb_sum_by(t, kernel_labels_nvtx(t, form));
}

/// One joined row of `cuda_kern_exec_trace`: kernel `k`, printed as `name`, with API call `a`.
inline kernel_exec_trace_row kernel_exec(const trace& t, const kernel_record& k, const api_record& a, const std::string& name) {
  kernel_exec_trace_row r;
  const auto& c = t.kernel_configs[k.config];
  r.api_start = a.start, r.api_duration = a.end - a.start;
  r.queued = k.start >= a.end;
  r.queue_start = r.queued ? a.end : 0, r.queue_duration = r.queued ? k.start - a.end : 0;
  r.kernel_start = k.start, r.kernel_duration = k.end - k.start, r.total_duration = std::max(a.end, k.end) - a.start;
  r.pid = t.process_id, r.tid = tid_of(t, a.thread), r.device = c.device;
  r.api_name = api_name(t.strings[a.name]);
  for (int i = 0; i < 3; ++i) r.grid[i] = c.grid[i], r.block[i] = c.block[i];
  r.kernel = name;
  return r;
}

/// `cuda_kern_exec_trace`: `FROM KERNEL AS k JOIN RUNTIME AS r ON k.correlationId ==
/// r.correlationId ORDER BY r.start`, kernels and calls with a valid end; queue time
/// `iif(k.start - r.end >= 0, k.start - r.end, NULL)`. A tie keeps kernel, then call, order.
inline std::vector<kernel_exec_trace_row> kern_exec_trace_by(const trace& t, const std::vector<std::string>& names) {
  std::vector<kernel_exec_trace_row> rows;
  for (std::size_t i = 0; i < t.kernels.size(); ++i) {
    const auto& k = t.kernels[i];
    for (const auto& a : t.api_calls)
      if (valid(k.start, k.end) && valid(a.start, a.end) && k.correlation == a.correlation) rows.push_back(kernel_exec(t, k, a, names[i]));
  }
  std::stable_sort(rows.begin(), rows.end(), [](const kernel_exec_trace_row& a, const kernel_exec_trace_row& b) { return a.api_start < b.api_start; });
  return rows;
}
inline std::vector<kernel_exec_trace_row> cuda_kern_exec_trace(const trace& t, name_form form) { return kern_exec_trace_by(t, kernel_labels(t, form)); }

/// `cuda_kern_exec_trace:nvtx-name[:base|:mangled]`: the join with `k` the `:nvtx-name` view
/// (`k.name AS "Kernel Name"`); the API Function column keeps its name.
inline std::vector<kernel_exec_trace_row> cuda_kern_exec_trace_nvtx(const trace& t, name_form form) {
  return kern_exec_trace_by(t, kernel_labels_nvtx(t, form));
}

/// `cuda_kern_exec_sum`: the joined rows `GROUP BY pid, tid, deviceId, apiName, kernName ORDER
/// BY avg(totalDur) DESC`, the queue figures over queued rows only (`count(QueDur)`); ties by
/// the group's key.
inline std::vector<kernel_exec_summary_row> kern_exec_sum_of(const std::vector<kernel_exec_trace_row>& joined) {
  using key = std::tuple<std::uint64_t, std::uint64_t, std::uint16_t, std::string, std::string>;
  std::map<key, std::vector<kernel_exec_trace_row>> groups;
  for (const auto& r : joined) groups[key{r.pid, r.tid, r.device, r.api_name, r.kernel}].push_back(r);
  std::vector<kernel_exec_summary_row> rows;
  for (const auto& [k, members] : groups) {
    std::vector<std::uint64_t> total, api, queue, kernel;
    for (const auto& m : members) {
      total.push_back(m.total_duration), api.push_back(m.api_duration), kernel.push_back(m.kernel_duration);
      if (m.queued) queue.push_back(m.queue_duration);
    }
    rows.push_back({std::get<0>(k), std::get<1>(k), std::get<2>(k), stats(total), stats(api), stats(queue), stats(kernel), std::get<3>(k),
                    std::get<4>(k)});
  }
  std::stable_sort(rows.begin(), rows.end(), [](const kernel_exec_summary_row& a, const kernel_exec_summary_row& b) { return a.total.average > b.total.average; });
  return rows;
}
inline std::vector<kernel_exec_summary_row> cuda_kern_exec_sum(const trace& t, name_form form) { return kern_exec_sum_of(reference::cuda_kern_exec_trace(t, form)); }

/// `cuda_kern_exec_sum:nvtx-name[:base|:mangled]`: its `runkern` join reads `k.name AS kernName`
/// from the `:nvtx-name` view, so the groups are `(pid, tid, device, API, range/kernel)`.
inline std::vector<kernel_exec_summary_row> cuda_kern_exec_sum_nvtx(const trace& t, name_form form) {
  return kern_exec_sum_of(reference::cuda_kern_exec_trace_nvtx(t, form));
}

/// `nvtx_pushpop_sum` (`push_pop` true) and `nvtx_startend_sum`: ranges of that style, marks
/// left out, `GROUP BY tag` where tag is the printed label (`domain:name`: two ranges that
/// print alike are one row here, as in nsys), duration `end - start` (unclosed ranges end at
/// the trace's end, `range_ends`); `ORDER BY total DESC`, ties by count, then label.
inline std::vector<range_style_summary_row> nvtx_style_sum(const trace& t, bool push_pop) {
  const auto end = range_ends(t);
  std::map<std::string, std::vector<std::uint64_t>> by_label;
  for (std::uint32_t r = 0; r < t.ranges.size(); ++r)
    if (!t.ranges[r].is_mark && t.ranges[r].is_push_pop == push_pop) by_label[label(t, t.ranges[r])].push_back(end[r] - t.ranges[r].start);
  std::vector<range_style_summary_row> rows;
  std::uint64_t whole = 0;
  for (const auto& [name, values] : by_label) {
    rows.push_back({0.0, stats(values), name});
    whole += rows.back().time.total;
  }
  for (auto& r : rows) r.time_percent = percent(r.time.total, whole);
  std::stable_sort(rows.begin(), rows.end(), [](const range_style_summary_row& a, const range_style_summary_row& b) {
    return std::make_tuple(~a.time.total, a.time.count, a.range) < std::make_tuple(~b.time.total, b.time.count, b.range);
  });
  return rows;
}
inline std::vector<range_style_summary_row> nvtx_pushpop_sum(const trace& t) { return nvtx_style_sum(t, true); }
inline std::vector<range_style_summary_row> nvtx_startend_sum(const trace& t) { return nvtx_style_sum(t, false); }

/// `nvtx_pushpop_trace`: every push/pop range with its parent (nvscope's nesting, `nest`: the
/// script's tightest containing range on the thread, but of two equal ranges the later nests
/// in the earlier), level, children, their summed durations and the stack of RangeIds (the
/// range's index in the trace); `ORDER BY start, duration`, ties by index.
inline std::vector<range_trace_row> nvtx_pushpop_trace(const trace& t) {
  const auto end = range_ends(t);
  const auto n = nest(t, end);
  std::vector<range_trace_row> rows;
  for (std::uint32_t r = 0; r < t.ranges.size(); ++r) {
    const auto& range = t.ranges[r];
    if (range.is_mark || !range.is_push_pop) continue;
    range_trace_row row;
    row.start = range.start, row.duration = end[r] - range.start, row.end = row.start + row.duration;
    for (std::uint32_t c = 0; c < t.ranges.size(); ++c)
      if (!t.ranges[c].is_mark && n.parent[c] == r) row.child_duration += end[c] - t.ranges[c].start, ++row.children;
    row.self_duration = row.duration > row.child_duration ? row.duration - row.child_duration : 0;
    row.name = label(t, range), row.pid = t.process_id, row.tid = tid_of(t, range.thread);
    row.level = n.depth[r], row.range = r, row.parent = n.parent[r];
    for (auto up = r; up != no_index; up = n.parent[up]) row.stack = ":" + std::to_string(up) + row.stack;
    row.name_tree = std::string(2 * row.level, '-') + row.name;
    rows.push_back(std::move(row));
  }
  std::stable_sort(rows.begin(), rows.end(), [](const range_trace_row& a, const range_trace_row& b) {
    return std::make_tuple(a.start, a.duration) < std::make_tuple(b.start, b.duration);
  });
  return rows;
}

/// nvtx_gpu_proj_trace.py's `NVTX_PARENT`: `SELECT cr.rangeId, pr.rangeId, min((cr.startNS -
/// pr.startNS) + (pr.endNS - cr.endNS)) ... ON pr.rangeId != cr.rangeId AND pr.startNS <=
/// cr.startNS AND pr.endNS >= cr.endNS AND pr.tid == cr.tid GROUP BY cid` over the ranges of
/// both styles (start/end ones by `rule`); its `tree` gives the level (0 at a range with no
/// parent). Of equal slack the lower index; nvscope's departure: of two identical ranges only
/// the earlier can hold the later, where the script makes each the other's parent.
inline nesting containment(const trace& t, const std::vector<timestamp_ns>& end, start_end_rule rule) {
  const auto n = static_cast<std::uint32_t>(t.ranges.size());
  const auto counted = [&](const range_record& r) {
    return !r.is_mark && (r.is_push_pop || rule == start_end_rule::opening_thread || r.closing_thread() == r.thread);
  };
  nesting out{std::vector<std::uint32_t>(n, no_index), std::vector<std::uint16_t>(n, 0)};
  for (std::uint32_t c = 0; c < n; ++c) {
    const auto& cr = t.ranges[c];
    if (!counted(cr)) continue;
    std::uint64_t least = ~std::uint64_t{0};
    for (std::uint32_t q = 0; q < n; ++q) {
      const auto& pr = t.ranges[q];
      if (q == c || !counted(pr) || pr.thread != cr.thread || pr.start > cr.start || end[q] < end[c]) continue;
      if (pr.start == cr.start && end[q] == end[c] && q > c) continue;
      const std::uint64_t slack = (cr.start - pr.start) + (end[q] - end[c]);
      if (slack < least) least = slack, out.parent[c] = q;
    }
  }
  for (std::uint32_t c = 0; c < n; ++c)
    for (auto up = out.parent[c]; up != no_index; up = out.parent[up]) ++out.depth[c];
  return out;
}

/// `nvtx_gpu_proj_trace`: each range (both styles; start/end ranges by `rule`, nsys's keeps
/// those ended on their own thread) with the GPU work launched inside it (`projections`:
/// `min(op.start)`, `max(op.end) - min(op.start)`, `count(DISTINCT correlationId)`), its level,
/// parent and stack by the script's containment (`containment`), and its children that
/// launched work (`child`: `count(parentId)` over the projected rows); `ORDER BY projected
/// start, projected duration DESC`, ties by index.
inline std::vector<range_projection_trace_row> nvtx_gpu_proj_trace(const trace& t, start_end_rule rule) {
  const auto end = range_ends(t);
  const auto n = containment(t, end, rule);
  const auto p = projections(t, rule);
  std::vector<range_projection_trace_row> rows;
  for (std::uint32_t r = 0; r < t.ranges.size(); ++r) {
    const auto& range = t.ranges[r];
    if (range.is_mark || p[r].ops == 0) continue;
    range_projection_trace_row row;
    row.name = label(t, range), row.projected_start = p[r].first, row.projected_duration = p[r].last - p[r].first;
    row.start = range.start, row.duration = end[r] - range.start, row.push_pop = range.is_push_pop;
    row.pid = t.process_id, row.tid = tid_of(t, range.thread), row.gpu_ops = p[r].ops, row.level = n.depth[r];
    for (std::uint32_t c = 0; c < t.ranges.size(); ++c) row.children += !t.ranges[c].is_mark && n.parent[c] == r && p[c].ops > 0;
    row.range = r, row.parent = n.parent[r];
    for (auto up = r; up != no_index; up = n.parent[up]) row.stack = ":" + std::to_string(up) + row.stack;
    rows.push_back(std::move(row));
  }
  std::stable_sort(rows.begin(), rows.end(), [](const range_projection_trace_row& a, const range_projection_trace_row& b) {
    return std::make_tuple(a.projected_start, ~a.projected_duration) < std::make_tuple(b.projected_start, ~b.projected_duration);
  });
  return rows;
}

} // namespace reference
} // namespace v1
} // namespace nvscope

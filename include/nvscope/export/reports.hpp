// nvscope-target: nvscope
#pragma once

/// \file export/reports.hpp
/// Every `nsys stats` report nvscope computes, chosen by nsys's name (`cuda_api_sum`,
/// `cuda_gpu_trace:base`, `summary`, ...), as a table with nsys's column names in nsys's
/// order: aligned text, CSV as `nsys stats --format csv` writes it, or JSON. The six tables
/// of `analysis_report` and those of analyze/reports.hpp alike.
///
/// \code
///   auto chosen = nvscope::parse_reports("summary,cuda_gpu_trace:base");
///   if (!chosen.error.empty()) { std::fprintf(stderr, "%s\n", chosen.error.c_str()); return 2; }
///   for (const auto& c : chosen.reports) std::fputs(nvscope::report_text(t, r, c).c_str(), stdout);
/// \endcode

#include <nvscope/analyze/report.hpp>
#include <nvscope/analyze/reports.hpp>
#include <nvscope/analyze/summaries.hpp>
#include <nvscope/export/detail/json_text.hpp>
#include <nvscope/export/table.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace nvscope {
inline namespace v1 {

/// The reports of analyze/reports.hpp, computed from the trace when asked for.
enum class trace_report : std::uint8_t {
  cuda_api_sum, cuda_api_trace, cuda_gpu_trace, cuda_gpu_sum, cuda_kern_exec_trace, cuda_kern_exec_sum,
  nvtx_pushpop_sum, nvtx_pushpop_trace, nvtx_startend_sum, cuda_api_gpu_sum, cuda_gpu_kern_gb_sum, nvtx_gpu_proj_trace
};

/// One report asked for: one of the six tables of `analysis_report` or a `trace_report`, and
/// for a report with kernel names (the seven nsys offers `[:nvtx-name][:base|:mangled]` on)
/// the spelling its `:base` or `:mangled` variant asks for and its `:nvtx-name` variant.
struct report_choice {
  bool from_analysis = false;         ///< true: `table` is one of the six; false: `computed`
  report table = report::cuda_gpu_kern_sum;
  trace_report computed = trace_report::cuda_api_sum;
  name_form names = name_form::demangled;
  bool nvtx_names = false;            ///< `:nvtx-name`: kernel names prefixed with their launch's innermost range
};

/// The reports of a list, or a one-line error.
struct report_selection {
  std::vector<report_choice> reports;
  std::string error; ///< "nvscope: reports: ..." when a name is not one nvscope computes
};

namespace detail {

struct trace_report_info {
  trace_report which;
  const char* name;
  const char* title;
  bool kernel_names; ///< offers [:nvtx-name][:base|:mangled]
};
inline constexpr trace_report_info trace_reports[] = {
    {trace_report::cuda_api_sum, "cuda_api_sum", "CUDA API Summary", false},
    {trace_report::cuda_api_trace, "cuda_api_trace", "CUDA API Trace", false},
    {trace_report::cuda_gpu_trace, "cuda_gpu_trace", "CUDA GPU Trace", true},
    {trace_report::cuda_gpu_sum, "cuda_gpu_sum", "CUDA GPU Summary (Kernels/MemOps)", true},
    {trace_report::cuda_kern_exec_trace, "cuda_kern_exec_trace", "CUDA Kernel Launch & Exec Time Trace", true},
    {trace_report::cuda_kern_exec_sum, "cuda_kern_exec_sum", "CUDA Kernel Launch & Exec Time Summary", true},
    {trace_report::nvtx_pushpop_sum, "nvtx_pushpop_sum", "NVTX Push/Pop Range Summary", false},
    {trace_report::nvtx_pushpop_trace, "nvtx_pushpop_trace", "NVTX Push/Pop Range Trace", false},
    {trace_report::nvtx_startend_sum, "nvtx_startend_sum", "NVTX Start/End Range Summary", false},
    {trace_report::cuda_api_gpu_sum, "cuda_api_gpu_sum", "CUDA Summary (API/Kernels/MemOps)", true},
    {trace_report::cuda_gpu_kern_gb_sum, "cuda_gpu_kern_gb_sum", "CUDA GPU Kernel/Grid/Block Summary", true},
    {trace_report::nvtx_gpu_proj_trace, "nvtx_gpu_proj_trace", "NVTX GPU Projection Trace", false},
};
inline const trace_report_info& info_of(trace_report r) noexcept { return trace_reports[static_cast<std::size_t>(r)]; }

} // namespace detail

/// nsys's name of a report asked for, with its variant: "cuda_gpu_trace:base".
/// \code
///   std::string file = stem + "." + nvscope::choice_name(c) + ".csv";
/// \endcode
inline std::string choice_name(const report_choice& c) {
  std::string n = c.from_analysis ? report_name(c.table) : detail::info_of(c.computed).name;
  if (c.nvtx_names) n += ":nvtx-name";
  if (c.names == name_form::base) n += ":base";
  if (c.names == name_form::mangled) n += ":mangled";
  return n;
}

/// What `nsys stats` prints when no report is named (its `summary`), of what nvscope
/// computes: nvtx_sum, cuda_api_sum, cuda_gpu_kern_sum, cuda_gpu_mem_time_sum,
/// cuda_gpu_mem_size_sum (osrt_sum and the graphics, OpenMP, OpenACC and unified-memory
/// summaries need data nvscope does not collect).
inline std::vector<report_choice> summary_reports() {
  report_choice api;
  api.computed = trace_report::cuda_api_sum;
  std::vector<report_choice> out;
  for (const report r : {report::nvtx_sum, report::cuda_gpu_kern_sum, report::cuda_gpu_mem_time_sum, report::cuda_gpu_mem_size_sum}) {
    report_choice c;
    c.from_analysis = true;
    c.table = r;
    out.push_back(c);
  }
  out.insert(out.begin() + 1, api);
  return out;
}

namespace detail {

// One variant of `c`'s name: "nvtx-name", "base" or "mangled" (one of the two, as nsys's
// `[:nvtx-name][:base|:mangled]`); false when not taken.
inline bool take_variant(std::string_view v, report_choice& c) {
  if (v == "nvtx-name" && !c.nvtx_names) return c.nvtx_names = true;
  if ((v != "base" && v != "mangled") || c.names != name_form::demangled) return false;
  c.names = v == "base" ? name_form::base : name_form::mangled;
  return true;
}

// One name of a list: "NAME" and its variants ("cuda_gpu_trace:base",
// "cuda_gpu_kern_sum:nvtx-name:mangled"); false when nvscope has no such report.
inline bool parse_choice(std::string_view item, report_choice& c, std::string& why) {
  const auto colon = item.find(':');
  const auto name = item.substr(0, colon);
  auto variants = colon == std::string_view::npos ? std::string_view{} : item.substr(colon + 1);
  bool kernel_names = false, found = false;
  for (const report r : all_reports)
    if (name == report_name(r)) c.from_analysis = true, c.table = r, found = true, kernel_names = r == report::cuda_gpu_kern_sum;
  for (const auto& info : trace_reports)
    if (name == info.name) c.computed = info.which, kernel_names = info.kernel_names, found = true;
  if (!found) return why = "no report named '" + std::string(name) + "'", false;
  while (colon != std::string_view::npos) {
    const auto next = variants.find(':');
    if (!kernel_names || !take_variant(variants.substr(0, next), c))
      return why = "'" + std::string(item) + "': " + std::string(name) + (kernel_names ? " takes [:nvtx-name][:base|:mangled]" : " takes no variant here"),
             false;
    if (next == std::string_view::npos) break;
    variants.remove_prefix(next + 1);
  }
  return true;
}

} // namespace detail

/// The reports of a comma-separated list of nsys's names (`summary` for nsys's default set),
/// in the list's order, each once.
/// \code
///   auto s = nvscope::parse_reports("cuda_api_sum,cuda_gpu_trace:base");   // s.error empty
/// \endcode
inline report_selection parse_reports(std::string_view list) {
  report_selection s;
  std::vector<std::string> seen;
  auto add = [&](const report_choice& c) {
    const auto n = choice_name(c);
    if (std::find(seen.begin(), seen.end(), n) == seen.end()) seen.push_back(n), s.reports.push_back(c);
  };
  while (!list.empty()) {
    const auto comma = list.find(',');
    const auto item = list.substr(0, comma);
    list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
    if (item.empty()) continue;
    report_choice c;
    std::string why;
    if (item == "summary") {
      for (const auto& r : summary_reports()) add(r);
    } else if (detail::parse_choice(item, c, why)) {
      add(c);
    } else {
      s.error = "nvscope: reports: " + why + " (nvscope computes summary, the six tables and " +
                "cuda_api_sum, cuda_api_trace, cuda_gpu_trace, cuda_gpu_sum, cuda_kern_exec_trace, cuda_kern_exec_sum, " +
                "nvtx_pushpop_sum, nvtx_pushpop_trace, nvtx_startend_sum, cuda_api_gpu_sum, cuda_gpu_kern_gb_sum, nvtx_gpu_proj_trace)";
      s.reports.clear();
      return s;
    }
  }
  return s;
}

namespace detail {

inline std::string fmt_opt(bool has, std::uint64_t v) { return has ? fmt_u(v) : std::string(); }

// nsys's label of a memory kind (ENUM_CUDA_MEM_KIND).
inline const char* memory_kind_label(memory_kind k) noexcept {
  switch (k) {
    case memory_kind::pageable: return "Pageable";
    case memory_kind::pinned: return "Pinned";
    case memory_kind::device: return "Device";
    case memory_kind::array: return "Array";
    case memory_kind::managed: return "Managed";
    case memory_kind::device_static: return "Device Static";
    case memory_kind::managed_static: return "Managed Static";
    case memory_kind::unknown: break;
  }
  return "Unknown";
}

inline std::vector<bool> numeric_columns(std::size_t n, std::initializer_list<std::size_t> text) {
  std::vector<bool> numeric(n, true);
  for (auto c : text) numeric[c] = false;
  return numeric;
}

inline void summary_cells(std::vector<std::string>& row, double percent, const duration_stats& s) {
  row.push_back(fmt_f(percent, 1));
  row.push_back(fmt_u(s.total));
  row.push_back(fmt_u(s.count));
  add_time_stats(row, s);
}

// The shape nsys's *_sum scripts share (cuda_api_sum, nvtx_pushpop_sum, nvtx_startend_sum):
// Time (%), the total, a count, the time statistics, then the row's label.
template <class Row, class Label>
table time_summary_table(const std::vector<Row>& rows, const char* count_column, const char* label_column, Label label) {
  table t;
  t.header = {"Time (%)", "Total Time (ns)", count_column, "Avg (ns)", "Med (ns)", "Min (ns)", "Max (ns)", "StdDev (ns)", label_column};
  t.numeric = numeric_columns(9, {8});
  for (const auto& r : rows) {
    std::vector<std::string> row;
    summary_cells(row, r.time_percent, r.time);
    row.push_back(label(r));
    t.rows.push_back(std::move(row));
  }
  return t;
}

inline table api_sum_table(const std::vector<api_summary_row>& rows) {
  return time_summary_table(rows, "Num Calls", "Name", [](const api_summary_row& r) { return r.name; });
}

inline table api_trace_table(const std::vector<api_trace_row>& rows) {
  table t;
  t.header = {"Start (ns)", "Duration (ns)", "Name", "Result", "CorrID", "Pid", "Tid", "T-Pri", "Thread Name"};
  t.numeric = numeric_columns(9, {2, 8});
  for (const auto& r : rows)
    t.rows.push_back({fmt_u(r.start), fmt_u(r.duration), r.name, "", fmt_u(r.correlation), fmt_u(r.pid), fmt_u(r.tid), "", r.thread_name});
  return t;
}

inline std::vector<std::string> gpu_trace_cells(const gpu_trace_row& r) {
  const bool k = r.op == gpu_operation::kernel;
  return {fmt_u(r.start), fmt_u(r.duration), fmt_u(r.correlation), fmt_opt(k, r.grid[0]), fmt_opt(k, r.grid[1]), fmt_opt(k, r.grid[2]),
          fmt_opt(k, r.block[0]), fmt_opt(k, r.block[1]), fmt_opt(k, r.block[2]), fmt_opt(k, r.registers),
          k ? fmt_mb(static_cast<double>(r.shared_bytes)) : "", "", k ? "" : fmt_mb(static_cast<double>(r.bytes)),
          r.has_throughput ? fmt_mb(static_cast<double>(r.throughput)) : "", k ? "" : memory_kind_label(r.src),
          r.op == gpu_operation::copy ? memory_kind_label(r.dst) : "", r.device_name + " (" + std::to_string(r.device) + ")",
          fmt_u(r.context), "", fmt_u(r.stream), r.name};
}

inline table gpu_trace_table(const std::vector<gpu_trace_row>& rows) {
  table t;
  t.header = {"Start (ns)", "Duration (ns)", "CorrId", "GrdX", "GrdY", "GrdZ", "BlkX", "BlkY", "BlkZ", "Reg/Trd", "StcSMem (MB)",
              "DymSMem (MB)", "Bytes (MB)", "Throughput (MB/s)", "SrcMemKd", "DstMemKd", "Device", "Ctx", "GreenCtx", "Strm", "Name"};
  t.numeric = numeric_columns(21, {14, 15, 16, 20});
  for (const auto& r : rows) t.rows.push_back(gpu_trace_cells(r));
  return t;
}

inline table gpu_sum_table(const std::vector<gpu_summary_row>& rows) {
  table t;
  t.header = {"Time (%)", "Total Time (ns)", "Instances", "Avg (ns)", "Med (ns)", "Min (ns)", "Max (ns)", "StdDev (ns)", "Category", "Operation"};
  t.numeric = numeric_columns(10, {8, 9});
  for (const auto& r : rows) {
    std::vector<std::string> row;
    summary_cells(row, r.time_percent, r.time);
    row.push_back(r.category == operation_category::cuda_api ? "CUDA_API" : r.category == operation_category::cuda_kernel ? "CUDA_KERNEL" : "MEMORY_OPER");
    row.push_back(r.name);
    t.rows.push_back(std::move(row));
  }
  return t;
}

// printf('%4d %4d %4d', x, y, z), as GridXYZ and BlockXYZ print.
template <class T>
std::string xyz(const T (&v)[3]) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%4llu %4llu %4llu", static_cast<unsigned long long>(v[0]), static_cast<unsigned long long>(v[1]),
                static_cast<unsigned long long>(v[2]));
  return buf;
}

inline table kern_gb_sum_table(const std::vector<kernel_grid_summary_row>& rows) {
  table t;
  t.header = {"Time (%)", "Total Time (ns)", "Instances", "Avg (ns)", "Med (ns)", "Min (ns)", "Max (ns)", "StdDev (ns)", "GridXYZ", "BlockXYZ", "Name"};
  t.numeric = numeric_columns(11, {8, 9, 10});
  for (const auto& r : rows) {
    std::vector<std::string> row;
    summary_cells(row, r.time_percent, r.time);
    row.push_back(xyz(r.grid));
    row.push_back(xyz(r.block));
    row.push_back(r.name);
    t.rows.push_back(std::move(row));
  }
  return t;
}

inline table kern_exec_trace_table(const std::vector<kernel_exec_trace_row>& rows) {
  table t;
  t.header = {"API Start (ns)", "API Dur (ns)", "Queue Start (ns)", "Queue Dur (ns)", "Kernel Start (ns)", "Kernel Dur (ns)", "Total Dur (ns)",
              "PID", "TID", "DevId", "API Function", "GridXYZ", "BlockXYZ", "Kernel Name"};
  t.numeric = numeric_columns(14, {10, 11, 12, 13});
  for (const auto& r : rows)
    t.rows.push_back({fmt_u(r.api_start), fmt_u(r.api_duration), fmt_opt(r.queued, r.queue_start), fmt_opt(r.queued, r.queue_duration),
                      fmt_u(r.kernel_start), fmt_u(r.kernel_duration), fmt_u(r.total_duration), fmt_u(r.pid), fmt_u(r.tid), fmt_u(r.device),
                      r.api_name, xyz(r.grid), xyz(r.block), r.kernel});
  return t;
}

// Avg, Med, Min, Max, StdDev of `s`; empty cells when it has no values (SQLite's NULL).
inline void stat_cells(std::vector<std::string>& row, const duration_stats& s) {
  if (s.count) return add_time_stats(row, s);
  row.insert(row.end(), 5, std::string());
}

inline table kern_exec_sum_table(const std::vector<kernel_exec_summary_row>& rows) {
  table t;
  t.header = {"PID", "TID", "DevId", "Count", "QCount"};
  for (const char* p : {"T", "A", "Q", "K"})
    for (const char* s : {"Avg (ns)", "Med (ns)", "Min (ns)", "Max (ns)", "StdDev (ns)"}) t.header.push_back(std::string(p) + s);
  t.header.insert(t.header.end(), {"API Name", "Kernel Name"});
  t.numeric = numeric_columns(27, {25, 26});
  for (const auto& r : rows) {
    std::vector<std::string> row{fmt_u(r.pid), fmt_u(r.tid), fmt_u(r.device), fmt_u(r.total.count), fmt_u(r.queue.count)};
    for (const auto* s : {&r.total, &r.api, &r.queue, &r.kernel}) stat_cells(row, *s);
    row.push_back(r.api_name);
    row.push_back(r.kernel_name);
    t.rows.push_back(std::move(row));
  }
  return t;
}

inline table range_style_table(const std::vector<range_style_summary_row>& rows) {
  return time_summary_table(rows, "Instances", "Range", [](const range_style_summary_row& r) { return r.range; });
}

inline table range_trace_table(const std::vector<range_trace_row>& rows) {
  table t;
  t.header = {"Start (ns)", "End (ns)", "Duration (ns)", "DurChild (ns)", "DurNonChild (ns)", "Name", "PID", "TID", "Lvl", "NumChild",
              "RangeId", "ParentId", "RangeStack", "NameTree"};
  t.numeric = numeric_columns(14, {5, 12, 13});
  for (const auto& r : rows)
    t.rows.push_back({fmt_u(r.start), fmt_u(r.end), fmt_u(r.duration), fmt_u(r.child_duration), fmt_u(r.self_duration), r.name, fmt_u(r.pid),
                      fmt_u(r.tid), fmt_u(r.level), fmt_u(r.children), fmt_u(r.range), fmt_opt(r.parent != no_index, r.parent), r.stack,
                      r.name_tree});
  return t;
}

inline table range_projection_table(const std::vector<range_projection_trace_row>& rows) {
  table t;
  t.header = {"Name", "Projected Start (ns)", "Projected Duration (ns)", "Orig Start (ns)", "Orig Duration (ns)", "Style", "PID", "TID",
              "NumGPUOps", "Lvl", "NumChild", "RangeId", "ParentId", "RangeStack"};
  t.numeric = numeric_columns(14, {0, 5, 13});
  for (const auto& r : rows)
    t.rows.push_back({r.name, fmt_u(r.projected_start), fmt_u(r.projected_duration), fmt_u(r.start), fmt_u(r.duration), r.push_pop ? "PushPop" : "StartEnd",
                      fmt_u(r.pid), fmt_u(r.tid), fmt_u(r.gpu_ops), fmt_u(r.level), fmt_u(r.children), fmt_u(r.range),
                      fmt_opt(r.parent != no_index, r.parent), r.stack});
  return t;
}

// The report `which`, its kernels named in `form`, prefixed with their range where `nvtx`
// (`:nvtx-name`: the report's `_nvtx` function).
inline table computed_table(const trace& t, trace_report which, name_form form, bool nvtx) {
  switch (which) {
    case trace_report::cuda_api_sum: return api_sum_table(cuda_api_sum(t));
    case trace_report::cuda_api_trace: return api_trace_table(cuda_api_trace(t));
    case trace_report::cuda_gpu_trace: return gpu_trace_table(nvtx ? cuda_gpu_trace_nvtx(t, form) : cuda_gpu_trace(t, form));
    case trace_report::cuda_gpu_sum: return gpu_sum_table(nvtx ? cuda_gpu_sum_nvtx(t, form) : cuda_gpu_sum(t, form));
    case trace_report::cuda_kern_exec_trace:
      return kern_exec_trace_table(nvtx ? cuda_kern_exec_trace_nvtx(t, form) : cuda_kern_exec_trace(t, form));
    case trace_report::cuda_kern_exec_sum: return kern_exec_sum_table(nvtx ? cuda_kern_exec_sum_nvtx(t, form) : cuda_kern_exec_sum(t, form));
    case trace_report::nvtx_pushpop_sum: return range_style_table(nvtx_pushpop_sum(t));
    case trace_report::nvtx_pushpop_trace: return range_trace_table(nvtx_pushpop_trace(t));
    case trace_report::nvtx_startend_sum: return range_style_table(nvtx_startend_sum(t));
    case trace_report::cuda_api_gpu_sum: return gpu_sum_table(nvtx ? cuda_api_gpu_sum_nvtx(t, form) : cuda_api_gpu_sum(t, form));
    case trace_report::cuda_gpu_kern_gb_sum: return kern_gb_sum_table(nvtx ? cuda_gpu_kern_gb_sum_nvtx(t, form) : cuda_gpu_kern_gb_sum(t, form));
    case trace_report::nvtx_gpu_proj_trace: return range_projection_table(nvtx_gpu_proj_trace(t));
  }
  return {};
}

} // namespace detail

/// The report `c` as a table with nsys's column names in nsys's order: one of the six from
/// `r` (the analysis of `t`), any other computed from `t`.
/// \code
///   auto tab = nvscope::report_table(t, r, nvscope::parse_reports("cuda_gpu_trace").reports[0]);
///   assert(tab.header[13] == "Throughput (MB/s)");
/// \endcode
inline table report_table(const trace& t, const analysis_report& r, const report_choice& c) {
  if (c.from_analysis && c.table == report::cuda_gpu_kern_sum && (c.nvtx_names || c.names != name_form::demangled)) {
    analysis_report named;
    named.kernels = c.nvtx_names ? cuda_gpu_kern_sum_nvtx(t, c.names) : kernel_summary(t, index_trace(t), c.names);
    return table_of(named, c.table);
  }
  return c.from_analysis ? table_of(r, c.table) : detail::computed_table(t, c.computed, c.names, c.nvtx_names);
}

/// The report as CSV, nsys's header row first.
/// \code
///   nvscope::write_file(stem + "." + nvscope::choice_name(c) + ".csv", nvscope::report_csv(t, r, c));
/// \endcode
inline std::string report_csv(const trace& t, const analysis_report& r, const report_choice& c) { return csv_of(report_table(t, r, c)); }

/// The report as an aligned text table under nsys's heading.
/// \code
///   std::fputs(nvscope::report_text(t, r, c).c_str(), stdout);
/// \endcode
inline std::string report_text(const trace& t, const analysis_report& r, const report_choice& c, const text_options& options = {}) {
  const char* title = c.from_analysis ? report_title(c.table) : detail::info_of(c.computed).title;
  return text_of(report_table(t, r, c), title, choice_name(c), options);
}

/// A table as a JSON array of objects keyed by nsys's column names: numeric cells as numbers,
/// empty cells as null, names as strings.
/// \code
///   std::string j = nvscope::json_of(nvscope::report_table(t, r, c));   // [{"Time (%)": 61.2, ...}, ...]
/// \endcode
inline std::string json_of(const table& t) {
  std::string out = "[";
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    out += i ? ",\n {" : "\n {";
    for (std::size_t c = 0; c < t.header.size(); ++c) {
      if (c) out += ", ";
      detail::append_json_string(out, t.header[c]);
      out += ": ";
      const auto& cell = t.rows[i][c];
      if (cell.empty()) out += "null";
      else if (t.numeric[c]) out += cell;
      else detail::append_json_string(out, cell);
    }
    out += "}";
  }
  return out + (t.rows.empty() ? "]" : "\n]");
}

/// The reports of `chosen` as one JSON object keyed by their names: `{"cuda_api_sum": [...], ...}`.
/// \code
///   nvscope::write_file("reports.json", nvscope::reports_json(t, r, nvscope::parse_reports("summary").reports));
/// \endcode
inline std::string reports_json(const trace& t, const analysis_report& r, const std::vector<report_choice>& chosen) {
  std::string out = "{";
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    out += i ? ",\n" : "\n";
    detail::append_json_string(out, choice_name(chosen[i]));
    out += ": " + json_of(report_table(t, r, chosen[i]));
  }
  return out + "\n}\n";
}

} // namespace v1
} // namespace nvscope

// nvscope-target: nvscope
#pragma once

/// \file export/table.hpp
/// The summaries as aligned text tables (sorted by GPU time, as `nsys stats` prints them)
/// and as CSV with nsys's exact column headers, so scripts written for
/// `nsys stats --format csv` keep working.
///
/// \code
///   auto r = nvscope::analyze(t);
///   std::fputs(nvscope::to_text(r).c_str(), stdout);                        // every table + metrics
///   std::string csv = nvscope::to_csv(r, nvscope::report::cuda_gpu_kern_sum);
/// \endcode

#include <nvscope/analyze/report.hpp>
#include <nvscope/detail/quote.hpp>
#include <nvscope/detail/sqlite_round.hpp>
#include <nvscope/detail/utf8.hpp>
#include <nvscope/export/diagnosis_text.hpp>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace nvscope {
inline namespace v1 {

/// The nsys reports nvscope reproduces.
enum class report { cuda_gpu_kern_sum, cuda_gpu_mem_time_sum, cuda_gpu_mem_size_sum, nvtx_sum, nvtx_kern_sum, nvtx_gpu_proj_sum };

/// All of them, in the order `nsys stats` prints them.
inline constexpr report all_reports[] = {report::nvtx_sum, report::cuda_gpu_kern_sum, report::cuda_gpu_mem_time_sum,
                                         report::cuda_gpu_mem_size_sum, report::nvtx_kern_sum, report::nvtx_gpu_proj_sum};

/// nsys's name of the report, e.g. "cuda_gpu_kern_sum".
/// \code
///   std::string file = std::string("out_") + nvscope::report_name(nvscope::report::nvtx_sum) + ".csv";
/// \endcode
inline const char* report_name(report r) noexcept {
  switch (r) {
    case report::cuda_gpu_kern_sum: return "cuda_gpu_kern_sum";
    case report::cuda_gpu_mem_time_sum: return "cuda_gpu_mem_time_sum";
    case report::cuda_gpu_mem_size_sum: return "cuda_gpu_mem_size_sum";
    case report::nvtx_sum: return "nvtx_sum";
    case report::nvtx_kern_sum: return "nvtx_kern_sum";
    case report::nvtx_gpu_proj_sum: return "nvtx_gpu_proj_sum";
  }
  return "unknown";
}

/// nsys's title of the report, e.g. "CUDA GPU Kernel Summary".
/// \code
///   std::puts(nvscope::report_title(nvscope::report::cuda_gpu_kern_sum));
/// \endcode
inline const char* report_title(report r) noexcept {
  switch (r) {
    case report::cuda_gpu_kern_sum: return "CUDA GPU Kernel Summary";
    case report::cuda_gpu_mem_time_sum: return "CUDA GPU MemOps Summary (by Time)";
    case report::cuda_gpu_mem_size_sum: return "CUDA GPU MemOps Summary (by Size)";
    case report::nvtx_sum: return "NVTX Range Summary";
    case report::nvtx_kern_sum: return "NVTX Range Kernel Summary";
    case report::nvtx_gpu_proj_sum: return "NVTX GPU Projection Summary";
  }
  return "unknown";
}

/// A report as rows of formatted cells; `numeric[i]` says column i is right-aligned.
struct table {
  std::vector<std::string> header;
  std::vector<bool> numeric;
  std::vector<std::vector<std::string>> rows;
};

namespace detail {

inline std::string fmt_u(std::uint64_t v) { return std::to_string(v); }
// `v` with `decimals` decimals as nsys prints a `round(x, decimals)` of its report scripts:
// SQLite's round() to `decimals` places, as nsys's scripts print their figures.
inline std::string fmt_f(double v, int decimals) { return sqlite_round_text(v, decimals); }
inline std::string fmt_mb(double bytes) { return fmt_f(bytes / 1e6, 3); }

// Time (%) of a row: empty where the table's total is 0, as nsys's `100 * total / sum(total)`
// gives NULL there.
template <class Rows, class Total>
std::string percent_cell(double percent, const Rows& rows, Total total_of) {
  std::uint64_t whole = 0;
  for (const auto& r : rows) whole += total_of(r);
  return whole ? fmt_f(percent, 1) : std::string();
}

inline void add_time_stats(std::vector<std::string>& row, const duration_stats& s) {
  row.push_back(fmt_f(s.average, 1));
  row.push_back(fmt_f(s.median, 1));
  row.push_back(fmt_u(s.min));
  row.push_back(fmt_u(s.max));
  row.push_back(fmt_f(s.stddev, 1));
}

inline void csv_cell(std::string& out, std::string_view cell) {
  const bool quote = cell.find_first_of(",\"\r\n") != std::string_view::npos;
  if (!quote) { out.append(cell.data(), cell.size()); return; }
  out.push_back('"');
  for (char c : cell) {
    if (c == '"') out.push_back('"');
    out.push_back(c);
  }
  out.push_back('"');
}

} // namespace detail

namespace detail {

inline void set_columns(table& t, std::initializer_list<const char*> names, std::initializer_list<bool> numeric) {
  for (auto n : names) t.header.emplace_back(n);
  t.numeric.assign(numeric.begin(), numeric.end());
}

inline void kernel_table(const analysis_report& r, table& t) {
  set_columns(t, {"Time (%)", "Total Time (ns)", "Instances", "Avg (ns)", "Med (ns)", "Min (ns)", "Max (ns)", "StdDev (ns)", "Name"},
              {true, true, true, true, true, true, true, true, false});
  for (const auto& k : r.kernels) {
    std::vector<std::string> row{percent_cell(k.time_percent, r.kernels, [](const kernel_summary_row& x) { return x.time.total; }),
                                 fmt_u(k.time.total), fmt_u(k.time.count)};
    add_time_stats(row, k.time);
    row.push_back(k.name);
    t.rows.push_back(std::move(row));
  }
}

inline void memop_time_table(const analysis_report& r, table& t) {
  set_columns(t, {"Time (%)", "Total Time (ns)", "Count", "Avg (ns)", "Med (ns)", "Min (ns)", "Max (ns)", "StdDev (ns)", "Operation"},
              {true, true, true, true, true, true, true, true, false});
  for (const auto& m : r.memops_by_time) {
    std::vector<std::string> row{percent_cell(m.time_percent, r.memops_by_time, [](const memop_time_row& x) { return x.time.total; }),
                                 fmt_u(m.time.total), fmt_u(m.time.count)};
    add_time_stats(row, m.time);
    row.push_back(m.operation);
    t.rows.push_back(std::move(row));
  }
}

inline void memop_size_table(const analysis_report& r, table& t) {
  set_columns(t, {"Total (MB)", "Count", "Avg (MB)", "Med (MB)", "Min (MB)", "Max (MB)", "StdDev (MB)", "Operation"},
              {true, true, true, true, true, true, true, false});
  for (const auto& m : r.memops_by_size) {
    const auto& b = m.bytes;
    t.rows.push_back({fmt_mb(static_cast<double>(b.total)), fmt_u(b.count), fmt_mb(b.average), fmt_mb(b.median),
                      fmt_mb(static_cast<double>(b.min)), fmt_mb(static_cast<double>(b.max)), fmt_mb(b.stddev), m.operation});
  }
}

inline void range_table(const analysis_report& r, table& t) {
  set_columns(t, {"Time (%)", "Total Time (ns)", "Instances", "Avg (ns)", "Med (ns)", "Min (ns)", "Max (ns)", "StdDev (ns)", "Style", "Range"},
              {true, true, true, true, true, true, true, true, false, false});
  for (const auto& x : r.ranges) {
    std::vector<std::string> row{percent_cell(x.time_percent, r.ranges, [](const range_summary_row& y) { return y.time.total; }),
                                 fmt_u(x.time.total), fmt_u(x.time.count)};
    add_time_stats(row, x.time);
    row.push_back(x.style);
    row.push_back(x.range);
    t.rows.push_back(std::move(row));
  }
}

inline void range_kernel_table(const analysis_report& r, table& t) {
  set_columns(t, {"NVTX Range", "Style", "PID", "TID", "NVTX Inst", "Kern Inst", "Total Time (ns)", "Avg (ns)", "Med (ns)", "Min (ns)",
                  "Max (ns)", "StdDev (ns)", "Kernel Name"},
              {false, false, true, true, true, true, true, true, true, true, true, true, false});
  for (const auto& x : r.range_kernels) {
    std::vector<std::string> row{x.range, x.style, x.launched ? fmt_u(x.pid) : std::string(), x.launched ? fmt_u(x.tid) : std::string(),
                                 fmt_u(x.range_instances), fmt_u(x.time.count), fmt_u(x.time.total)};
    add_time_stats(row, x.time);
    row.push_back(x.kernel);
    t.rows.push_back(std::move(row));
  }
}

inline void projection_table(const analysis_report& r, table& t) {
  set_columns(t, {"Range", "Style", "Total Proj Time (ns)", "Total Range Time (ns)", "Range Instances", "Proj Avg (ns)", "Proj Med (ns)",
                  "Proj Min (ns)", "Proj Max (ns)", "Proj StdDev (ns)", "Total GPU Ops", "Avg GPU Ops", "Avg Range Lvl", "Avg Num Child"},
              {false, false, true, true, true, true, true, true, true, true, true, true, true, true});
  for (const auto& x : r.projections) {
    std::vector<std::string> row{x.range, x.style, fmt_u(x.projected.total), fmt_u(x.total_range_time), fmt_u(x.projected.count)};
    add_time_stats(row, x.projected);
    row.push_back(fmt_u(x.total_gpu_ops));
    row.push_back(fmt_f(x.avg_gpu_ops, 1));
    row.push_back(fmt_f(x.avg_range_level, 1));
    row.push_back(fmt_f(x.avg_children, 1));
    t.rows.push_back(std::move(row));
  }
}

} // namespace detail

/// The report `which` of `r` as a table with nsys's column names, in nsys's order.
/// \code
///   auto tab = nvscope::table_of(r, nvscope::report::nvtx_gpu_proj_sum);
///   assert(tab.header[2] == "Total Proj Time (ns)");
/// \endcode
inline table table_of(const analysis_report& r, report which) {
  table t;
  switch (which) {
    case report::cuda_gpu_kern_sum: detail::kernel_table(r, t); break;
    case report::cuda_gpu_mem_time_sum: detail::memop_time_table(r, t); break;
    case report::cuda_gpu_mem_size_sum: detail::memop_size_table(r, t); break;
    case report::nvtx_sum: detail::range_table(r, t); break;
    case report::nvtx_kern_sum: detail::range_kernel_table(r, t); break;
    case report::nvtx_gpu_proj_sum: detail::projection_table(r, t); break;
  }
  return t;
}

/// A table as CSV: its header row, then one line per row (RFC 4180 quoting).
/// \code
///   std::string csv = nvscope::csv_of(nvscope::table_of(r, nvscope::report::nvtx_sum));
/// \endcode
inline std::string csv_of(const table& t) {
  std::string out;
  auto line = [&](const std::vector<std::string>& cells) {
    for (std::size_t i = 0; i < cells.size(); ++i) {
      if (i) out.push_back(',');
      detail::csv_cell(out, cells[i]);
    }
    out.push_back('\n');
  };
  line(t.header);
  for (const auto& row : t.rows) line(row);
  return out;
}

/// The report as CSV: nsys's header row, then one line per row (RFC 4180 quoting).
/// \code
///   std::ofstream("kern.csv") << nvscope::to_csv(r, nvscope::report::cuda_gpu_kern_sum);
/// \endcode
inline std::string to_csv(const analysis_report& r, report which) { return csv_of(table_of(r, which)); }

/// How text tables are laid out.
/// \code
///   nvscope::text_options o;
///   o.max_name_width = 60;                    // 0: names whole
///   std::fputs(nvscope::to_text(r, o).c_str(), stdout);
/// \endcode
struct text_options {
  /// Names (kernels, ranges, operations) wider than this many display columns are cut, and
  /// the cut shown as "..." (CSV and JSON always keep names whole).
  std::size_t max_name_width = 100;
};

namespace detail {

// `s` cut to at most `width` display columns (detail/utf8.hpp: a wide character counts two,
// a stray byte one), ending "...", never inside a UTF-8 character.
inline std::string cut_name(const std::string& s, std::size_t width) {
  if (width == 0 || display_width(s.data(), s.size()) <= width) return s;
  if (width <= 3) return std::string(width, '.');
  const auto* u = reinterpret_cast<const unsigned char*>(s.data());
  std::size_t i = 0, columns = 0;
  while (i < s.size()) {
    const std::size_t len = utf8_sequence(u + i, s.size() - i);
    const std::size_t c = len == 0 ? 1 : code_point_columns(utf8_code_point(u + i, len));
    if (columns + c > width - 3) break;
    columns += c;
    i += len == 0 ? 1 : len;
  }
  return s.substr(0, i) + "...";
}

// Display columns of a cell: what its alignment pads to.
inline std::size_t cell_width(const std::string& s) { return display_width(s.data(), s.size()); }

inline void append_row(std::string& out, const std::vector<std::string>& cells, const std::vector<std::size_t>& width,
                       const std::vector<bool>& numeric, bool header) {
  for (std::size_t c = 0; c < cells.size(); ++c) {
    out.push_back(' ');
    const auto pad = width[c] - cell_width(cells[c]);
    const bool right = numeric[c] && !header;
    const bool last = c + 1 == cells.size();
    if (right) out.append(pad, ' ');
    out += cells[c];
    if (!right && !last) out.append(pad, ' ');
    if (!last) out.push_back(' ');
  }
  out.push_back('\n');
}

} // namespace detail

/// A table as aligned text under the heading ` ** TITLE (NAME):`; "SKIPPED: no data" when it
/// has no rows. Names longer than `options.max_name_width` are cut visibly.
/// \code
///   std::fputs(nvscope::text_of(tab, "CUDA GPU Kernel Summary", "cuda_gpu_kern_sum").c_str(), stdout);
/// \endcode
inline std::string text_of(table t, std::string_view title, std::string_view name, const text_options& options = {}) {
  std::string out = " ** " + std::string(title) + " (" + std::string(name) + "):\n\n";
  if (t.rows.empty()) return out + " SKIPPED: no data for this report.\n";
  std::vector<std::size_t> width(t.header.size());
  for (std::size_t c = 0; c < t.header.size(); ++c) {
    const bool cut = !t.numeric[c] && t.header[c] != "Style";
    width[c] = detail::cell_width(t.header[c]);
    for (auto& row : t.rows) {
      if (cut) row[c] = detail::cut_name(row[c], options.max_name_width);
      width[c] = std::max(width[c], detail::cell_width(row[c]));
    }
  }
  detail::append_row(out, t.header, width, t.numeric, true);
  std::vector<std::string> rule;
  for (auto w : width) rule.emplace_back(w, '-');
  detail::append_row(out, rule, width, t.numeric, true);
  for (const auto& row : t.rows) detail::append_row(out, row, width, t.numeric, false);
  return out;
}

/// One report as an aligned text table under nsys's heading; "SKIPPED: no data" when empty.
/// Names longer than `options.max_name_width` are cut visibly.
/// \code
///   std::fputs(nvscope::to_text(r, nvscope::report::cuda_gpu_kern_sum).c_str(), stdout);
/// \endcode
inline std::string to_text(const analysis_report& r, report which, const text_options& options = {}) {
  return text_of(table_of(r, which), report_title(which), report_name(which), options);
}

/// One loss as a warning line, e.g. "17 records dropped by CUPTI (buffers full): figures undercount".
/// \code
///   for (const auto& l : r.losses) std::puts(nvscope::loss_text(l).c_str());
/// \endcode
inline std::string loss_text(const loss_entry& l) {
  const char* what = "";
  switch (l.kind) {
    case loss_kind::dropped_records: what = "records dropped by CUPTI (buffers full): figures undercount"; break;
    case loss_kind::incomplete_records: what = "records without an end timestamp left out by the collector"; break;
    case loss_kind::unclosed_ranges: what = "ranges still open when collection stopped (collector count)"; break;
    case loss_kind::incomplete_found: what = "records without a valid end left out of the summaries"; break;
    case loss_kind::unclosed_found: what = "ranges never closed: closed at the end of the trace"; break;
    case loss_kind::unattributed: what = "GPU records with no launch record: not attributed to any range"; break;
    case loss_kind::buffer_errors: what = "CUPTI buffers not read to their end: records after the error lost"; break;
    case loss_kind::late_buffers: what = "CUPTI buffers delivered after recording stopped: discarded"; break;
    case loss_kind::foreign_releases: what = "buffers handed back that the collector never lent: ignored"; break;
    case loss_kind::nvtx_too_early: what = "NVTX was initialised before the collector could route it: no NVTX ranges recorded"; break;
    case loss_kind::launches_lost: what = "launch records not kept: their GPU work has no launching thread"; break;
    case loss_kind::names_itanium: what = "kernel names demangled without NVIDIA's libcufilt: spelled by nvscope's rules for nsys's spelling, a name outside them by the C++ runtime's"; break;
    case loss_kind::names_mangled: what = "kernel names left mangled (no demangler)"; break;
    case loss_kind::bad_step_pattern: what = "step pattern is not a valid regular expression: the default step names were used"; break;
  }
  return std::to_string(l.count) + " " + what;
}

/// Every loss of the report as a warning line; empty when nothing was lost.
/// \code
///   for (const auto& w : nvscope::warning_lines(r)) std::fprintf(stderr, "warning: %s\n", w.c_str());
/// \endcode
inline std::vector<std::string> warning_lines(const analysis_report& r) {
  std::vector<std::string> out;
  for (const auto& l : r.losses) out.push_back(loss_text(l));
  return out;
}

namespace detail {
inline void append_figure(std::string& out, const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  out += buf;
}

// One per-range line; the name goes in whole (a long name cannot cut the figures off).
inline void append_range_line(std::string& out, const range_metrics& m) {
  const auto& a = m.activity;
  out += " range ";
  out += m.range;
  out += ": " + std::to_string(m.instances) + " instances, ";
  append_figure(out, "%.1f kernels each, ", m.kernels_per_instance);
  append_figure(out, "GPU busy %.1f%%, ", a.gpu_busy_percent);
  append_figure(out, "overlap %.1f%%, ", a.copy_compute_overlap_percent);
  append_figure(out, "sync %.1f%%, ", a.sync_percent);
  append_figure(out, "gap median %.1f us\n", a.gap_median_ns / 1000.0);
}
} // namespace detail

namespace detail {
// The overall activity in two lines: the window's busy, overlap and sync; counts and gaps.
inline std::string activity_lines(const activity_metrics& o) {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                " window %.3f ms: GPU busy %.1f%%, copy/compute overlap %.1f%%, sync wait %.1f%%\n"
                " %llu kernels (median %.1f us), %llu copies, %llu memsets; launch gaps: %llu, median %.1f us, p90 %.1f us\n",
                static_cast<double>(o.window_ns) / 1e6, o.gpu_busy_percent, o.copy_compute_overlap_percent, o.sync_percent,
                static_cast<unsigned long long>(o.kernels), o.kernel_median_ns / 1000.0, static_cast<unsigned long long>(o.copies),
                static_cast<unsigned long long>(o.memsets), static_cast<unsigned long long>(o.gap_count), o.gap_median_ns / 1000.0,
                o.gap_p90_ns / 1000.0);
  return buf;
}
} // namespace detail

namespace detail {
// What --attribute=process would do, said where kernels lie outside every range under nsys's rule.
inline constexpr const char* unranged_hint = "--attribute=process credits them to the range open on the one other thread that has one";

// The head of unranged_line: count, GPU time, share of all kernel time, the launching threads.
inline std::string unranged_head(const analysis_report& r) {
  const unranged_kernels& u = r.unranged;
  std::uint64_t all = 0;
  for (const auto& k : r.kernels) all += k.time.total;
  char buf[160];
  std::snprintf(buf, sizeof buf, "outside every range: %llu kernels, %.3f ms of GPU time (%.1f%% of kernel time), launched by ",
                static_cast<unsigned long long>(u.kernels), static_cast<double>(u.gpu_ns) / 1e6,
                all ? 100.0 * static_cast<double>(u.gpu_ns) / static_cast<double>(all) : 0.0);
  std::string out = buf;
  const std::size_t shown = std::min<std::size_t>(u.threads.size(), 3);
  for (std::size_t i = 0; i < shown; ++i) {
    const unranged_thread& th = u.threads[i];
    out += (i ? ", TID " : "TID ") + std::to_string(th.os_id) + (th.name.empty() ? "" : " (" + printable_name(th.name) + ")") + ": " +
           std::to_string(th.kernels) + " kernels";
  }
  if (u.threads.size() > shown) out += " and " + std::to_string(u.threads.size() - shown) + " more threads";
  return out;
}
} // namespace detail

/// The kernels that no range encloses (`analysis_report::unranged`) in one line, empty when
/// there are none: how many, their GPU time and share of all kernel time, the launching
/// threads (the three with the most GPU time, then how many more), and under nsys's thread
/// rule how `--attribute=process` would credit them.
/// \code
///   if (auto l = nvscope::unranged_line(r); !l.empty()) std::fprintf(stderr, "%s\n", l.c_str());
/// \endcode
inline std::string unranged_line(const analysis_report& r) {
  if (r.unranged.kernels == 0) return {};
  return detail::unranged_head(r) + (r.unranged.credit == attribution_rule::thread ? std::string("; ") + detail::unranged_hint : std::string());
}

/// The overall metrics, the step figures, the verdict and the losses, a few lines.
/// \code
///   std::fputs(nvscope::metrics_text(r).c_str(), stdout);
/// \endcode
inline std::string metrics_text(const analysis_report& r) {
  char buf[512];
  std::string out = " ** GPU activity:\n\n" + detail::activity_lines(r.overall);
  if (r.steps) {
    std::snprintf(buf, sizeof buf, " %llu steps, %.1f kernels a step\n", static_cast<unsigned long long>(r.steps), r.kernels_per_step);
    out += buf;
  }
  for (const auto& m : r.per_range) detail::append_range_line(out, m);
  if (const auto u = unranged_line(r); !u.empty()) out += " " + u + "\n";
  out += " verdict: " + verdict_line(r.diagnosis.verdict) + "\n";
  for (const auto& w : warning_lines(r)) out += " warning: " + w + "\n";
  return out;
}

/// Every report, then the metrics and the verdict: what `nsys stats` plus seed 001's table give.
/// \code
///   std::fputs(nvscope::to_text(nvscope::analyze(t)).c_str(), stdout);
/// \endcode
inline std::string to_text(const analysis_report& r, const text_options& options = {}) {
  std::string out;
  const auto warnings = warning_lines(r);
  for (const auto& w : warnings) out += " warning: " + w + "\n";
  if (!warnings.empty()) out.push_back('\n');
  for (auto which : all_reports) {
    out += to_text(r, which, options);
    out.push_back('\n');
  }
  out += metrics_text(r);
  return out;
}

/// Every report, the metrics, then the whole diagnosis with names from `t` (the trace `r` was
/// made of): the verdict's findings with the ranges and kernels responsible, idle time,
/// launches, nsys's expert rules, steps.
/// \code
///   std::fputs(nvscope::to_text(report, c.result()).c_str(), stdout);
/// \endcode
inline std::string to_text(const analysis_report& r, const trace& t, const text_options& options = {}) {
  return to_text(r, options) + "\n" + diagnosis_text(t, r.diagnosis);
}

} // namespace v1
} // namespace nvscope

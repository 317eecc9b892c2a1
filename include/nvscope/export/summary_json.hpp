// nvscope-target: nvscope
#pragma once

/// \file export/summary_json.hpp
/// The analysis as one JSON object: every nsys table with nsys's column names as keys, the
/// metrics, the verdict and the losses.
///
/// \code
///   auto r = nvscope::analyze(t);
///   nvscope::write_output("summary.json", nvscope::to_json(r));
/// \endcode

#include <nvscope/analysis.hpp>
#include <nvscope/export/detail/json_text.hpp>
#include <nvscope/export/table.hpp>

#include <algorithm>
#include <string>
#include <vector>

namespace nvscope {
inline namespace v1 {

/// The analysis as one JSON object:
/// `{"reports": {"cuda_gpu_kern_sum": [{"Time (%)": 80.0, ..., "Name": "gemm"}], ...},
///   "metrics": {...}, "steps": n, "kernels_per_step": x, "verdict": "...",
///   "losses": {...}, "warnings": ["..."]}`.
/// \code
///   std::string j = nvscope::to_json(nvscope::analyze(t));
/// \endcode
inline std::string to_json(const analysis_report& r) {
  using namespace detail;
  std::string out = "{\n \"reports\": {";
  bool first_report = true;
  for (auto which : all_reports) {
    const auto tab = table_of(r, which);
    out += first_report ? "\n  " : ",\n  ";
    first_report = false;
    append_json_string(out, report_name(which));
    out += ": [";
    for (std::size_t i = 0; i < tab.rows.size(); ++i) {
      out += i ? ",\n   {" : "\n   {";
      for (std::size_t c = 0; c < tab.header.size(); ++c) {
        if (c) out += ", ";
        append_json_string(out, tab.header[c]);
        out += ": ";
        if (tab.numeric[c]) out += tab.rows[i][c];
        else append_json_string(out, tab.rows[i][c]);
      }
      out += "}";
    }
    out += tab.rows.empty() ? "]" : "\n  ]";
  }
  out += "\n },\n \"metrics\": ";
  auto metrics = [&](const activity_metrics& m) {
    out += "{\"window_ns\": ";
    append_u(out, m.window_ns);
    out += ", \"busy_ns\": ";
    append_u(out, m.busy_ns);
    out += ", \"gpu_busy_percent\": ";
    append_f(out, m.gpu_busy_percent);
    out += ", \"copy_compute_overlap_percent\": ";
    append_f(out, m.copy_compute_overlap_percent);
    out += ", \"sync_percent\": ";
    append_f(out, m.sync_percent);
    out += ", \"launch_gap_count\": ";
    append_u(out, m.gap_count);
    out += ", \"launch_gap_median_ns\": ";
    append_f(out, m.gap_median_ns);
    out += ", \"launch_gap_p90_ns\": ";
    append_f(out, m.gap_p90_ns);
    out += ", \"kernels\": ";
    append_u(out, m.kernels);
    out += ", \"copies\": ";
    append_u(out, m.copies);
    out += ", \"memsets\": ";
    append_u(out, m.memsets);
    out += ", \"kernel_median_ns\": ";
    append_f(out, m.kernel_median_ns);
    out += "}";
  };
  metrics(r.overall);
  out += ",\n \"per_range\": [";
  for (std::size_t i = 0; i < r.per_range.size(); ++i) {
    out += i ? ",\n  {\"range\": " : "\n  {\"range\": ";
    append_json_string(out, r.per_range[i].range);
    out += ", \"instances\": ";
    append_u(out, r.per_range[i].instances);
    out += ", \"kernels_per_instance\": ";
    append_f(out, r.per_range[i].kernels_per_instance);
    out += ", \"metrics\": ";
    metrics(r.per_range[i].activity);
    out += "}";
  }
  out += "],\n \"steps\": ";
  append_u(out, r.steps);
  out += ",\n \"kernels_per_step\": ";
  append_f(out, r.kernels_per_step);
  out += ",\n \"verdict\": ";
  append_json_string(out, r.verdict);
  out += ",\n \"losses\": {\"dropped_records\": ";
  append_u(out, r.lost.dropped_records);
  out += ", \"incomplete_records\": ";
  append_u(out, r.lost.incomplete_records + r.incomplete_found);
  out += ", \"unclosed_ranges\": ";
  append_u(out, std::max(r.lost.unclosed_ranges, r.unclosed_found));
  out += ", \"unattributed_gpu_records\": ";
  append_u(out, r.unattributed);
  out += "},\n \"warnings\": [";
  for (std::size_t i = 0; i < r.warnings.size(); ++i) {
    if (i) out += ", ";
    append_json_string(out, r.warnings[i]);
  }
  out += "]\n}\n";
  return out;
}

} // namespace v1
} // namespace nvscope

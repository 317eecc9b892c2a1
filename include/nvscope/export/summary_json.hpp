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

#include <nvscope/analyze/report.hpp>
#include <nvscope/export/detail/json_text.hpp>
#include <nvscope/export/diagnosis_json.hpp>
#include <nvscope/export/provenance.hpp>
#include <nvscope/export/table.hpp>
#include <nvscope/export/totals_json.hpp>

#include <algorithm>
#include <string>
#include <vector>

namespace nvscope {
inline namespace v1 {

namespace detail {

// "name": [rows as objects keyed by nsys's column names], for every report.
inline void json_reports(std::string& out, const analysis_report& r) {
  out += "{";
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
        if (tab.numeric[c]) out += tab.rows[i][c].empty() ? std::string("null") : tab.rows[i][c]; // an empty cell: nsys's NULL
        else append_json_string(out, tab.rows[i][c]);
      }
      out += "}";
    }
    out += tab.rows.empty() ? "]" : "\n  ]";
  }
  out += "\n }";
}

inline void json_field(std::string& out, const char* key, std::uint64_t v, bool first = false) {
  out += first ? "\"" : ", \"";
  out += key;
  out += "\": ";
  append_u(out, v);
}

inline void json_field(std::string& out, const char* key, const std::string& v, bool first = false) {
  out += first ? "\"" : ", \"";
  out += key;
  out += "\": ";
  append_json_string(out, v);
}

inline void json_field(std::string& out, const char* key, double v) {
  out += ", \"";
  out += key;
  out += "\": ";
  append_f(out, v);
}

inline void json_metrics(std::string& out, const activity_metrics& m) {
  out += "{";
  json_field(out, "window_ns", m.window_ns, true);
  json_field(out, "busy_ns", m.busy_ns);
  json_field(out, "gpu_busy_percent", m.gpu_busy_percent);
  json_field(out, "copy_compute_overlap_percent", m.copy_compute_overlap_percent);
  json_field(out, "sync_percent", m.sync_percent);
  json_field(out, "launch_gap_count", m.gap_count);
  json_field(out, "launch_gap_median_ns", m.gap_median_ns);
  json_field(out, "launch_gap_p90_ns", m.gap_p90_ns);
  json_field(out, "kernels", m.kernels);
  json_field(out, "copies", m.copies);
  json_field(out, "memsets", m.memsets);
  json_field(out, "kernel_median_ns", m.kernel_median_ns);
  out += "}";
}

inline void json_per_range(std::string& out, const analysis_report& r) {
  out += "[";
  for (std::size_t i = 0; i < r.per_range.size(); ++i) {
    out += i ? ",\n  {\"range\": " : "\n  {\"range\": ";
    append_json_string(out, r.per_range[i].range);
    json_field(out, "instances", r.per_range[i].instances);
    json_field(out, "kernels_per_instance", r.per_range[i].kernels_per_instance);
    out += ", \"metrics\": ";
    json_metrics(out, r.per_range[i].activity);
    out += "}";
  }
  out += "]";
}

inline void json_losses(std::string& out, const analysis_report& r) {
  out += "{";
  json_field(out, "dropped_records", r.lost.dropped_records, true);
  json_field(out, "incomplete_records", r.lost.incomplete_records + r.incomplete_found);
  json_field(out, "unclosed_ranges", std::max(r.lost.unclosed_ranges, r.unclosed_found));
  json_field(out, "unattributed_gpu_records", r.unattributed);
  out += "},\n \"unranged\": {";
  json_field(out, "rule", std::string(r.unranged.credit == attribution_rule::process ? "process" : "thread"), true);
  json_field(out, "kernels", r.unranged.kernels);
  json_field(out, "gpu_ns", r.unranged.gpu_ns);
  out += ", \"threads\": [";
  for (std::size_t i = 0; i < r.unranged.threads.size(); ++i) {
    const auto& th = r.unranged.threads[i];
    out += i ? ", {" : "{";
    json_field(out, "tid", th.os_id, true);
    json_field(out, "name", th.name);
    json_field(out, "kernels", th.kernels);
    json_field(out, "gpu_ns", th.gpu_ns);
    out += "}";
  }
  out += "]},\n \"warnings\": [";
  const auto warnings = warning_lines(r);
  for (std::size_t i = 0; i < warnings.size(); ++i) {
    if (i) out += ", ";
    append_json_string(out, warnings[i]);
  }
  out += "]";
}

// Each step range instance that launched GPU work: its name, start and end on the trace clock
// (host time of the range), its GPU busy time and kernels; what `nvscope merge` lines up.
inline void json_step_times(std::string& out, const analysis_report& r, const trace& t) {
  out += "[";
  for (std::size_t i = 0; i < r.step_details.size(); ++i) {
    const auto& s = r.step_details[i];
    out += i ? ",\n  {\"name\": " : "\n  {\"name\": ";
    append_json_string(out, s.name);
    const bool known = s.range < t.ranges.size();
    json_field(out, "start_ns", known ? t.ranges[s.range].start : 0);
    json_field(out, "end_ns", known ? t.ranges[s.range].end : 0);
    json_field(out, "gpu_busy_ns", s.activity.busy_ns);
    json_field(out, "kernels", s.kernels);
    out += "}";
  }
  out += r.step_details.empty() ? "]" : "\n ]";
}

inline std::string summary_head() {
  return "{\n \"format\": " + format_json("nvscope-summary", summary_format_version) + ",\n \"reports\": ";
}

} // namespace detail

/// The analysis as one JSON object:
/// `{"format": {"name": "nvscope-summary", "version": 1},
///   "reports": {"cuda_gpu_kern_sum": [{"Time (%)": 80.0, ..., "Name": "gemm"}], ...},
///   "metrics": {...}, "per_range": [...], "steps": n, "kernels_per_step": x,
///   "verdict": "...", "verdict_kind": "launch_bound", "losses": {...}, "warnings": ["..."]}`.
/// `to_json(report, trace)` adds "provenance" (export/provenance.hpp), "step_times" and
/// "diagnosis" (export/diagnosis_json.hpp), with the samples that `nvscope diff` compares.
/// \code
///   std::string j = nvscope::to_json(nvscope::analyze(t));
/// \endcode
inline std::string to_json(const analysis_report& r) {
  using namespace detail;
  std::string out = summary_head();
  json_reports(out, r);
  out += ",\n \"metrics\": ";
  json_metrics(out, r.overall);
  out += ",\n \"per_range\": ";
  json_per_range(out, r);
  out += ",\n \"steps\": ";
  append_u(out, r.steps);
  out += ",\n \"kernels_per_step\": ";
  append_f(out, r.kernels_per_step);
  out += ",\n \"verdict\": ";
  append_json_string(out, verdict_line(r.diagnosis.verdict));
  out += ",\n \"verdict_kind\": ";
  append_json_string(out, bottleneck_name(r.diagnosis.verdict.kind));
  out += ",\n \"losses\": ";
  json_losses(out, r);
  out += "\n}\n";
  return out;
}

/// The summary with where it came from as "provenance" (`p`, this process by default, and
/// what the collector read into `t`), each step's start and end as "step_times", and the whole
/// diagnosis as "diagnosis": findings with names from `t` (the trace `r` was made of) and the
/// per-kernel, per-range and per-step samples `nvscope diff` reads. Write one per run and gate
/// a CI job on `nvscope diff base.json new.json`.
/// \code
///   nvscope::write_output("summary_%p.json", nvscope::to_json(report, c.result()));
/// \endcode
inline std::string to_json(const analysis_report& r, const trace& t, const run_provenance& p) {
  std::string out = to_json(r);
  out.resize(out.size() - 3); // "\n}\n"
  out += ",\n \"provenance\": " + provenance_json(p, t);
  out += ",\n \"step_times\": ";
  detail::json_step_times(out, r, t);
  return out + ",\n \"diagnosis\": " + diagnosis_json(t, r.diagnosis) + "\n}\n";
}

/// The same, with the run's running totals as "totals" (export/totals_json.hpp: every sketch
/// whole, what `nvscope merge` merges across ranks); `run` is usually `fold` of the whole run's
/// trace merged with what the collector folded (`collector::folded()`).
/// \code
///   nvscope::totals run = c.folded();
///   nvscope::fold(c.result(), run);
///   nvscope::write_output("summary_%r.json", nvscope::to_json(report, c.result(), nvscope::process_provenance(), run));
/// \endcode
inline std::string to_json(const analysis_report& r, const trace& t, const run_provenance& p, const totals& run) {
  std::string out = to_json(r, t, p);
  out.resize(out.size() - 3); // "\n}\n"
  return out + ",\n \"totals\": " + totals_json(run) + "\n}\n";
}

/// The same, for this process (`process_provenance()`).
inline std::string to_json(const analysis_report& r, const trace& t) { return to_json(r, t, process_provenance()); }

} // namespace v1
} // namespace nvscope

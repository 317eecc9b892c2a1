// nvscope-target: nvscope
#pragma once

/// \file export/screen.hpp
/// The summary that fits one screen: at most 40 lines of at most 120 display columns by
/// default, what `nvscope run` prints at the end of each process. The overall activity, the
/// verdict and its top findings (figures, the ranges responsible, what to try), the steps
/// (count, median, p90, slowest), the top kernels and ranges by GPU time (names cut visibly),
/// the losses and the files written with their sizes. Every figure is the report's; every
/// sentence is the one the full text (export/table.hpp, export/diagnosis_text.hpp) prints,
/// so the screen is a cut of `to_text(r, t)`, which holds every row.
///
/// \code
///   auto r = nvscope::analyze(t);
///   nvscope::write_output("run.txt", nvscope::to_text(r, t));   // every table, the whole diagnosis
///   nvscope::screen_options o;
///   o.color = nvscope::use_color(nvscope::color_when::automatic, stderr);
///   o.full_text = "run.txt";                                    // named where rows are left out
///   std::fputs(nvscope::to_screen(r, t, o).c_str(), stderr);
/// \endcode

#include <nvscope/analyze/report.hpp>
#include <nvscope/detail/quote.hpp>
#include <nvscope/detail/utf8.hpp>
#include <nvscope/export/diagnosis_text.hpp>
#include <nvscope/export/table.hpp>
#include <nvscope/trace.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>
#include <vector>

namespace nvscope {
inline namespace v1 {

/// When to colour the screen.
enum class color_when : std::uint8_t {
  automatic, ///< on a terminal, unless NO_COLOR is set (no-color.org) or TERM is "dumb"
  always,    ///< always (a command-line choice wins over NO_COLOR, as no-color.org says)
  never,
};

/// The colour rule: `always` and `never` as said; `automatic` only when `terminal`, and never
/// when `no_color` (NO_COLOR's value, null when unset) is non-empty or `term` is "dumb".
/// \code
///   assert(!nvscope::use_color(nvscope::color_when::automatic, true, "1", "xterm"));
/// \endcode
inline bool use_color(color_when when, bool terminal, const char* no_color, const char* term) noexcept {
  if (when != color_when::automatic) return when == color_when::always;
  if (no_color != nullptr && *no_color != '\0') return false;
  if (term != nullptr && std::strcmp(term, "dumb") == 0) return false;
  return terminal;
}

/// The colour rule for `stream`: a terminal (isatty), NO_COLOR and TERM read now.
/// \code
///   o.color = nvscope::use_color(nvscope::color_when::automatic, stderr);
/// \endcode
inline bool use_color(color_when when, std::FILE* stream) noexcept {
  const bool terminal = stream != nullptr && ::isatty(::fileno(stream)) == 1;
  return use_color(when, terminal, std::getenv("NO_COLOR"), std::getenv("TERM"));
}

/// A file written, as the screen lists it.
struct screen_file {
  std::string path;
  std::uint64_t bytes = 0;
};

/// What the screen holds and how large it may grow.
/// \code
///   nvscope::screen_options o;
///   o.title = "train.py, rank 0";
///   o.top_kernels = 8;
///   o.max_columns = 100;
/// \endcode
struct screen_options {
  std::size_t max_lines = 40;    ///< the whole screen, title and files included
  std::size_t max_columns = 120; ///< display columns (UTF-8 aware); longer lines are cut with "..."
  std::size_t top_findings = 3;
  std::size_t top_kernels = 5;
  std::size_t top_ranges = 5;
  std::size_t max_losses = 3;    ///< more: the first ones, then a count
  bool color = false;            ///< ANSI emphasis only: the verdict's class, headings, losses
  std::string title;             ///< first line when not empty
  std::string full_text;         ///< where every row is (a file), named where rows are left out
  std::vector<screen_file> files; ///< listed last, with their sizes
};

/// A size in bytes as people read it: "812 B", "12.3 KB", "4.5 MB", "1.2 GB" (powers of 1000).
/// \code
///   assert(nvscope::size_text(12300) == "12.3 KB");
/// \endcode
inline std::string size_text(std::uint64_t bytes) {
  if (bytes < 1000) return std::to_string(bytes) + " B";
  const char* units[] = {"KB", "MB", "GB", "TB"};
  double v = static_cast<double>(bytes) / 1000.0;
  int u = 0;
  for (; v >= 999.95 && u < 3; ++u) v /= 1000.0;
  return detail::fmt_f(v, 1) + " " + units[u];
}

/// The files with their sizes, one list: "out.json (12.3 KB), out.txt (4.1 KB)".
/// \code
///   std::puts(nvscope::file_list({{"run.json", 12300}}).c_str());
/// \endcode
inline std::string file_list(const std::vector<screen_file>& files) {
  std::string s;
  for (const auto& f : files) s += (s.empty() ? "" : ", ") + detail::escape_input(f.path, 256) + " (" + size_text(f.bytes) + ")";
  return s;
}

namespace detail {
namespace screen {

enum class style : std::uint8_t { plain, heading, verdict, loss };

struct line {
  std::string text;
  style look = style::plain;
};

// What is always shown (losses, files) apart from what may be cut to fit (the rest).
struct page {
  std::vector<line> body;
  std::vector<line> tail;
};

// `s` on one line: control characters and bytes that start no UTF-8 character become '?'.
inline std::string printable(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  const auto* u = reinterpret_cast<const unsigned char*>(s.data());
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t len = utf8_sequence(u + i, s.size() - i);
    if (len == 0 || (len == 1 && (u[i] < 0x20 || u[i] == 0x7f))) {
      out += '?';
      ++i;
      continue;
    }
    out.append(s, i, len);
    i += len;
  }
  return out;
}

inline std::string name(const std::string& s, std::size_t columns) { return cut_name(printable(s), columns); }

inline std::string every_row_in(const screen_options& o, const char* what) {
  return o.full_text.empty() ? std::string() : std::string("; ") + what + " in " + o.full_text;
}

// A range's "domain:name" key as a person reads it: ":name" of the default domain as "name".
inline std::string without_empty_domain(const std::string& key) {
  return key.size() > 1 && key[0] == ':' ? key.substr(1) : key;
}

inline std::string range_label(const trace& t, std::uint32_t range) {
  return without_empty_domain(diag_text::range_name(t, range));
}

// "a <time>, b <time>": the first three, names cut so that the figures stay on the line.
inline std::string range_times(const trace& t, const std::vector<range_time>& ranges) {
  std::string s;
  for (std::size_t i = 0; i < ranges.size() && i < 3; ++i)
    s += (i ? ", " : "") + name(range_label(t, ranges[i].range), 32) + " " + diag_text::duration(double(ranges[i].ns));
  if (ranges.size() > 3) s += ", ...";
  return s.empty() ? std::string("(no range)") : s;
}

inline std::string kernel_times(const trace& t, const std::vector<name_time>& kernels) {
  std::string s;
  for (std::size_t i = 0; i < kernels.size() && i < 3; ++i)
    s += (i ? ", " : "") + name(std::string(kernel_name(t, kernels[i].name, name_form::base)), 32) + " " +
         diag_text::duration(double(kernels[i].ns));
  return s;
}

// The verdict, then per finding its figure, the ranges responsible and what to try. The
// kernels of the kernel-time finding are the top kernels, listed below: not twice.
inline void verdict(page& p, const trace& t, const diagnosis_verdict& v, const screen_options& o) {
  p.body.push_back({"Verdict: " + verdict_line(v), style::verdict});
  for (std::size_t i = 0; i < v.findings.size() && i < o.top_findings; ++i) {
    const finding& f = v.findings[i];
    p.body.push_back({diag_text::finding_head(f, i + 1)});
    if (!f.kernels.empty() && f.kind != finding_kind::gpu_time)
      p.body.push_back({"     kernels: " + kernel_times(t, f.kernels)});
    p.body.push_back({"     ranges: " + range_times(t, f.ranges)});
    if (f.todo != advice::none) p.body.push_back({std::string("     try: ") + advice_text(f.todo)});
  }
}

// The step range of the slowest step: the longest outlier's, else the step whose host time is the maximum.
inline std::string slowest_step(const trace& t, const analysis_report& r) {
  const step_analysis& st = r.diagnosis.steps;
  if (!st.outliers.empty()) return range_label(t, st.outliers.front().range);
  for (const auto& s : r.step_details)
    if (s.range < t.ranges.size() && t.ranges[s.range].end - t.ranges[s.range].start == st.max_ns) return range_label(t, s.range);
  return {};
}

// The steps that lost records (trace::lossy_steps), left out of the step figures: how many,
// the first few by name, and the records the run lost.
inline std::string lossy_steps_line(const trace& t, const step_analysis& st) {
  std::string s = "Steps left out for losses: " + std::to_string(st.lossy_steps) + " (";
  for (std::size_t i = 0; i < st.lossy_ranges.size() && i < 3; ++i) s += (i ? ", " : "") + name(range_label(t, st.lossy_ranges[i]), 24);
  if (st.lossy_steps > 3) s += ", ...";
  return s + "); lost: " + std::to_string(t.lost.dropped_records) + " records dropped, " + std::to_string(t.lost.launches_lost) +
         " launches, " + std::to_string(t.lost.buffer_errors) + " buffer errors";
}

inline void steps(page& p, const trace& t, const analysis_report& r) {
  const step_analysis& st = r.diagnosis.steps;
  if (st.steps != 0) {
    const std::string slowest = slowest_step(t, r);
    p.body.push_back({diag_text::steps_head(st) + (slowest.empty() ? "" : "; slowest: " + name(slowest, 40))});
  }
  if (st.lossy_steps != 0) p.body.push_back({lossy_steps_line(t, st)});
}

// The kernels outside every range (unranged_line), with the rule that would credit them.
inline void unranged(page& p, const analysis_report& r) {
  if (r.unranged.kernels == 0) return;
  std::string head = unranged_head(r);
  head[0] = 'O';
  p.body.push_back({head});
  if (r.unranged.credit == attribution_rule::thread) p.body.push_back({std::string("     try: ") + unranged_hint});
}

inline std::string count_of(std::size_t shown, std::size_t all) {
  return std::to_string(shown) + " of " + std::to_string(all);
}

inline void top_kernels(page& p, const analysis_report& r, const screen_options& o) {
  if (r.kernels.empty() || o.top_kernels == 0) return;
  const std::size_t n = std::min(o.top_kernels, r.kernels.size());
  p.body.push_back({"Top kernels by GPU time (" + count_of(n, r.kernels.size()) + every_row_in(o, "every row") + "):", style::heading});
  p.body.push_back({"  Time (%)       Total  Instances      Median  Name"});
  const std::size_t columns = o.max_columns > 58 ? o.max_columns - 48 : 10;
  for (std::size_t i = 0; i < n; ++i) {
    const kernel_summary_row& k = r.kernels[i];
    p.body.push_back({diag_text::printf_string("  %8.1f  %10s  %9llu  %10s  ", k.time_percent, diag_text::duration(double(k.time.total)).c_str(),
                                               static_cast<unsigned long long>(k.time.count), diag_text::duration(k.time.median).c_str()) +
                      name(k.name, columns)});
  }
}

// Ranges by the GPU time projected from them (nvtx_gpu_proj_sum), most first.
inline void top_ranges(page& p, const analysis_report& r, const screen_options& o) {
  if (r.projections.empty() || o.top_ranges == 0) return;
  std::vector<const gpu_projection_row*> rows;
  for (const auto& x : r.projections) rows.push_back(&x);
  const std::size_t n = std::min(o.top_ranges, rows.size());
  std::partial_sort(rows.begin(), rows.begin() + static_cast<std::ptrdiff_t>(n), rows.end(), [](const auto* a, const auto* b) {
    return a->projected.total != b->projected.total ? a->projected.total > b->projected.total : a->range < b->range;
  });
  p.body.push_back({"Top ranges by GPU time (projected, " + count_of(n, rows.size()) + every_row_in(o, "every row") + "):", style::heading});
  p.body.push_back({"    GPU time  Instances      Median  Range"});
  const std::size_t columns = o.max_columns > 48 ? o.max_columns - 38 : 10;
  for (std::size_t i = 0; i < n; ++i) {
    const gpu_projection_row& x = *rows[i];
    p.body.push_back({diag_text::printf_string("  %10s  %9llu  %10s  ", diag_text::duration(double(x.projected.total)).c_str(),
                                               static_cast<unsigned long long>(x.projected.count), diag_text::duration(x.projected.median).c_str()) +
                      name(without_empty_domain(x.range), columns)});
  }
}

inline void losses(page& p, const analysis_report& r, const screen_options& o) {
  const std::size_t all = r.losses.size();
  const std::size_t shown = all <= o.max_losses ? all : (o.max_losses > 0 ? o.max_losses - 1 : 0);
  for (std::size_t i = 0; i < shown; ++i) p.tail.push_back({"warning: " + loss_text(r.losses[i]), style::loss});
  if (shown < all)
    p.tail.push_back({"warning: " + std::to_string(all - shown) + " more kinds of loss" + every_row_in(o, "every one"), style::loss});
}

// "Files: a (1 KB), b (2 MB)", the items packed into lines of at most max_columns.
inline void files(page& p, const screen_options& o) {
  if (o.files.empty()) return;
  std::string current = "Files:";
  for (const auto& f : o.files) {
    const std::string item = " " + f.path + " (" + size_text(f.bytes) + ")" + (&f == &o.files.back() ? "" : ",");
    if (current.size() > 6 && display_width(current.data(), current.size()) + display_width(item.data(), item.size()) > o.max_columns) {
      p.tail.push_back({current});
      current = "      ";
    }
    current += item;
  }
  p.tail.push_back({current});
}

// The page cut to max_lines (the body loses its last lines, one line says how many) and
// each line to max_columns.
inline std::vector<line> fit(page p, const screen_options& o) {
  if (p.body.size() + p.tail.size() > o.max_lines) {
    const std::size_t keep = o.max_lines > p.tail.size() + 1 ? o.max_lines - p.tail.size() - 1 : 0;
    const std::size_t cut = p.body.size() - std::min(keep, p.body.size());
    p.body.resize(p.body.size() - cut);
    if (o.max_lines > p.tail.size()) p.body.push_back({"... " + std::to_string(cut) + " lines left out" + every_row_in(o, "all")});
  }
  std::vector<line> out = std::move(p.body);
  out.insert(out.end(), p.tail.begin(), p.tail.end());
  if (out.size() > o.max_lines) out.resize(o.max_lines);
  for (auto& l : out) l.text = cut_name(printable(l.text), o.max_columns);
  return out;
}

inline const char* verdict_color(bottleneck b) noexcept {
  switch (b) {
    case bottleneck::gpu_bound: return "\x1b[1;32m";
    case bottleneck::mixed: return "\x1b[1;33m";
    case bottleneck::none: return "\x1b[1m";
    default: return "\x1b[1;31m";
  }
}

// The lines joined, with ANSI emphasis where asked; the text reads the same without it.
inline std::string render(const std::vector<line>& lines, bottleneck kind, bool color) {
  std::string out;
  const std::string lead = std::string("Verdict: ") + bottleneck_name(kind);
  for (const auto& l : lines) {
    if (!color || l.look == style::plain) out += l.text;
    else if (l.look == style::heading) out += "\x1b[1m" + l.text + "\x1b[0m";
    else if (l.look == style::loss) out += "\x1b[33m" + l.text + "\x1b[0m";
    else if (l.text.compare(0, lead.size(), lead) == 0)
      out += "\x1b[1mVerdict:\x1b[0m " + std::string(verdict_color(kind)) + bottleneck_name(kind) + "\x1b[0m" + l.text.substr(lead.size());
    else out += l.text;
    out += '\n';
  }
  return out;
}

} // namespace screen
} // namespace detail

/// The report in one screen: at most `o.max_lines` lines of at most `o.max_columns` display
/// columns, each ending in a newline; names come from `t`, the trace `r` was made of.
/// \code
///   std::fputs(nvscope::to_screen(nvscope::analyze(t), t).c_str(), stderr);
/// \endcode
inline std::string to_screen(const analysis_report& r, const trace& t, const screen_options& o = {}) {
  namespace s = detail::screen;
  s::page p;
  if (!o.title.empty()) p.body.push_back({o.title, s::style::heading});
  std::string activity = detail::activity_lines(r.overall);
  for (std::size_t pos = 0, nl; (nl = activity.find('\n', pos)) != std::string::npos; pos = nl + 1)
    p.body.push_back({activity.substr(pos + 1, nl - pos - 1)}); // without the tables' leading space
  s::verdict(p, t, r.diagnosis.verdict, o);
  s::steps(p, t, r);
  s::unranged(p, r);
  s::top_kernels(p, r, o);
  s::top_ranges(p, r, o);
  s::losses(p, r, o);
  s::files(p, o);
  return s::render(s::fit(std::move(p), o), r.diagnosis.verdict.kind, o.color);
}

} // namespace v1
} // namespace nvscope

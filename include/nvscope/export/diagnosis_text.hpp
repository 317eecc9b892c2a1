// nvscope-target: nvscope
#pragma once

/// \file export/diagnosis_text.hpp
/// The words of the diagnosis and of a run comparison: the verdict with its findings, the
/// idle-time breakdown, launch statistics, the expert rules and the steps as text; a
/// comparison as text or CSV. Every sentence about a diagnosis is made here (and in
/// diagnosis_json.hpp for names in JSON); the analysis returns only numbers and enums.
///
/// \code
///   auto a = nvscope::attribute(t);
///   nvscope::diagnosis d = nvscope::diagnose(t, a);
///   std::fputs(nvscope::diagnosis_text(t, d).c_str(), stdout);
///   std::puts(nvscope::verdict_line(d.verdict).c_str());  // "GPU-bound: kernels run 95.1% of ..."
/// \endcode

#include <nvscope/analyze/diagnose/compare.hpp>
#include <nvscope/analyze/diagnosis.hpp>
#include <nvscope/detail/quote.hpp>
#include <nvscope/trace.hpp>

#include <cinttypes>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace nvscope {
inline namespace v1 {

/// "GPU-bound", "launch-bound", ... ("no GPU activity recorded" for `none`).
inline const char* bottleneck_name(bottleneck b) noexcept {
  switch (b) {
    case bottleneck::gpu_bound: return "GPU-bound";
    case bottleneck::launch_bound: return "launch-bound";
    case bottleneck::host_bound: return "host-bound";
    case bottleneck::sync_bound: return "sync-bound";
    case bottleneck::copy_bound: return "copy-bound";
    case bottleneck::mixed: return "mixed";
    default: return "no GPU activity recorded";
  }
}

/// What to try, in a sentence.
inline const char* advice_text(advice a) noexcept {
  switch (a) {
    case advice::optimise_kernels: return "make the top kernels faster (Nsight Compute on them) or give the GPU less work";
    case advice::fuse_or_graph: return "fuse the small kernels or capture the sequence in a CUDA graph: fewer launches";
    case advice::pinned_memory: return "use pinned host memory (cudaMallocHost, cudaHostRegister): async copies stay async, at full bandwidth";
    case advice::overlap_copies: return "overlap copies with compute: copy on another stream, from pinned memory";
    case advice::drop_sync: return "drop or defer the synchronisation so that the host queues work ahead (events, cudaStreamWaitEvent)";
    case advice::move_host_work: return "move host work off the launching thread, or launch the next work before it";
    case advice::check_dependencies: return "work was queued yet waited: check cross-stream events and dependencies";
    case advice::inspect_outlier_steps: return "look at the outlier steps: what grew in each is listed under Steps";
    default: return "";
  }
}

/// What a finding measures.
inline const char* finding_text(finding_kind k) noexcept {
  switch (k) {
    case finding_kind::gpu_time: return "kernel time";
    case finding_kind::copy_time: return "copies running alone";
    case finding_kind::launch_gaps: return "GPU idle between launches";
    case finding_kind::sync_gaps: return "GPU idle while the host synchronised";
    case finding_kind::host_gaps: return "GPU idle while the host worked";
    case finding_kind::other_gaps: return "GPU idle with work queued";
    case finding_kind::short_kernels: return "kernels shorter than their launch call";
    case finding_kind::pageable_copies: return "async copies from or to pageable memory";
    case finding_kind::sync_calls: return "host blocked in device and stream synchronisations";
    case finding_kind::outlier_steps: return "outlier steps, time beyond the median step";
    default: return "";
  }
}

/// "launch", "sync", "host", "other".
inline const char* idle_cause_name(idle_cause c) noexcept {
  static constexpr const char* names[] = {"launch", "sync", "host", "other"};
  return names[static_cast<int>(c) & 3];
}

/// The nsys rule name of each expert rule.
inline const char* rule_name(rule_id r) noexcept {
  static constexpr const char* names[] = {"cuda_memcpy_async", "cuda_memcpy_sync", "cuda_memset_sync",
                                          "cuda_api_sync", "gpu_gaps", "gpu_time_util"};
  return names[static_cast<int>(r) % rule_count];
}

namespace detail {
namespace diag_text {

inline std::string printf_string(const char* format, ...) __attribute__((format(printf, 1, 2)));
inline std::string printf_string(const char* format, ...) {
  va_list args, again;
  va_start(args, format);
  va_copy(again, args);
  const int n = std::vsnprintf(nullptr, 0, format, args); // any length: kernel names run long
  va_end(args);
  std::string out(n > 0 ? static_cast<std::size_t>(n) : 0, '\0');
  if (n > 0) std::vsnprintf(&out[0], out.size() + 1, format, again);
  va_end(again);
  return out;
}

inline std::string duration(double ns) {
  if (ns >= 1e6) return printf_string("%.3f ms", ns / 1e6);
  return printf_string("%.1f us", ns / 1e3);
}

inline std::string percent(double share) { return printf_string("%.1f%%", 100.0 * share); }

inline std::string range_name(const trace& t, std::uint32_t r) {
  if (r >= t.ranges.size()) return "(no range)";
  std::string s(t.strings[t.ranges[r].domain]);
  if (!s.empty()) s += ':';
  s += t.strings[t.ranges[r].name];
  return s;
}

inline std::string range_list(const trace& t, const std::vector<range_time>& ranges) {
  std::string s;
  for (const auto& r : ranges) {
    if (!s.empty()) s += ", ";
    s += range_name(t, r.range) + " " + duration(static_cast<double>(r.ns));
  }
  return s.empty() ? std::string("(no range)") : s;
}

inline std::string kernel_list(const trace& t, const std::vector<name_time>& kernels) {
  std::string s;
  for (const auto& k : kernels) {
    if (!s.empty()) s += ", ";
    s += std::string(kernel_name(t, k.name, name_form::base)) + " " + duration(static_cast<double>(k.ns));
  }
  return s;
}

inline const char* finding_unit(finding_kind k) noexcept {
  switch (k) {
    case finding_kind::gpu_time:
    case finding_kind::short_kernels: return "kernels";
    case finding_kind::copy_time:
    case finding_kind::pageable_copies: return "copies";
    case finding_kind::sync_calls: return "calls";
    case finding_kind::outlier_steps: return "steps";
    default: return "stretches";
  }
}

// The finding's figure, one line without its end: "  1. kernel time: <time> (<share> of the window), <count> kernels".
inline std::string finding_head(const finding& f, std::size_t number) {
  std::string s = printf_string("  %zu. %s: %s (%s of the window), %" PRIu64 " %s", number, finding_text(f.kind),
                                duration(static_cast<double>(f.ns)).c_str(), percent(f.share).c_str(), f.count,
                                finding_unit(f.kind));
  if (f.kind == finding_kind::sync_calls) s += ", GPU busy " + percent(f.gpu_busy_share) + " of the wait";
  return s;
}

inline std::string finding_line(const trace& t, const finding& f, std::size_t number) {
  std::string s = finding_head(f, number) + "\n";
  if (!f.kernels.empty()) s += "     kernels: " + kernel_list(t, f.kernels) + "\n";
  s += "     ranges: " + range_list(t, f.ranges) + "\n";
  if (f.todo != advice::none) s += std::string("     try: ") + advice_text(f.todo) + "\n";
  else if (f.kind == finding_kind::sync_calls) s += "     the host waits on the GPU's work: not a sync problem\n";
  return s;
}

inline std::string idle_section(const trace& t, const idle_breakdown& b) {
  std::string s = printf_string("Window %s (first GPU operation to the last): busy %s (kernels %s, copies alone %s), idle %s\n",
                                duration(static_cast<double>(b.window_ns)).c_str(),
                                percent(double(b.busy_ns) / double(b.window_ns ? b.window_ns : 1)).c_str(),
                                percent(double(b.kernel_ns) / double(b.window_ns ? b.window_ns : 1)).c_str(),
                                percent(double(b.copy_only_ns) / double(b.window_ns ? b.window_ns : 1)).c_str(),
                                percent(double(b.idle_ns) / double(b.window_ns ? b.window_ns : 1)).c_str());
  for (int c = 0; c < idle_cause_count; ++c)
    if (b.cause_count[c])
      s += printf_string("  idle, %s: %s in %" PRIu64 " stretches; ranges: %s\n", idle_cause_name(static_cast<idle_cause>(c)),
                         duration(static_cast<double>(b.cause_ns[c])).c_str(), b.cause_count[c],
                         range_list(t, b.cause_ranges[c]).c_str());
  s += "Idle per stream (HTA: host wait, kernel wait, other):\n";
  for (const auto& r : b.streams)
    s += printf_string("  device %u stream %u: %" PRIu64 " operations, idle %s: host wait %s, kernel wait %s, other %s\n",
                       unsigned(r.device), unsigned(r.stream), r.operations, duration(double(r.idle_ns)).c_str(),
                       duration(double(r.host_wait_ns)).c_str(), duration(double(r.kernel_wait_ns)).c_str(),
                       duration(double(r.other_ns)).c_str());
  if (!b.longest.empty()) s += "Longest idle stretches:\n";
  for (const auto& x : b.longest)
    s += printf_string("  %s at +%s: %s, in %s\n", duration(double(x.duration)).c_str(),
                       duration(double(x.start - b.window_begin)).c_str(), idle_cause_name(x.cause),
                       range_name(t, x.range).c_str());
  return s;
}

inline std::string launch_section(const trace& t, const launch_overview& l) {
  std::string s = printf_string("Launch statistics (call durations %s; queue depth median %.1f, max %" PRIu64 "):\n",
                                l.call_durations_from_api ? "from API records" : "unknown: no API records",
                                l.queue_median, l.queue_max);
  s += "  launches  call med  delay med  delay p90  kernel med  short  outliers(call/delay/dur)  queue  name\n";
  for (const auto& k : l.kernels)
    s += printf_string("  %8" PRIu64 "  %8s  %9s  %9s  %10s  %5" PRIu64 "  %8" PRIu64 "/%" PRIu64 "/%" PRIu64 "  %12.1f  %s\n",
                       k.launches, duration(k.call_median_ns).c_str(), duration(k.delay_median_ns).c_str(),
                       duration(k.delay_p90_ns).c_str(), duration(k.kernel_median_ns).c_str(), k.short_kernels,
                       k.call_outliers, k.delay_outliers, k.duration_outliers, k.queue_median,
                       std::string(t.strings[k.name]).c_str());
  return s;
}

inline std::string rule_row_text(const trace& t, const rule_result& r, const rule_row& row) {
  std::string s = "    " + duration(double(row.duration));
  if (row.call) s += std::string(" ") + std::string(t.strings[row.call]);
  if (row.bytes) s += printf_string(" %" PRIu64 " B", row.bytes);
  if (r.rule == rule_id::low_utilization) s += printf_string(" in use %.1f%%", row.in_use_percent);
  if (r.rule == rule_id::sync_call) s += printf_string(" (GPU busy %.0f%% of the wait)", row.gpu_busy_percent);
  return s + " in " + range_name(t, row.range) + "\n";
}

inline std::string rules_section(const trace& t, const std::vector<rule_result>& rules) {
  std::string s = "Expert rules (nsys analyze):\n";
  for (const auto& r : rules) {
    if (!r.evaluated) {
      s += printf_string("  %s: not evaluated (the trace has no API records)\n", rule_name(r.rule));
      continue;
    }
    s += printf_string("  %s: %" PRIu64 " rows, %s\n", rule_name(r.rule), r.matches, duration(double(r.total_ns)).c_str());
    for (std::size_t i = 0; i < r.rows.size() && i < 3; ++i) s += rule_row_text(t, r, r.rows[i]);
  }
  return s;
}

inline const char* component_name(component_kind k) noexcept {
  static constexpr const char* names[] = {"kernel", "copies", "memsets", "GPU idle", "syncs"};
  return names[static_cast<int>(k) % 5];
}

// The steps' figures, one line without its end: "Steps: <count>, median <time>, p90 ..., max ...; <n> outliers above ...".
inline std::string steps_head(const step_analysis& st) {
  if (st.steps == 0) return "Steps: none (no step ranges)";
  return printf_string("Steps: %" PRIu64 ", median %s, p90 %s, max %s; %" PRIu64 " outliers above %s", st.steps,
                       duration(st.median_ns).c_str(), duration(st.p90_ns).c_str(), duration(double(st.max_ns)).c_str(),
                       st.outlier_count, duration(st.fence_ns).c_str());
}

inline std::string steps_section(const trace& t, const step_analysis& st) {
  std::string s = steps_head(st) + "\n";
  if (st.steps == 0) return s;
  for (const auto& o : st.outliers) {
    s += printf_string("  step #%" PRIu64 " (%s): %s; grew:", o.ordinal, range_name(t, o.range).c_str(),
                       duration(double(o.duration)).c_str());
    for (const auto& g : o.grew) {
      s += std::string(" ") + component_name(g.kind);
      if (g.kind == component_kind::kernel) s += " " + std::string(kernel_name(t, g.name, name_form::base));
      s += " " + duration(g.median_ns) + " -> " + duration(double(g.step_ns)) + ";";
    }
    s += "\n";
  }
  return s;
}

} // namespace diag_text
} // namespace detail

/// The verdict's one line: class and the figure that chose it.
inline std::string verdict_line(const diagnosis_verdict& v) {
  using detail::diag_text::percent;
  const std::string kernels = percent(v.kernel_share);
  const auto cause = [&](idle_cause c) { return percent(v.cause_share[static_cast<int>(c)]); };
  switch (v.kind) {
    case bottleneck::gpu_bound: return "GPU-bound: kernels run " + kernels + " of the window";
    case bottleneck::launch_bound: return "launch-bound: the GPU idles between launches " + cause(idle_cause::launch) + " of the window, kernels run " + kernels;
    case bottleneck::sync_bound: return "sync-bound: the GPU idles while the host synchronises " + cause(idle_cause::sync) + " of the window";
    case bottleneck::host_bound: return "host-bound: the GPU idles while the host works " + cause(idle_cause::host) + " of the window";
    case bottleneck::copy_bound: return "copy-bound: copies run alone " + percent(v.copy_only_share) + " of the window, kernels " + kernels;
    case bottleneck::mixed:
      return "mixed: kernels " + kernels + ", copies alone " + percent(v.copy_only_share) + ", idle: launch " + cause(idle_cause::launch) +
             ", sync " + cause(idle_cause::sync) + ", host " + cause(idle_cause::host) + ", other " + cause(idle_cause::other);
    default: return "no GPU activity recorded";
  }
}

/// The verdict's line, then one numbered block per finding (figure, kernels, ranges, what to try).
inline std::string findings_text(const trace& t, const diagnosis_verdict& v) {
  std::string s = verdict_line(v) + "\n";
  for (std::size_t i = 0; i < v.findings.size(); ++i) s += detail::diag_text::finding_line(t, v.findings[i], i + 1);
  return s;
}

/// The whole diagnosis as text: verdict and findings, idle time, launches, rules, steps.
inline std::string diagnosis_text(const trace& t, const diagnosis& d) {
  namespace w = detail::diag_text;
  std::string s = " ** Diagnosis (nvscope):\n\n" + findings_text(t, d.verdict);
  if (d.verdict.kind == bottleneck::none) return s;
  s += "\n" + w::idle_section(t, d.idle) + "\n" + w::launch_section(t, d.launches) + "\n" + w::rules_section(t, d.rules);
  return s + "\n" + w::steps_section(t, d.steps);
}

/// "kernel", "range-gpu", "step-gpu", "range-host", "step-host".
inline const char* sample_group_name(sample_group g) noexcept {
  static constexpr const char* names[] = {"kernel", "range-gpu", "step-gpu", "range-host", "step-host"};
  const auto i = static_cast<std::size_t>(g);
  return i < 5 ? names[i] : "?";
}

namespace detail {
namespace diag_text {

inline const char* comparison_mark(const comparison_row& r) noexcept {
  if (r.regression) return "REGRESSION";
  if (r.above_threshold) return "slower, host time: not gated";
  return r.significant ? "significant" : r.tested ? "" : "not tested";
}

inline std::string comparison_line(const comparison_row& r) {
  const std::string interval =
      r.tested ? printf_string("[%+7.1f%%, %+7.1f%%]", 100 * r.ci_low, 100 * r.ci_high) : std::string("        -          ");
  return printf_string("  %+7.1f%%  %s  %11.0f  %11.0f  %7" PRIu64 "  %7" PRIu64 "  %-10s  %s  %s\n", 100 * r.change,
                       interval.c_str(), r.base_median, r.new_median, r.base_count, r.new_count, sample_group_name(r.group),
                       nvscope::detail::printable_name(r.name).c_str(), comparison_mark(r));
}

} // namespace diag_text
} // namespace detail

/// A comparison as text: one line per group, gated and largest change first, and the gate.
inline std::string comparison_text(const run_comparison& c, const compare_options& o) {
  using detail::diag_text::printf_string;
  std::string s = printf_string("nvscope diff: change of the median, %.0f%% percentile bootstrap interval (%u resamples), "
                                "threshold %.1f%%; gated: kernels, GPU time of ranges and steps%s\n",
                                100.0 * (1 - o.alpha), o.resamples, 100.0 * o.threshold,
                                o.gate_host ? ", host time" : " (host times listed, not gated)");
  s += "  change     interval              base med      new med   base n    new n  group       name\n";
  for (const auto& r : c.rows) s += detail::diag_text::comparison_line(r);
  s += printf_string("%" PRIu64 " compared, %" PRIu64 " significant, %" PRIu64 " regressions above %.1f%%", c.tested,
                     c.significant, c.regressions, 100.0 * o.threshold);
  if (c.ungated_above) s += printf_string(" (%" PRIu64 " host times above it, not gated)", c.ungated_above);
  return s + (c.gate_failed ? ": FAIL\n" : ": pass\n");
}

/// A comparison as CSV (RFC 4180 quoting of names), one row per group.
inline std::string comparison_csv(const run_comparison& c) {
  using detail::diag_text::printf_string;
  std::string s = "Group,Name,Base Count,New Count,Base Median (ns),New Median (ns),Change (%),CI Low (%),CI High (%),Tested,Significant,Regression,Gated,Above Threshold\n";
  for (const auto& r : c.rows) {
    std::string name = "\"";
    for (const char ch : r.name) name += ch == '"' ? std::string("\"\"") : std::string(1, ch);
    name += '"';
    s += printf_string("%s,", sample_group_name(r.group)) + name +
         printf_string(",%" PRIu64 ",%" PRIu64 ",%.1f,%.1f,%.2f,%.2f,%.2f,%d,%d,%d,%d,%d\n", r.base_count, r.new_count,
                       r.base_median, r.new_median, 100 * r.change, 100 * r.ci_low, 100 * r.ci_high, int(r.tested),
                       int(r.significant), int(r.regression), int(r.gated), int(r.above_threshold));
  }
  return s;
}

} // namespace v1
} // namespace nvscope

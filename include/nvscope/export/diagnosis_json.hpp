// nvscope-target: nvscope
#pragma once

/// \file export/diagnosis_json.hpp
/// The diagnosis and a run comparison as JSON. `diagnosis_json` writes one object: its
/// `"format"` (`{"name": "nvscope-diagnosis", "version": 1}`, schemas/diagnosis.schema.json), verdict
/// (class, shares, findings with ranges and kernels by name), idle breakdown, launch
/// statistics, expert rules, steps and `samples`, the durations `nvscope diff` compares
/// (`{"format": "nvscope-samples", "version": 1, "kernels": [{"name", "count", "ns": [...]}],
/// "ranges": [...], "steps": [...]}`). A saved summary carries it as its `"diagnosis"` member
/// (or carries `samples_json` alone as `"samples"`); `nvscope diff` reads either.
///
/// \code
///   auto a = nvscope::attribute(t);
///   nvscope::diagnosis d = nvscope::diagnose(t, a);
///   nvscope::write_output("diagnosis_%p.json", nvscope::diagnosis_json(t, d));
/// \endcode

#include <nvscope/analyze/diagnose/compare.hpp>
#include <nvscope/analyze/diagnosis.hpp>
#include <nvscope/export/detail/json_text.hpp>
#include <nvscope/export/diagnosis_text.hpp>
#include <nvscope/export/provenance.hpp>
#include <nvscope/trace.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace nvscope {
inline namespace v1 {
namespace detail {
namespace diag_json {

// A tiny object writer: key/value pairs separated by commas.
struct object {
  std::string& out;
  bool first = true;
  explicit object(std::string& o) : out(o) { out += '{'; }
  ~object() { out += '}'; }
  object(const object&) = delete;
  object& operator=(const object&) = delete;
  std::string& key(std::string_view k) {
    if (!first) out += ',';
    first = false;
    append_json_string(out, k);
    out += ':';
    return out;
  }
  void u(std::string_view k, std::uint64_t v) { append_u(key(k), v); }
  void f(std::string_view k, double v) { append_f(key(k), v); }
  void b(std::string_view k, bool v) { key(k) += v ? "true" : "false"; }
  void s(std::string_view k, std::string_view v) { append_json_string(key(k), v); }
  // A member written by its value's type: bool, integer, floating point or text. Chains, so
  // that fields that belong together share a line.
  template <class V>
  object& put(std::string_view k, const V& v) {
    if constexpr (std::is_same_v<V, bool>) b(k, v);
    else if constexpr (std::is_integral_v<V>) u(k, static_cast<std::uint64_t>(v));
    else if constexpr (std::is_floating_point_v<V>) f(k, static_cast<double>(v));
    else s(k, std::string_view(v));
    return *this;
  }
};

template <class T, class F>
void array(std::string& out, const std::vector<T>& items, F&& each) {
  out += '[';
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i) out += ',';
    each(items[i]);
  }
  out += ']';
}

inline void ranges(std::string& out, const trace& t, const std::vector<range_time>& rs) {
  array(out, rs, [&](const range_time& r) {
    object o(out);
    o.s("range", diag_text::range_name(t, r.range));
    o.u("ns", r.ns);
    o.u("count", r.count);
  });
}

inline void findings(std::string& out, const trace& t, const std::vector<finding>& fs) {
  static constexpr const char* kinds[] = {"gpu_time", "copy_time", "launch_gaps", "sync_gaps", "host_gaps", "other_gaps",
                                          "short_kernels", "pageable_copies", "sync_calls", "outlier_steps"};
  static constexpr const char* todo[] = {"none", "optimise_kernels", "fuse_or_graph", "pinned_memory", "overlap_copies",
                                         "drop_sync", "move_host_work", "check_dependencies", "inspect_outlier_steps"};
  array(out, fs, [&](const finding& f) {
    object o(out);
    o.s("kind", kinds[static_cast<int>(f.kind) % 10]);
    o.s("advice", todo[static_cast<int>(f.todo) % 9]);
    o.s("advice_text", advice_text(f.todo));
    o.u("ns", f.ns);
    o.f("share", f.share);
    o.u("count", f.count);
    if (f.kind == finding_kind::sync_calls) o.f("gpu_busy_share", f.gpu_busy_share);
    ranges(o.key("ranges"), t, f.ranges);
    array(o.key("kernels"), f.kernels, [&](const name_time& k) {
      object ko(out);
      ko.s("name", t.strings[k.name]);
      ko.u("ns", k.ns);
      ko.u("count", k.count);
    });
  });
}

inline void verdict(std::string& out, const trace& t, const diagnosis_verdict& v) {
  static constexpr const char* classes[] = {"none", "gpu-bound", "launch-bound", "host-bound", "sync-bound", "copy-bound", "mixed"};
  object o(out);
  o.s("class", classes[static_cast<int>(v.kind) % 7]);
  o.s("line", verdict_line(v));
  o.f("busy_share", v.busy_share);
  o.f("kernel_share", v.kernel_share);
  o.f("copy_only_share", v.copy_only_share);
  {
    object c(o.key("idle_share"));
    for (int i = 0; i < idle_cause_count; ++i) c.f(idle_cause_name(static_cast<idle_cause>(i)), v.cause_share[i]);
  }
  findings(o.key("findings"), t, v.findings);
}

inline void stretch(std::string& out, const trace& t, const idle_stretch& x) {
  object o(out);
  o.put("start_ns", x.start).put("duration_ns", x.duration).put("cause", idle_cause_name(x.cause));
  o.put("range", diag_text::range_name(t, x.range)).put("next_owner", diag_text::range_name(t, x.next_owner));
}

inline void idle(std::string& out, const trace& t, const idle_breakdown& b) {
  object o(out);
  o.put("window_begin_ns", b.window_begin).put("window_ns", b.window_ns);
  o.put("busy_ns", b.busy_ns).put("kernel_ns", b.kernel_ns).put("copy_only_ns", b.copy_only_ns).put("idle_ns", b.idle_ns);
  {
    object c(o.key("causes"));
    for (int i = 0; i < idle_cause_count; ++i) {
      object ci(c.key(idle_cause_name(static_cast<idle_cause>(i))));
      ci.u("ns", b.cause_ns[i]);
      ci.u("count", b.cause_count[i]);
      ranges(ci.key("ranges"), t, b.cause_ranges[i]);
    }
  }
  array(o.key("streams"), b.streams, [&](const stream_idle_row& r) {
    object so(out);
    so.put("device", r.device).put("stream", r.stream).put("operations", r.operations);
    so.put("busy_ns", r.busy_ns).put("idle_ns", r.idle_ns);
    so.put("host_wait_ns", r.host_wait_ns).put("kernel_wait_ns", r.kernel_wait_ns).put("other_ns", r.other_ns);
  });
  array(o.key("longest"), b.longest, [&](const idle_stretch& x) { stretch(out, t, x); });
}

inline void launches(std::string& out, const trace& t, const launch_overview& l) {
  object o(out);
  o.put("call_durations_from_api", l.call_durations_from_api).put("launches", l.launches).put("short_kernels", l.short_kernels);
  o.put("queue_median", l.queue_median).put("queue_max", l.queue_max);
  array(o.key("kernels"), l.kernels, [&](const launch_stats_row& k) {
    object ko(out);
    ko.put("name", t.strings[k.name]).put("launches", k.launches).put("with_call", k.with_call);
    ko.put("call_median_ns", k.call_median_ns).put("call_p90_ns", k.call_p90_ns);
    ko.put("delay_median_ns", k.delay_median_ns).put("delay_p90_ns", k.delay_p90_ns).put("delay_max_ns", k.delay_max_ns);
    ko.put("kernel_median_ns", k.kernel_median_ns).put("kernel_total_ns", k.kernel_total_ns);
    ko.put("short_kernels", k.short_kernels).put("call_outliers", k.call_outliers);
    ko.put("delay_outliers", k.delay_outliers).put("duration_outliers", k.duration_outliers);
    ko.put("queue_median", k.queue_median).put("queue_max", k.queue_max);
  });
}

inline void rules(std::string& out, const trace& t, const std::vector<rule_result>& rs) {
  array(out, rs, [&](const rule_result& r) {
    object o(out);
    o.put("rule", rule_name(r.rule)).put("evaluated", r.evaluated).put("matches", r.matches).put("total_ns", r.total_ns);
    array(o.key("rows"), r.rows, [&](const rule_row& row) {
      object ro(out);
      ro.put("start_ns", row.start).put("duration_ns", row.duration).put("bytes", row.bytes);
      ro.put("call", t.strings[row.call]).put("range", diag_text::range_name(t, row.range));
      ro.put("stream", row.stream).put("device", row.device);
      if (r.rule == rule_id::low_utilization) ro.f("in_use_percent", row.in_use_percent);
      if (r.rule == rule_id::sync_call) ro.f("gpu_busy_percent", row.gpu_busy_percent);
    });
  });
}

inline void steps(std::string& out, const trace& t, const step_analysis& st) {
  object o(out);
  o.put("steps", st.steps).put("median_ns", st.median_ns).put("p90_ns", st.p90_ns).put("max_ns", st.max_ns);
  o.put("fence_ns", st.fence_ns).put("outlier_count", st.outlier_count).put("excess_ns", st.excess_ns);
  array(o.key("outliers"), st.outliers, [&](const outlier_step& s) {
    object so(out);
    so.put("range", diag_text::range_name(t, s.range)).put("ordinal", s.ordinal).put("duration_ns", s.duration);
    array(so.key("grew"), s.grew, [&](const step_growth& g) {
      object go(out);
      go.put("kind", diag_text::component_name(g.kind));
      go.put("name", g.kind == component_kind::kernel ? t.strings[g.name] : std::string_view());
      go.put("median_ns", g.median_ns).put("step_ns", g.step_ns);
    });
  });
}

inline void sample_sets(std::string& out, const std::vector<sample_set>& sets) {
  array(out, sets, [&](const sample_set& s) {
    object o(out);
    o.s("name", s.name);
    o.u("count", s.count);
    array(o.key("ns"), s.ns, [&](std::uint64_t v) { append_u(out, v); });
  });
}

} // namespace diag_json
} // namespace detail

/// The samples alone, as the object `nvscope diff` reads.
inline std::string samples_json(const run_samples& s) {
  std::string out;
  {
    detail::diag_json::object o(out);
    o.s("format", "nvscope-samples");
    o.u("version", 1);
    detail::diag_json::sample_sets(o.key("kernels"), s.kernels);
    detail::diag_json::sample_sets(o.key("ranges"), s.ranges);
    detail::diag_json::sample_sets(o.key("steps"), s.steps);
    detail::diag_json::sample_sets(o.key("ranges_gpu"), s.ranges_gpu);
    detail::diag_json::sample_sets(o.key("steps_gpu"), s.steps_gpu);
    if (s.lossy_steps != 0) o.u("lossy_steps", s.lossy_steps); // steps that lost records, left out of steps and steps_gpu
  }
  return out;
}

/// The whole diagnosis as one JSON object (see the file comment).
inline std::string diagnosis_json(const trace& t, const diagnosis& d) {
  std::string out;
  {
    detail::diag_json::object o(out);
    o.key("format") += format_json("nvscope-diagnosis", diagnosis_format_version);
    detail::diag_json::verdict(o.key("verdict"), t, d.verdict);
    detail::diag_json::idle(o.key("idle"), t, d.idle);
    detail::diag_json::launches(o.key("launches"), t, d.launches);
    detail::diag_json::rules(o.key("rules"), t, d.rules);
    detail::diag_json::steps(o.key("steps"), t, d.steps);
    o.key("samples") += samples_json(d.samples);
  }
  return out;
}

/// A comparison as JSON: options, gate and one object per group, largest change first.
inline std::string comparison_json(const run_comparison& c, const compare_options& opt) {
  std::string out;
  {
    detail::diag_json::object o(out);
    o.put("interval", "percentile bootstrap of the ratio of medians");
    o.put("alpha", opt.alpha).put("threshold", opt.threshold).put("resamples", opt.resamples);
    o.put("gate", c.gate_failed ? "fail" : "pass").put("tested", c.tested).put("significant", c.significant);
    o.put("regressions", c.regressions).put("gate_host", opt.gate_host).put("ungated_above", c.ungated_above);
    detail::diag_json::array(o.key("rows"), c.rows, [&](const comparison_row& r) {
      detail::diag_json::object ro(out);
      ro.put("group", sample_group_name(r.group)).put("name", r.name);
      ro.put("base_count", r.base_count).put("new_count", r.new_count);
      ro.put("base_median_ns", r.base_median).put("new_median_ns", r.new_median);
      ro.put("change", r.change).put("ci_low", r.ci_low).put("ci_high", r.ci_high);
      ro.put("tested", r.tested).put("significant", r.significant).put("regression", r.regression);
      ro.put("gated", r.gated).put("above_threshold", r.above_threshold);
    });
  }
  return out;
}

} // namespace v1
} // namespace nvscope

// nvscope-target: nvscope
#pragma once

/// \file export/totals_json.hpp
/// A run's running totals (trace/totals.hpp) as JSON with every sketch whole, so that another
/// process can merge them as the sketch defines it: `nvscope merge` reads the "totals" of each
/// rank's summary (export/summary_json.hpp) and merges the ranks' sketches bucket for bucket.
///
/// `{"quantile_relative_error": 0.01,
///   "kernels": [{"name": "gemm", "sketch": S}, ...],
///   "ranges": [{"domain": "", "name": "forward", "style": "PushPop", "sketch": S}, ...],
///   "steps": S, "run": {"kernels": n, "kernel_ns": n, "copies": n, ...}}`, where a sketch S is
/// `{"count", "sum_ns", "min_ns", "max_ns", "p50_ns", "p90_ns", "p99_ns"}` (readable as they
/// stand) and its parts `"zero_count", "first_bucket", "buckets": [...], "sum_high", "sum_low"`,
/// which `duration_sketch::from_parts` takes back. Keys in name order, as `totals` holds them.
///
/// \code
///   nvscope::totals all;
///   nvscope::fold(t, all);
///   std::string j = nvscope::totals_json(all);
/// \endcode

#include <nvscope/export/detail/json_text.hpp>
#include <nvscope/trace/totals.hpp>

#include <cstdint>
#include <string>
#include <utility>

namespace nvscope {
inline namespace v1 {

namespace detail {

inline void json_sketch(std::string& out, const duration_sketch& s) {
  out += "{\"count\": ";
  append_u(out, s.count());
  out += ", \"sum_ns\": ";
  append_u(out, s.sum());
  out += ", \"min_ns\": ";
  append_u(out, s.min());
  out += ", \"max_ns\": ";
  append_u(out, s.max());
  const char* q[] = {", \"p50_ns\": ", ", \"p90_ns\": ", ", \"p99_ns\": "};
  const double at[] = {0.5, 0.9, 0.99};
  for (int i = 0; i < 3; ++i) out += q[i], append_f(out, s.quantile(at[i]));
  out += ", \"zero_count\": ";
  append_u(out, s.zero_count());
  out += ", \"first_bucket\": ";
  append_u(out, s.first_bucket());
  out += ", \"buckets\": [";
  for (std::size_t i = 0; i < s.buckets().size(); ++i) {
    if (i) out += ',';
    append_u(out, s.buckets()[i]);
  }
  out += "], \"sum_high\": ";
  append_u(out, s.sum_high());
  out += ", \"sum_low\": ";
  append_u(out, s.sum_low());
  out += "}";
}

inline void json_run_totals(std::string& out, const run_totals& r) {
  const std::pair<const char*, std::uint64_t> fields[] = {
      {"kernels", r.kernels}, {"kernel_ns", r.kernel_ns}, {"copies", r.copies}, {"copy_ns", r.copy_ns},
      {"memsets", r.memsets}, {"memset_ns", r.memset_ns}, {"syncs", r.syncs},   {"sync_ns", r.sync_ns},
      {"ranges", r.ranges},   {"dropped_records", r.lost.dropped_records}};
  out += "{";
  for (std::size_t i = 0; i < sizeof fields / sizeof fields[0]; ++i) {
    out += i ? ", " : "";
    append_json_string(out, fields[i].first);
    out += ": ";
    append_u(out, fields[i].second);
  }
  out += "}";
}

} // namespace detail

/// `all` as one JSON object, its sketches whole (see the file comment).
/// \code
///   out += "\"totals\": " + nvscope::totals_json(all);
/// \endcode
inline std::string totals_json(const totals& all) {
  using namespace detail;
  std::string out = "{\"quantile_relative_error\": ";
  append_f(out, duration_sketch::relative_error);
  out += ",\n  \"kernels\": [";
  bool first = true;
  for (const auto& [name, s] : all.kernels) {
    out += first ? "\n   {\"name\": " : ",\n   {\"name\": ";
    first = false;
    append_json_string(out, name);
    out += ", \"sketch\": ";
    json_sketch(out, s);
    out += "}";
  }
  out += "],\n  \"ranges\": [";
  first = true;
  for (const auto& [key, s] : all.ranges) {
    out += first ? "\n   {\"domain\": " : ",\n   {\"domain\": ";
    first = false;
    append_json_string(out, key.domain);
    out += ", \"name\": ";
    append_json_string(out, key.name);
    out += key.push_pop ? ", \"style\": \"PushPop\", \"sketch\": " : ", \"style\": \"StartEnd\", \"sketch\": ";
    json_sketch(out, s);
    out += "}";
  }
  out += "],\n  \"steps\": ";
  json_sketch(out, all.steps);
  out += ",\n  \"run\": ";
  json_run_totals(out, all.run);
  return out + "}";
}

} // namespace v1
} // namespace nvscope

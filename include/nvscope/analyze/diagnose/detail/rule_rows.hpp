// nvscope-target: nvscope
#pragma once

// Pieces the expert rules share: row making, the rows' order and cut, GPU busy time inside
// any stretch in log time, the sync rule's rows (the verdict's sync finding reads them too).
// Internal.

#include <nvscope/analyze/diagnose/detail/timeline.hpp>
#include <nvscope/analyze/diagnose/options.hpp>
#include <nvscope/analyze/diagnosis.hpp>

#include <algorithm>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

namespace nvscope {
inline namespace v1 {
namespace detail {
namespace diag {

inline bool has_text(std::string_view s, std::string_view part) noexcept { return s.find(part) != std::string_view::npos; }

inline void finish_rule(rule_result& r, std::uint32_t keep, bool by_duration = true) {
  r.matches = r.rows.size();
  for (const auto& row : r.rows) r.total_ns += row.duration;
  if (by_duration)
    std::stable_sort(r.rows.begin(), r.rows.end(),
                     [](const rule_row& x, const rule_row& y) { return x.duration > y.duration; });
  if (r.rows.size() > keep) r.rows.resize(keep);
}

inline rule_row op_row(const timeline& tl, const gpu_op& op, std::uint64_t bytes) {
  rule_row row;
  row.start = op.start;
  row.duration = op.end - op.start;
  row.bytes = bytes;
  row.record = op.index();
  row.call = tl.call_name(tl.correlation_of(op));
  row.range = tl.owner_of(op);
  row.thread = op.thread;
  row.stream = tl.stream_of(op);
  row.device = tl.device_of(op);
  return row;
}

// GPU busy time inside [start, start + duration) of each row (those of no duration left out):
// the window (first operation's start to the last one's end) less the idle stretches inside.
// The rows' ends, in time order, meet the stretches (found in time order, none overlapping) in
// one walk that stops at the last end: no column of the stretches' running sums (16 bytes a
// stretch, at the diagnosis' peak of memory) for the few rows that ask.
inline void set_gpu_busy(const timeline& tl, const idle_breakdown& idle, std::vector<rule_row>& rows) {
  scratch_vector<std::pair<timestamp_ns, std::uint32_t>> points; // (time, 2 * row + is_end)
  for (std::uint32_t r = 0; r < rows.size(); ++r) {
    if (rows[r].duration == 0) continue;
    points.emplace_back(rows[r].start, 2 * r);
    points.emplace_back(rows[r].start + rows[r].duration, 2 * r + 1);
  }
  std::sort(points.begin(), points.end());
  const auto& s = idle.stretches;
  std::vector<std::uint64_t> busy_until(points.size()); // by point, in `points` order
  std::size_t next = 0;        // stretches [0, next) start at or before the point
  std::uint64_t before = 0;    // idle time of stretches [0, next - 1)
  for (std::size_t p = 0; p < points.size(); ++p) {
    const timestamp_ns x = std::min(points[p].first, tl.end);
    if (tl.ops.empty() || x <= tl.begin) continue; // busy_until 0
    for (; next < s.size() && s[next].start <= x; ++next)
      if (next > 0) before += s[next - 1].duration;
    const std::uint64_t idle_until = next == 0 ? 0 : before + (std::min(x, s[next - 1].start + s[next - 1].duration) - s[next - 1].start);
    busy_until[p] = (x - tl.begin) - idle_until;
  }
  std::vector<std::uint64_t> from(rows.size()), to(rows.size());
  for (std::size_t p = 0; p < points.size(); ++p) (points[p].second & 1u ? to : from)[points[p].second >> 1] = busy_until[p];
  for (std::uint32_t r = 0; r < rows.size(); ++r)
    if (rows[r].duration > 0)
      rows[r].gpu_busy_percent = 100.0 * static_cast<double>(to[r] > from[r] ? to[r] - from[r] : 0) / static_cast<double>(rows[r].duration);
}

// cuda_api_sync's rows: every device and stream synchronisation (event waits too where
// `sync_rule_includes_events`) complete and starting inside the window, in record order, each
// with the GPU's busy share during it.
inline std::vector<rule_row> sync_rows(const timeline& tl, const idle_breakdown& idle, const diagnosis_options& o) {
  const trace& t = *tl.t;
  std::vector<rule_row> rows;
  for (std::uint32_t i = 0; i < t.syncs.size(); ++i) {
    const auto& s = t.syncs[i];
    const bool blocking = s.kind == sync_kind::stream || s.kind == sync_kind::context ||
                          (o.sync_rule_includes_events && s.kind == sync_kind::event);
    if (!blocking || s.end == 0 || s.end < s.start || !tl.inside(s.start)) continue;
    rule_row row;
    row.start = s.start;
    row.duration = s.end - s.start;
    row.record = i;
    row.call = tl.call_name(s.correlation);
    row.thread = s.thread;
    row.range = tl.range_at(s.thread, s.start);
    row.stream = s.stream;
    rows.push_back(row);
  }
  set_gpu_busy(tl, idle, rows);
  return rows;
}

} // namespace diag
} // namespace detail
} // namespace v1
} // namespace nvscope

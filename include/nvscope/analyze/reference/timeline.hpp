// nvscope-target: nvscope
#pragma once

/// \file analyze/reference/timeline.hpp
/// The diagnosis' timeline and its idle time, defined plainly: every GPU operation in one
/// sorted vector, HTA's per-stream idle rows, and the stretches with no operation on any
/// stream with their causes and ranges (docs/diagnosis.md, "The window" and "Idle-time
/// breakdown"). std containers, loops and `std::sort`, quadratic where that is clearer. Not
/// included by `analysis.hpp`; tests/diagnose/reference_diagnosis_test.cpp holds the fast
/// passes equal to these.
///
/// \code
///   #include <nvscope/analyze/reference/timeline.hpp>
///   const auto ops = nvscope::reference::timeline(t, {});
///   nvscope::idle_breakdown b = nvscope::reference::idle_time(t, ops, {});
/// \endcode

#include <nvscope/analyze/diagnose/options.hpp>
#include <nvscope/analyze/diagnosis.hpp>
#include <nvscope/analyze/reference/common.hpp>
#include <nvscope/trace.hpp>

#include <algorithm>
#include <cstdint>
#include <tuple>
#include <utility>
#include <vector>

namespace nvscope {
inline namespace v1 {
namespace reference {

enum class op_kind : std::uint8_t { kernel, copy, memset };

/// One GPU operation of the timeline, with what the passes read of its record and its launch.
struct gpu_op {
  op_kind kind = op_kind::kernel;
  std::uint32_t record = 0;  ///< into kernels, copies or memsets
  timestamp_ns start = 0, end = 0;
  std::uint32_t stream = 0;
  std::uint16_t device = 0;
  std::uint32_t correlation = 0;
  string_id name = 0;        ///< the kernel's name; 0 for copies and memsets
  std::uint32_t thread = diagnosis_none; ///< the launching thread (launch record); none without one
  timestamp_ns call_start = 0; ///< the API call's start, else the launch record's time; 0: unknown
  timestamp_ns call_end = 0;   ///< the API call's end, else `call_start`
  bool has_call = false;       ///< an API record gives the call
  std::uint32_t owner = diagnosis_none; ///< innermost push/pop range open at the launch
};

/// Where the diagnosis looks (`diagnosis_options::window`): what starts in [begin, end); end 0:
/// everything.
inline bool starts_inside(const time_window& w, timestamp_ns start) { return w.end == 0 || (w.begin <= start && start < w.end); }

/// The API call of a correlation id (the call table of the diagnosis): among the API records
/// with that id (not 0) and an end not before their start, the first runtime call in record
/// order (it wraps the driver call), else the first driver call; `no_index` for none.
inline std::uint32_t call_of(const trace& t, std::uint32_t correlation) {
  std::uint32_t driver = no_index;
  for (std::uint32_t i = 0; i < t.api_calls.size(); ++i) {
    const auto& c = t.api_calls[i];
    if (correlation == 0 || c.correlation != correlation || c.end < c.start) continue;
    if (!c.is_driver) return i;
    if (driver == no_index) driver = i;
  }
  return driver;
}

/// The API name of a correlation id, or 0.
inline string_id call_name(const trace& t, std::uint32_t correlation) {
  const auto c = call_of(t, correlation);
  return c == no_index ? 0 : t.api_calls[c].name;
}

/// Whether the trace names its calls: some API record has an id and an end not before its start.
inline bool names_calls(const trace& t) {
  for (const auto& c : t.api_calls)
    if (c.correlation != 0 && c.end >= c.start) return true;
  return false;
}

/// One operation of record `r`: its launch by correlation id (`launch_of`), its call from the
/// API record where there is one, its owner the innermost push/pop range at the launch (`credited_owner`).
template <class Record>
gpu_op op_of(const trace& t, const std::vector<timestamp_ns>& ends, op_kind kind, std::uint32_t i, const Record& r, attribution_rule credit) {
  gpu_op op;
  op.kind = kind, op.record = i, op.start = r.start, op.end = r.end, op.stream = r.stream;
  op.device = device_of(t, r), op.correlation = r.correlation;
  if (const auto l = launch_of(t, r.correlation); l != no_index) {
    op.thread = t.launches[l].thread;
    op.call_start = op.call_end = t.launches[l].time;
    op.owner = credited_owner(t, ends, l, credit);
  }
  if (const auto c = call_of(t, r.correlation); c != no_index) {
    op.call_start = t.api_calls[c].start;
    op.call_end = t.api_calls[c].end;
    op.has_call = true;
  }
  return op;
}

/// The diagnosis' timeline: every kernel, copy and memset with an end not before its start
/// (`valid`) that starts inside the window, sorted by (start, end), ties kernels first, then
/// copies, then memsets, then by record (nsys's gpu_gaps and gpu_time_util read the GPU's
/// operations in start order).
inline std::vector<gpu_op> timeline(const trace& t, const time_window& window, attribution_rule credit = attribution_rule::thread) {
  const auto ends = range_ends(t);
  std::vector<gpu_op> ops;
  for (std::uint32_t i = 0; i < t.kernels.size(); ++i) {
    const auto& k = t.kernels[i];
    if (!valid(k.start, k.end) || !starts_inside(window, k.start)) continue;
    ops.push_back(op_of(t, ends, op_kind::kernel, i, k, credit));
    ops.back().name = k.name;
  }
  for (std::uint32_t i = 0; i < t.copies.size(); ++i)
    if (valid(t.copies[i].start, t.copies[i].end) && starts_inside(window, t.copies[i].start)) ops.push_back(op_of(t, ends, op_kind::copy, i, t.copies[i], credit));
  for (std::uint32_t i = 0; i < t.memsets.size(); ++i)
    if (valid(t.memsets[i].start, t.memsets[i].end) && starts_inside(window, t.memsets[i].start)) ops.push_back(op_of(t, ends, op_kind::memset, i, t.memsets[i], credit));
  std::sort(ops.begin(), ops.end(), [](const gpu_op& x, const gpu_op& y) {
    return std::make_tuple(x.start, x.end, x.kind, x.record) < std::make_tuple(y.start, y.end, y.kind, y.record);
  });
  return ops;
}

/// The (device, stream) key the diagnosis groups a stream's operations by, ascending.
inline std::uint64_t stream_key(const gpu_op& op) { return (static_cast<std::uint64_t>(op.device) << 32) | op.stream; }

/// The operations of each stream, streams by `stream_key`, each stream's in timeline order.
inline std::vector<std::vector<gpu_op>> by_stream(const std::vector<gpu_op>& ops) {
  std::vector<std::uint64_t> keys;
  for (const auto& op : ops) keys.push_back(stream_key(op));
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  std::vector<std::vector<gpu_op>> out(keys.size());
  for (const auto& op : ops) out[static_cast<std::size_t>(std::lower_bound(keys.begin(), keys.end(), stream_key(op)) - keys.begin())].push_back(op);
  return out;
}

/// One stream's row, HTA's `_analyze_idle_time_for_stream` (`get_idle_time_breakdown`): the
/// stream's operations in start order, `idle_interval = ts - prev_end_ts`; "host wait" when
/// the operation's runtime call began after the previous one ended (`ts_runtime >
/// prev_end_ts`), else "kernel wait" when the interval is below `consecutive_kernel_delay`
/// (`kernel_wait_max_ns`), else "other". An operation with no call known is never host wait
/// (HTA's comparison with a missing runtime is false). Where operations overlap, the previous
/// end is the latest end so far and only gaps count (HTA's shift(1) would sum negative
/// intervals). busy: the union of the stream's operations; idle: first start to last end,
/// minus busy.
inline stream_idle_row stream_row(const std::vector<gpu_op>& ops, const diagnosis_options& o) {
  stream_idle_row row;
  row.device = ops.front().device;
  row.stream = ops.front().stream;
  timestamp_ns prev_end = ops.front().start;
  for (const auto& op : ops) {
    if (op.start > prev_end) {
      const auto gap = op.start - prev_end;
      if (op.call_start != 0 && op.call_start > prev_end) row.host_wait_ns += gap;
      else if (gap < o.kernel_wait_max_ns) row.kernel_wait_ns += gap;
      else row.other_ns += gap;
    }
    row.operations += 1;
    if (op.end > std::max(op.start, prev_end)) row.busy_ns += op.end - std::max(op.start, prev_end);
    prev_end = std::max(prev_end, op.end);
  }
  row.idle_ns = (prev_end - ops.front().start) - row.busy_ns;
  return row;
}

/// The latest end of a synchronisation `thread` sat in at some moment of [from, to] (a valid
/// sync record with start <= to and end >= from), or 0.
inline timestamp_ns last_sync_end(const trace& t, std::uint32_t thread, timestamp_ns from, timestamp_ns to) {
  timestamp_ns last = 0;
  for (const auto& s : t.syncs)
    if (s.thread == thread && valid(s.start, s.end) && s.start <= to && s.end >= from) last = std::max(last, s.end);
  return last;
}

/// Why the GPU sat idle from `gap_start` until `next` began (docs/diagnosis.md's `idle_cause`
/// table): `other` without a launch record or call; queued before the stretch began: `launch`
/// when the stretch is shorter than `launch_gap_max_ns`, else `other`; launched after it began:
/// `sync` when the thread sat in a sync in between and launched within `launch_gap_max_ns` of
/// its return, else `host` when a sync was there or the launch came `launch_gap_max_ns` or more
/// after the stretch began, else `launch`.
inline idle_cause cause_of(const trace& t, const gpu_op& next, timestamp_ns gap_start, const diagnosis_options& o) {
  if (next.call_start == 0 || next.thread == diagnosis_none) return idle_cause::other;
  const std::uint64_t gap = next.start - gap_start;
  if (next.call_start <= gap_start) return gap < o.launch_gap_max_ns ? idle_cause::launch : idle_cause::other;
  const timestamp_ns sync_end = last_sync_end(t, next.thread, gap_start, next.call_start);
  if (sync_end != 0 && next.call_start - std::max(gap_start, std::min(sync_end, next.call_start)) < o.launch_gap_max_ns) return idle_cause::sync;
  if (sync_end != 0 || next.call_start - gap_start >= o.launch_gap_max_ns) return idle_cause::host;
  return idle_cause::launch;
}

/// Every stretch with no operation running on any stream, in time order: before each
/// operation that starts after every earlier one ended, from that latest end to its start;
/// its cause (`cause_of`), the thread that launched the operation ending it, the innermost
/// push/pop range open on that thread when it began, and that operation's owner.
inline std::vector<idle_stretch> stretches(const trace& t, const std::vector<gpu_op>& ops, const diagnosis_options& o) {
  const auto ends = range_ends(t);
  std::vector<idle_stretch> out;
  timestamp_ns cover = ops.empty() ? 0 : ops.front().end; // the latest end of ops[0, i)
  for (std::size_t i = 1; i < ops.size(); cover = std::max(cover, ops[i].end), ++i) {
    if (ops[i].start <= cover) continue;
    idle_stretch s;
    s.start = cover;
    s.duration = ops[i].start - cover;
    s.cause = cause_of(t, ops[i], cover, o);
    s.thread = ops[i].thread;
    s.range = s.thread == diagnosis_none ? diagnosis_none : innermost_at(t, ends, s.thread, cover);
    s.next_owner = ops[i].owner;
    out.push_back(s);
  }
  return out;
}

/// Time charged to ranges, summed per range name (domain, name): `charges` (range, ns) in time
/// order; per name its time, its count and one instance, the range of its longest charge (the
/// latest of equals); charges to no range make one row of their own. Largest first (then by
/// instance), at most `keep`.
inline std::vector<range_time> by_range_name(const trace& t, const std::vector<std::pair<std::uint32_t, std::uint64_t>>& charges,
                                             std::size_t keep) {
  std::vector<std::uint64_t> keys, longest;
  std::vector<range_time> rows;
  for (const auto& [range, ns] : charges) {
    const bool known = range < t.ranges.size();
    const std::uint64_t key = known ? (static_cast<std::uint64_t>(t.ranges[range].domain) << 32) | t.ranges[range].name : ~std::uint64_t{0};
    const auto at = static_cast<std::size_t>(std::find(keys.begin(), keys.end(), key) - keys.begin());
    if (at == keys.size()) keys.push_back(key), longest.push_back(0), rows.emplace_back();
    auto& row = rows[at];
    row.ns += ns;
    row.count += 1;
    if (known && ns >= longest[at]) {
      longest[at] = ns;
      row.range = range, row.domain = t.ranges[range].domain, row.name = t.ranges[range].name;
    }
  }
  std::sort(rows.begin(), rows.end(), [](const range_time& x, const range_time& y) { return x.ns != y.ns ? x.ns > y.ns : x.range < y.range; });
  if (rows.size() > keep) rows.resize(keep);
  return rows;
}

/// The length of the union of the operations for which `take` holds, clipped to [from, to).
template <class Take>
std::uint64_t union_ns(const std::vector<gpu_op>& ops, timestamp_ns from, timestamp_ns to, Take take) {
  std::vector<std::pair<timestamp_ns, timestamp_ns>> spans;
  for (const auto& op : ops)
    if (take(op) && std::max(op.start, from) < std::min(op.end, to)) spans.emplace_back(std::max(op.start, from), std::min(op.end, to));
  std::sort(spans.begin(), spans.end());
  std::uint64_t sum = 0;
  timestamp_ns cover = 0;
  for (const auto& [a, b] : spans) {
    if (b > std::max(a, cover)) sum += b - std::max(a, cover);
    cover = std::max(cover, b);
  }
  return sum;
}

/// The idle-time breakdown (docs/diagnosis.md) of the timeline `ops` and its stretches `found`:
/// window from the first operation's start to the last one's end; busy the union of every
/// operation, kernel time the union of kernels and memsets, copy-only busy minus kernel time,
/// idle window minus busy; per cause the stretches' time, count and three ranges holding most
/// (`by_range_name`); the `top_idle` longest stretches (longest first, then earliest); a row
/// per stream (`stream_row`).
inline idle_breakdown breakdown(const trace& t, const std::vector<gpu_op>& ops, const std::vector<idle_stretch>& found, const diagnosis_options& o) {
  idle_breakdown b;
  if (ops.empty()) return b;
  b.window_begin = ops.front().start;
  for (const auto& op : ops) b.window_end = std::max(b.window_end, op.end);
  b.window_ns = b.window_end - b.window_begin;
  const timestamp_ns all = ~timestamp_ns{0};
  b.busy_ns = union_ns(ops, 0, all, [](const gpu_op&) { return true; });
  b.kernel_ns = union_ns(ops, 0, all, [](const gpu_op& op) { return op.kind != op_kind::copy; });
  b.copy_only_ns = b.busy_ns - b.kernel_ns;
  b.idle_ns = b.window_ns > b.busy_ns ? b.window_ns - b.busy_ns : 0;
  std::vector<std::pair<std::uint32_t, std::uint64_t>> charges[idle_cause_count];
  for (const auto& s : found) {
    const auto c = static_cast<int>(s.cause);
    b.cause_ns[c] += s.duration;
    b.cause_count[c] += 1;
    charges[c].emplace_back(s.range, s.duration);
  }
  for (int c = 0; c < idle_cause_count; ++c) b.cause_ranges[c] = by_range_name(t, charges[c], 3);
  b.longest = found;
  std::sort(b.longest.begin(), b.longest.end(), [](const idle_stretch& x, const idle_stretch& y) {
    return x.duration != y.duration ? x.duration > y.duration : x.start < y.start;
  });
  if (b.longest.size() > o.top_idle) b.longest.resize(o.top_idle);
  b.stretches.assign(found.begin(), found.end());
  for (const auto& stream : by_stream(ops)) b.streams.push_back(stream_row(stream, o));
  return b;
}

/// The idle-time breakdown of the timeline `ops`: `breakdown` of its `stretches`.
inline idle_breakdown idle_time(const trace& t, const std::vector<gpu_op>& ops, const diagnosis_options& o) {
  return breakdown(t, ops, stretches(t, ops, o), o);
}

} // namespace reference
} // namespace v1
} // namespace nvscope

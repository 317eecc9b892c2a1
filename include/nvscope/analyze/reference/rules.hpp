// nvscope-target: nvscope
#pragma once

/// \file analyze/reference/rules.hpp
/// Nsight Systems' expert rules (`nsys analyze`: cuda_memcpy_async, cuda_memcpy_sync,
/// cuda_memset_sync, cuda_api_sync, gpu_gaps, gpu_time_util), defined plainly over the
/// reference timeline and its idle stretches (docs/diagnosis.md, "Expert rules"). Not included
/// by `analysis.hpp`.
///
/// \code
///   #include <nvscope/analyze/reference/rules.hpp>
///   const auto ops = nvscope::reference::timeline(t, {});
///   const auto idle = nvscope::reference::idle_time(t, ops, {});
///   auto rules = nvscope::reference::expert_rules(t, ops, idle, {});
/// \endcode

#include <nvscope/analyze/diagnose/options.hpp>
#include <nvscope/analyze/diagnosis.hpp>
#include <nvscope/analyze/reference/common.hpp>
#include <nvscope/analyze/reference/timeline.hpp>

#include <algorithm>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

namespace nvscope {
inline namespace v1 {
namespace reference {

/// A rule's figures from its rows: `matches` all of them, `total_ns` their time; rows longest
/// first (equals in the order found) unless `by_time` (chunks keep time order), `keep` kept.
inline rule_result finished(rule_id id, std::vector<rule_row> rows, std::uint32_t keep, bool by_time = false) {
  rule_result r;
  r.rule = id;
  r.matches = rows.size();
  for (const auto& row : rows) r.total_ns += row.duration;
  if (!by_time) std::stable_sort(rows.begin(), rows.end(), [](const rule_row& x, const rule_row& y) { return x.duration > y.duration; });
  if (rows.size() > keep) rows.resize(keep);
  r.rows = std::move(rows);
  return r;
}

/// A copy's or memset's row: its time, bytes, record, call, owner, thread, stream, device.
inline rule_row op_row(const trace& t, const gpu_op& op, std::uint64_t bytes) {
  rule_row row;
  row.start = op.start, row.duration = op.end - op.start, row.bytes = bytes, row.record = op.record;
  row.call = call_name(t, op.correlation), row.range = op.owner, row.thread = op.thread;
  row.stream = op.stream, row.device = op.device;
  return row;
}

/// The three rules on copies and memsets, over the timeline's copies and memsets in its order.
/// `cuda_memcpy_async`: copies with a pageable source or destination issued by a call whose
/// name holds "Async" (every one when the call is not known); `cuda_memcpy_sync`: copies whose
/// known call holds "emcpy" and not "Async"; `cuda_memset_sync`: memsets of pinned or managed
/// memory whose known call holds "emset" and not "Async". A call is known where the trace
/// names its calls (`names_calls`) and this one has a name; else the two sync rules are not
/// evaluated.
inline std::vector<rule_result> memop_rules(const trace& t, const std::vector<gpu_op>& ops, const diagnosis_options& o) {
  const bool named = names_calls(t);
  std::vector<rule_row> pageable, sync_copy, sync_memset;
  for (const auto& op : ops) {
    const std::string_view call = t.strings[call_name(t, op.correlation)];
    const bool known = named && !call.empty(), async = call.find("Async") != std::string_view::npos;
    if (op.kind == op_kind::copy) {
      const auto& c = t.copies[op.record];
      if ((c.src == memory_kind::pageable || c.dst == memory_kind::pageable) && (!known || async)) pageable.push_back(op_row(t, op, c.bytes));
      if (known && !async && call.find("emcpy") != std::string_view::npos) sync_copy.push_back(op_row(t, op, c.bytes));
    } else if (op.kind == op_kind::memset) {
      const auto& m = t.memsets[op.record];
      const bool host_visible = m.memory == memory_kind::pinned || m.memory == memory_kind::managed;
      if (known && !async && call.find("emset") != std::string_view::npos && host_visible) sync_memset.push_back(op_row(t, op, m.bytes));
    }
  }
  std::vector<rule_result> out{finished(rule_id::pageable_async_copy, pageable, o.rule_rows), finished(rule_id::sync_copy, sync_copy, o.rule_rows),
                               finished(rule_id::sync_memset, sync_memset, o.rule_rows)};
  out[1].evaluated = out[2].evaluated = named;
  return out;
}

/// `cuda_api_sync`'s rows: every device and stream synchronisation (and event wait where
/// `sync_rule_includes_events`) with a valid end that starts inside the window, in record
/// order; its call, thread, stream, the innermost push/pop range open on its thread at its
/// start, and the GPU's busy share during the wait (the union of the timeline's operations
/// inside it, of its duration).
inline std::vector<rule_row> sync_rows(const trace& t, const std::vector<gpu_op>& ops, const diagnosis_options& o) {
  const auto ends = range_ends(t);
  std::vector<rule_row> rows;
  for (std::uint32_t i = 0; i < t.syncs.size(); ++i) {
    const auto& s = t.syncs[i];
    const bool blocking = s.kind == sync_kind::stream || s.kind == sync_kind::context || (o.sync_rule_includes_events && s.kind == sync_kind::event);
    if (!blocking || !valid(s.start, s.end) || !starts_inside(o.window, s.start)) continue;
    rule_row row;
    row.start = s.start, row.duration = s.end - s.start, row.record = i, row.call = call_name(t, s.correlation);
    row.thread = s.thread, row.range = innermost_at(t, ends, s.thread, s.start), row.stream = s.stream;
    const auto busy = union_ns(ops, s.start, s.end, [](const gpu_op&) { return true; });
    if (row.duration > 0) row.gpu_busy_percent = 100.0 * static_cast<double>(busy) / static_cast<double>(row.duration);
    rows.push_back(row);
  }
  return rows;
}

/// `cuda_api_sync`: its rows (`sync_rows`), longest first.
inline rule_result sync_rule(const trace& t, const std::vector<gpu_op>& ops, const diagnosis_options& o) {
  return finished(rule_id::sync_call, sync_rows(t, ops, o), o.rule_rows);
}

/// `gpu_gaps`: every idle stretch of at least `gpu_gap_min_ns`, with its range and thread.
inline rule_result gap_rule(const idle_breakdown& idle, const diagnosis_options& o) {
  std::vector<rule_row> rows;
  for (const auto& s : idle.stretches) {
    if (s.duration < o.gpu_gap_min_ns) continue;
    rule_row row;
    row.start = s.start, row.duration = s.duration, row.range = s.range, row.thread = s.thread;
    rows.push_back(row);
  }
  return finished(rule_id::gpu_gap, rows, o.rule_rows);
}

/// The range holding most idle time inside [a, b): the stretches' overlaps summed per range
/// name (`by_range_name`), the top name's instance.
inline std::uint32_t most_idle_range(const trace& t, const idle_breakdown& idle, timestamp_ns a, timestamp_ns b) {
  std::vector<std::pair<std::uint32_t, std::uint64_t>> charges;
  for (const auto& s : idle.stretches) {
    const auto lo = std::max(a, s.start), hi = std::min(b, s.start + s.duration);
    if (hi > lo) charges.emplace_back(s.range, hi - lo);
  }
  const auto top = by_range_name(t, charges, 1);
  return top.empty() ? diagnosis_none : top.front().range;
}

/// `gpu_time_util` (nsys DEFAULT_NUM_CHUNKS, DEFAULT_THRESHOLD): the window cut into
/// `utilization_chunks` (1 to 1,000) chunks of ceil(window / chunks) ns, the last shorter; a
/// chunk's use is the summed overlap of every operation with it; chunks below the threshold,
/// consecutive ones coalesced, each a row with its use (the coalesced chunks' summed time over
/// their length) and its most idle range; rows in time order.
inline rule_result utilization_rule(const trace& t, const std::vector<gpu_op>& ops, const idle_breakdown& idle, const diagnosis_options& o) {
  std::vector<rule_row> rows;
  if (ops.empty() || idle.window_end <= idle.window_begin) return finished(rule_id::low_utilization, rows, o.rule_rows, true);
  const std::uint64_t chunks = std::max<std::uint32_t>(1, std::min<std::uint32_t>(o.utilization_chunks, 1000)), window = idle.window_ns;
  const std::uint64_t size = std::max<std::uint64_t>(1, (window + chunks - 1) / chunks), n = (window + size - 1) / size;
  const auto begin_of = [&](std::uint64_t i) { return idle.window_begin + i * size; };
  const auto end_of = [&](std::uint64_t i) { return std::min(idle.window_end, idle.window_begin + (i + 1) * size); };
  std::vector<std::uint64_t> used(n, 0);
  for (std::uint64_t i = 0; i < n; ++i)
    for (const auto& op : ops)
      if (std::min(op.end, end_of(i)) > std::max(op.start, begin_of(i))) used[i] += std::min(op.end, end_of(i)) - std::max(op.start, begin_of(i));
  const auto low = [&](std::uint64_t i) { return 100.0 * static_cast<double>(used[i]) < o.utilization_threshold_percent * static_cast<double>(end_of(i) - begin_of(i)); };
  for (std::uint64_t i = 0; i < n;) {
    if (!low(i)) {
      ++i;
      continue;
    }
    std::uint64_t j = i, sum = 0;
    while (j < n && low(j)) sum += used[j++];
    rule_row row;
    row.start = begin_of(i), row.duration = end_of(j - 1) - row.start;
    row.in_use_percent = 100.0 * static_cast<double>(sum) / static_cast<double>(row.duration);
    row.range = most_idle_range(t, idle, row.start, row.start + row.duration);
    rows.push_back(row);
    i = j;
  }
  return finished(rule_id::low_utilization, rows, o.rule_rows, true);
}

/// Every rule, in `rule_id` order.
inline std::vector<rule_result> expert_rules(const trace& t, const std::vector<gpu_op>& ops, const idle_breakdown& idle, const diagnosis_options& o) {
  auto out = memop_rules(t, ops, o);
  out.push_back(sync_rule(t, ops, o));
  out.push_back(gap_rule(idle, o));
  out.push_back(utilization_rule(t, ops, idle, o));
  return out;
}

} // namespace reference
} // namespace v1
} // namespace nvscope

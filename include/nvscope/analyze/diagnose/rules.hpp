// nvscope-target: nvscope
#pragma once

/// \file analyze/diagnose/rules.hpp
/// Nsight Systems' expert rules (`nsys analyze`), each a row set naming the call and the
/// innermost NVTX range on the calling thread, with nsys's defaults (diagnosis_options):
/// async copies touching pageable memory (cuda_memcpy_async), copies and memsets issued by
/// synchronous calls (cuda_memcpy_sync, cuda_memset_sync: pinned or managed memory, as the
/// rule script selects), device and stream synchronisations (cuda_api_sync), GPU gaps of
/// half a second and more (gpu_gaps) and chunks of the window under 50 % use (gpu_time_util, 30
/// chunks). Rules that need API names (the sync copy and memset rules) are marked not
/// evaluated when the trace has no API records; the pageable rule then lists every pageable
/// copy. n log n in the records.
///
/// \code
///   auto a = nvscope::attribute(t);
///   auto rules = nvscope::expert_rules(t, a, nvscope::idle_time(t, a));
///   auto& pageable = rules[static_cast<int>(nvscope::rule_id::pageable_async_copy)];
/// \endcode

#include <nvscope/analyze/detail/inlining.hpp>
#include <nvscope/analyze/diagnose/detail/chunks.hpp>
#include <nvscope/analyze/diagnose/detail/rule_rows.hpp>
#include <nvscope/analyze/diagnose/detail/timeline.hpp>
#include <nvscope/analyze/diagnose/idle.hpp>
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

// The three rules on copies and memsets.
inline void memop_rules(const timeline& tl, const diagnosis_options& o, std::vector<rule_result>& out) {
  const trace& t = *tl.t;
  const bool named = !tl.calls.empty();
  auto& pageable = out[static_cast<int>(rule_id::pageable_async_copy)];
  auto& sync_copy = out[static_cast<int>(rule_id::sync_copy)];
  auto& sync_memset = out[static_cast<int>(rule_id::sync_memset)];
  sync_copy.evaluated = sync_memset.evaluated = named;
  for (const auto place : tl.transfers) {
    const gpu_op& op = tl.ops[place];
    const std::string_view call = t.strings[tl.call_name(tl.correlation_of(op))];
    const bool known = named && !call.empty();
    const bool async = has_text(call, "Async");
    if (op.kind() == op_kind::copy) {
      const auto& c = t.copies[op.index()];
      const bool touches_pageable = c.src == memory_kind::pageable || c.dst == memory_kind::pageable;
      if (touches_pageable && (!known || async)) pageable.rows.push_back(op_row(tl, op, c.bytes));
      if (known && !async && has_text(call, "emcpy")) sync_copy.rows.push_back(op_row(tl, op, c.bytes));
    } else if (op.kind() == op_kind::memset) {
      const auto& m = t.memsets[op.index()];
      const bool host_visible = m.memory == memory_kind::pinned || m.memory == memory_kind::managed;
      if (known && !async && has_text(call, "emset") && host_visible) sync_memset.rows.push_back(op_row(tl, op, m.bytes));
    }
  }
  for (auto* r : {&pageable, &sync_copy, &sync_memset}) finish_rule(*r, o.rule_rows);
}

inline void sync_rule(const timeline& tl, const idle_breakdown& idle, const diagnosis_options& o, rule_result& r) {
  r.rows = sync_rows(tl, idle, o);
  finish_rule(r, o.rule_rows);
}

// The gap rule's rows, a stretch at a time (handed over by the idle walk, or read back).
class gap_rows {
 public:
  explicit gap_rows(const diagnosis_options& o) : min_ns_(o.gpu_gap_min_ns) {}
  void take(const idle_stretch& s) {
    if (s.duration < min_ns_) return;
    rule_row row;
    row.start = s.start;
    row.duration = s.duration;
    row.range = s.range;
    row.thread = s.thread;
    rows_.push_back(row);
  }
  std::vector<rule_row>&& rows() && { return std::move(rows_); }

 private:
  std::uint64_t min_ns_;
  std::vector<rule_row> rows_;
};

// The gap rule's rows: the long stretches `taken` kept.
inline void gap_rule(gap_rows&& taken, const diagnosis_options& o, rule_result& r) {
  r.rows = std::move(taken).rows();
  finish_rule(r, o.rule_rows);
}

// What the rules take from the idle walk of the timeline when the diagnosis hands it to them
// (the chunks' sums from the operations, the long gaps from the stretches as they are found):
// neither the 64 MB of operations nor the stretches read again.
struct rule_readers {
  chunk_sums chunks;
  gap_rows gaps;
  rule_readers(const timeline& tl, const diagnosis_options& o) : chunks(tl, o.utilization_chunks), gaps(o) {}
  NVSCOPE_DETAIL_INLINE void take_op(std::size_t, const gpu_op& op) { chunks.take(op); }
  NVSCOPE_DETAIL_INLINE void take_stretch(const idle_stretch& s) { gaps.take(s); }
};

// `walked`: what the idle walk that made `idle` took for the rules.
inline std::vector<rule_result> expert_rules_of(const timeline& tl, const idle_breakdown& idle, const diagnosis_options& o, rule_readers& walked) {
  std::vector<rule_result> out(rule_count);
  for (int i = 0; i < rule_count; ++i) out[static_cast<std::size_t>(i)].rule = static_cast<rule_id>(i);
  memop_rules(tl, o, out);
  sync_rule(tl, idle, o, out[static_cast<int>(rule_id::sync_call)]);
  gap_rule(std::move(walked.gaps), o, out[static_cast<int>(rule_id::gpu_gap)]);
  utilization_rule(tl, idle, o, out[static_cast<int>(rule_id::low_utilization)], std::move(walked.chunks).grid());
  return out;
}

} // namespace diag
} // namespace detail

/// Every expert rule over `t`, in `rule_id` order; `idle` from `idle_time(t, a, o)` (gaps and
/// the ranges of low-use chunks come from its stretches).
inline std::vector<rule_result> expert_rules(const trace& t, const attribution& a, const idle_breakdown& idle,
                                             const diagnosis_options& o = {}) {
  const auto tl = detail::diag::build_timeline(t, a, o.window);
  detail::diag::rule_readers walked(tl, o);
  detail::diag::read_as_walked(tl, idle, walked);
  return detail::diag::expert_rules_of(tl, idle, o, walked);
}

} // namespace v1
} // namespace nvscope

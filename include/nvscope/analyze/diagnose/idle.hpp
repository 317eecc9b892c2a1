// nvscope-target: nvscope
#pragma once

/// \file analyze/diagnose/idle.hpp
/// Where the GPU sat idle and why. Per stream, Holistic Trace Analysis' breakdown (host wait,
/// kernel wait, other); over all streams, every idle stretch classified by what the thread
/// that launched the next operation was doing (`idle_cause`) and charged to the innermost NVTX
/// range open on that thread when the stretch began. Window: first operation's start to the
/// last one's end (as nsys's gpu_gaps). Linear in the operations (streams grouped by a counting
/// sort, the longest stretches by a bounded partial sort).
///
/// \code
///   nvscope::idle_breakdown b = nvscope::idle_time(t, nvscope::attribute(t));
///   double idle = double(b.idle_ns) / double(b.window_ns);
/// \endcode

#include <nvscope/analyze/diagnose/detail/timeline.hpp>
#include <nvscope/analyze/diagnose/options.hpp>
#include <nvscope/analyze/diagnose/results.hpp>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace nvscope {
inline namespace v1 {
namespace detail {
namespace diag {

inline idle_cause cause_of(const timeline& tl, const gpu_op& next, timestamp_ns gap_start, std::uint64_t gap,
                           const diagnosis_options& o, lookup_hints* hints = nullptr) noexcept {
  if (next.call_start == 0 || next.thread == diagnosis_none) return idle_cause::other;
  if (next.call_start <= gap_start) return gap < o.launch_gap_max_ns ? idle_cause::launch : idle_cause::other;
  const timestamp_ns sync_end = tl.last_sync_end(next.thread, gap_start, next.call_start, hints);
  const timestamp_ns host_from = std::max(gap_start, std::min(sync_end, next.call_start));
  if (sync_end != 0 && next.call_start - host_from < o.launch_gap_max_ns) return idle_cause::sync;
  if (sync_end != 0 || gap >= o.launch_gap_max_ns) return idle_cause::host; // host work after the sync
  return idle_cause::launch;
}

// Union lengths of all operations and of kernels with memsets; the stretches between.
inline void overall_stretches(const timeline& tl, const diagnosis_options& o, idle_breakdown& b) {
  timestamp_ns cover = 0, kernel_cover = 0;
  lookup_hints hints(tl.threads.size()); // the stretches come in time order
  b.stretches.reserve(tl.ops.size()); // at most one per operation; only what is written is touched
  for (std::size_t i = 0; i < tl.ops.size(); ++i) {
    const gpu_op& op = tl.ops[i];
    if (i > 0 && op.start > cover) {
      idle_stretch s;
      s.start = cover;
      s.duration = op.start - cover;
      s.cause = cause_of(tl, op, cover, s.duration, o, &hints);
      s.thread = op.thread;
      s.range = op.thread == diagnosis_none ? diagnosis_none : tl.range_at(op.thread, cover, &hints);
      s.next_owner = tl.owner_of(op);
      b.stretches.push_back(s);
    }
    const timestamp_ns from = std::max(op.start, cover);
    if (op.end > from) b.busy_ns += op.end - from;
    cover = std::max(cover, op.end);
    if (op.kind() == op_kind::copy) continue;
    const timestamp_ns kfrom = std::max(op.start, kernel_cover);
    if (op.end > kfrom) b.kernel_ns += op.end - kfrom;
    kernel_cover = std::max(kernel_cover, op.end);
  }
}

inline void charge_stretches(const timeline& tl, const diagnosis_options& o, idle_breakdown& b) {
  std::vector<range_tally> tallies;
  for (int c = 0; c < idle_cause_count; ++c) tallies.emplace_back(*tl.t);
  for (const auto& s : b.stretches) {
    const auto c = static_cast<int>(s.cause);
    b.cause_ns[c] += s.duration;
    b.cause_count[c] += 1;
    tallies[static_cast<std::size_t>(c)].add(s.range, s.duration);
  }
  for (int c = 0; c < idle_cause_count; ++c) b.cause_ranges[c] = tallies[static_cast<std::size_t>(c)].top(3);
  b.longest.resize(std::min<std::size_t>(o.top_idle, b.stretches.size()));
  std::partial_sort_copy(b.stretches.begin(), b.stretches.end(), b.longest.begin(), b.longest.end(),
                         [](const idle_stretch& x, const idle_stretch& y) {
                           return x.duration != y.duration ? x.duration > y.duration : x.start < y.start;
                         });
}

// HTA's per-stream rule on consecutive operations of one stream.
inline stream_idle_row stream_row(const timeline& tl, const std::uint32_t* from, const std::uint32_t* to,
                                  const diagnosis_options& o) {
  stream_idle_row row;
  row.device = tl.device_of(tl.ops[*from]);
  row.stream = tl.stream_of(tl.ops[*from]);
  const timestamp_ns first = tl.ops[*from].start;
  timestamp_ns prev_end = first;
  for (auto i = from; i != to; ++i) {
    const gpu_op& op = tl.ops[*i];
    if (op.start > prev_end) {
      const auto gap = op.start - prev_end;
      if (!(op.has_call() || op.call_start)) row.other_ns += gap;
      else if (op.call_start > prev_end) row.host_wait_ns += gap;
      else if (gap < o.kernel_wait_max_ns) row.kernel_wait_ns += gap;
      else row.other_ns += gap;
    }
    row.operations += 1;
    if (op.end > std::max(op.start, prev_end)) row.busy_ns += op.end - std::max(op.start, prev_end);
    prev_end = std::max(prev_end, op.end);
  }
  row.idle_ns = (prev_end - first) - row.busy_ns;
  return row;
}

inline void stream_rows(const timeline& tl, const diagnosis_options& o, idle_breakdown& b) {
  for (std::size_t g = 0; g < tl.by_stream.size(); ++g)
    b.streams.push_back(stream_row(tl, tl.by_stream.begin(g), tl.by_stream.end(g), o));
}

// The idle-time breakdown of `tl` (see the file comment).
inline idle_breakdown idle_time_of(const timeline& tl, const diagnosis_options& o) {
  idle_breakdown b;
  b.window_begin = tl.begin;
  b.window_end = tl.end;
  b.window_ns = tl.end - tl.begin;
  overall_stretches(tl, o, b);
  b.copy_only_ns = b.busy_ns - b.kernel_ns;
  b.idle_ns = b.window_ns > b.busy_ns ? b.window_ns - b.busy_ns : 0;
  charge_stretches(tl, o, b);
  stream_rows(tl, o, b);
  return b;
}

} // namespace diag
} // namespace detail

/// The idle-time breakdown of `t` (see the file comment).
inline idle_breakdown idle_time(const trace& t, const attribution& a, const diagnosis_options& o = {}) {
  return detail::diag::idle_time_of(detail::diag::build_timeline(t, a, o.window), o);
}

} // namespace v1
} // namespace nvscope

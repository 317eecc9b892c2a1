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

#include <nvscope/analyze/detail/inlining.hpp>
#include <nvscope/analyze/diagnose/detail/stream_rows.hpp>
#include <nvscope/analyze/diagnose/detail/timeline.hpp>
#include <nvscope/analyze/diagnose/launches.hpp>
#include <nvscope/analyze/diagnose/options.hpp>
#include <nvscope/analyze/diagnosis.hpp>

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace nvscope {
inline namespace v1 {
namespace detail {
namespace diag {

// Why the GPU sat idle from `gap_start` for `gap` ns until `next` began (docs/diagnosis.md's
// idle_cause table): other without a launch known; queued before the stretch began: launch
// when the stretch is shorter than launch_gap_max_ns, else other; launched after it began: sync
// when the thread sat in a sync in between and launched within launch_gap_max_ns of its return,
// else host when a sync was there or the launch came launch_gap_max_ns or more after the
// stretch began, else launch.
inline idle_cause cause_of(const timeline& tl, const gpu_op& next, timestamp_ns gap_start, std::uint64_t gap,
                           const diagnosis_options& o, lookup_hints* hints = nullptr) noexcept {
  if (next.call_start == 0 || next.thread == diagnosis_none) return idle_cause::other;
  if (next.call_start <= gap_start) return gap < o.launch_gap_max_ns ? idle_cause::launch : idle_cause::other;
  const timestamp_ns sync_end = tl.last_sync_end(next.thread, gap_start, next.call_start, hints);
  const timestamp_ns host_from = std::max(gap_start, std::min(sync_end, next.call_start));
  if (sync_end != 0 && next.call_start - host_from < o.launch_gap_max_ns) return idle_cause::sync;
  if (sync_end != 0 || next.call_start - gap_start >= o.launch_gap_max_ns) return idle_cause::host; // host work after the sync, or before the launch
  return idle_cause::launch;
}

// What the stretches add up to, taken as each is found (not by reading millions of them back):
// time and count per cause, per cause the ranges holding most, and the `top_idle` longest
// (a heap of that many, ordered as a partial sort orders them: longest first, then earliest).
class stretch_charges {
 public:
  stretch_charges(const trace& t, std::size_t keep) : keep_(keep) {
    for (int c = 0; c < idle_cause_count; ++c) tallies_.emplace_back(t);
  }
  // `count` stretches in a row of one cause and range: `ns` in all, `longest` the longest.
  NVSCOPE_DETAIL_INLINE void add_run(idle_cause cause, std::uint32_t range, std::uint64_t ns, std::uint64_t count, std::uint64_t longest,
                                     idle_breakdown& b) {
    const auto c = static_cast<int>(cause);
    b.cause_ns[c] += ns;
    b.cause_count[c] += count;
    tallies_[static_cast<std::size_t>(c)].add_run(range, ns, count, longest);
  }
  // Each stretch, for the longest kept.
  NVSCOPE_DETAIL_INLINE void keep(const idle_stretch& s) {
    if (keep_ == 0) return;
    if (longest_.size() < keep_) {
      longest_.push_back(s);
      std::push_heap(longest_.begin(), longest_.end(), before);
    } else if (before(s, longest_.front())) { // better than the worst kept
      std::pop_heap(longest_.begin(), longest_.end(), before);
      longest_.back() = s;
      std::push_heap(longest_.begin(), longest_.end(), before);
    }
  }
  void finish(idle_breakdown& b) {
    for (int c = 0; c < idle_cause_count; ++c) b.cause_ranges[c] = tallies_[static_cast<std::size_t>(c)].top(3);
    std::sort_heap(longest_.begin(), longest_.end(), before);
    b.longest = std::move(longest_);
  }

 private:
  static bool before(const idle_stretch& x, const idle_stretch& y) noexcept {
    return x.duration != y.duration ? x.duration > y.duration : x.start < y.start;
  }
  std::size_t keep_;
  std::vector<range_tally> tallies_;
  std::vector<idle_stretch> longest_; // a heap whose front is the worst kept
};

// Readers of the idle walk that take nothing (idle_time alone).
struct no_readers {
  void take_op(std::size_t, const gpu_op&) noexcept {}
  void take_stretch(const idle_stretch&) noexcept {}
  void take_idle(std::uint32_t, std::uint64_t) noexcept {}
};

// Union lengths of all operations and of kernels with memsets; the stretches between, each
// charged as it is found. `readers` take every operation and every stretch as the walk meets
// them (the diagnosis' other passes that read them: one walk of the operations, not several),
// and the idle time of each run of stretches of one range (take_idle). The sums of a run of
// stretches of one cause and range are held here and charged once the run ends (charge_run):
// what is charged is the same as charging each stretch.
template <class Readers>
void overall_stretches(const timeline& tl, const diagnosis_options& o, idle_breakdown& b, Readers& readers) {
  timestamp_ns cover = 0, kernel_cover = 0;
  std::uint64_t busy = 0, kernel = 0; // b's, summed here and written back at the end
  lookup_hints hints(tl.threads); // the stretches come in time order
  range_cursor ranges(tl, hints);
  stretch_charges charges(*tl.t, o.top_idle);
  b.stretches.reserve(tl.ops.size()); // at most one per operation; only what is written is touched
  idle_cause run_cause = idle_cause::other;
  std::uint32_t run_range = diagnosis_none;
  std::uint64_t run_ns = 0, run_count = 0, run_longest = 0;
  const auto charge_run = [&] {
    if (run_count == 0) return;
    charges.add_run(run_cause, run_range, run_ns, run_count, run_longest, b);
    readers.take_idle(run_range, run_ns);
    run_ns = run_count = run_longest = 0;
  };
  const gpu_op* const ops = tl.ops.data();
  for (std::size_t i = 0, n = tl.ops.size(); i < n; ++i) {
    const gpu_op& op = ops[i];
    if (i > 0 && op.start > cover) {
      const std::uint64_t duration = op.start - cover;
      const auto cause = cause_of(tl, op, cover, duration, o, &hints);
      const auto range = op.thread == diagnosis_none ? diagnosis_none : ranges.at(op.thread, cover);
      const auto next_owner = tl.owner_of(op);
      idle_stretch& s = b.stretches.emplace_back(); // written where it stays (as add_op writes an operation)
      s.start = cover;
      s.duration = duration;
      s.cause = cause;
      s.thread = op.thread;
      s.range = range;
      s.next_owner = next_owner;
      charges.keep(s);
      readers.take_stretch(s);
      if (cause != run_cause || range != run_range) charge_run();
      run_cause = cause;
      run_range = range;
      run_ns += duration;
      run_count += 1;
      run_longest = duration > run_longest ? duration : run_longest;
    }
    readers.take_op(i, op);
    const timestamp_ns from = std::max(op.start, cover);
    if (op.end > from) busy += op.end - from;
    cover = std::max(cover, op.end);
    if (op.kind() == op_kind::copy) continue;
    const timestamp_ns kfrom = std::max(op.start, kernel_cover);
    if (op.end > kfrom) kernel += op.end - kfrom;
    kernel_cover = std::max(kernel_cover, op.end);
  }
  charge_run();
  b.busy_ns += busy;
  b.kernel_ns += kernel;
  charges.finish(b);
}

// The idle-time breakdown of `tl` (see the file comment); `readers` as overall_stretches'.
// `streams`: the rows per stream, made on the queue depths' walk (queue_depths).
template <class Readers>
idle_breakdown idle_time_of(const timeline& tl, const diagnosis_options& o, Readers& readers, std::vector<stream_idle_row>&& streams) {
  idle_breakdown b;
  b.window_begin = tl.begin;
  b.window_end = tl.end;
  b.window_ns = tl.end - tl.begin;
  overall_stretches(tl, o, b, readers);
  b.copy_only_ns = b.busy_ns - b.kernel_ns;
  b.idle_ns = b.window_ns > b.busy_ns ? b.window_ns - b.busy_ns : 0;
  b.streams = std::move(streams);
  return b;
}

// Feeds `readers` what overall_stretches would have handed them on its walk of `tl` that made
// `idle`: every operation, then every stretch (a reader sums what it takes, so that the order
// of the two kinds does not matter to it, and take_idle's sums are the stretches' by range).
template <class Readers>
void read_as_walked(const timeline& tl, const idle_breakdown& idle, Readers& readers) {
  for (std::size_t i = 0; i < tl.ops.size(); ++i) readers.take_op(i, tl.ops[i]);
  for (const auto& s : idle.stretches) readers.take_stretch(s);
}

// The breakdown alone: the rows per stream from the queue depths' walk, no other reader.
inline idle_breakdown idle_time_of(const timeline& tl, const diagnosis_options& o) {
  no_readers none;
  return idle_time_of(tl, o, none, queue_depths(tl, o).streams);
}

} // namespace diag
} // namespace detail

/// The idle-time breakdown of `t` (see the file comment).
inline idle_breakdown idle_time(const trace& t, const attribution& a, const diagnosis_options& o = {}) {
  return detail::diag::idle_time_of(detail::diag::build_timeline(t, a, o.window), o);
}

} // namespace v1
} // namespace nvscope

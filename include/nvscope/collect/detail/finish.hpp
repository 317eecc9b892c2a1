// nvscope-target: nvscope
#pragma once

// What the collector does to a trace once recording stops, in plain C++ (tested on the CPU):
// join the launching threads' host calls to the GPU records by correlation id, keep only what
// fell inside capture windows when asked, and sort. Nesting ranges is analysis' job.

#include <nvscope/collect/detail/launch_log.hpp>
#include <nvscope/trace.hpp>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace nvscope {
inline namespace v1 {
namespace detail {

// A host call already converted to the trace clock and to a thread index.
struct timed_host_call {
  timestamp_ns time = 0;
  std::uint32_t correlation = 0;
  std::uint32_t thread = 0;
  bool is_sync = false;
};

// The entry or exit of a sync call seen by the collector's callbacks (sync_source::
// host_callbacks), on the trace clock, with its thread index. `flags` as host_call_flags
// (launch_log.hpp): host_call_exit for an exit, the sync kind in bits 5-7 of an entry, the
// stream id in bits 9-31 of an exit.
using sync_call = traced_host_call;

struct sync_pairing_counts {
  std::uint64_t nested = 0;   // calls inside another sync call of their thread, folded into it
  std::uint64_t unpaired = 0; // an entry with no exit (still waiting at stop) or an exit with no entry
};

// Pairs the entries and exits of sync calls into one `sync_record` per wait. Calls on one
// thread nest strictly, and each thread's calls must be given in the order they were logged
// (the launch log keeps that order); threads may be interleaved. A sync call made inside
// another one on the same thread (the driver call inside a runtime call, when both domains are
// recorded) is the same wait: it is folded into the outer call, which keeps its span, kind and
// correlation id and takes the inner call's stream when its own is unknown.
inline std::vector<sync_record> syncs_from_host_calls(std::vector<sync_call> calls, sync_pairing_counts* counts = nullptr) {
  sync_pairing_counts local;
  sync_pairing_counts& n = counts != nullptr ? *counts : local;
  std::stable_sort(calls.begin(), calls.end(),
                   [](const sync_call& a, const sync_call& b) { return a.thread < b.thread; });
  std::vector<sync_record> out;
  struct open_call {
    sync_call entry;
    bool has_stream = false;
    std::uint32_t stream = 0;
  };
  std::vector<open_call> stack;
  std::size_t i = 0;
  while (i < calls.size()) {
    const std::uint32_t thread = calls[i].thread;
    stack.clear();
    for (; i < calls.size() && calls[i].thread == thread; ++i) {
      const sync_call& c = calls[i];
      if ((c.flags & host_call_exit) == 0) {
        stack.push_back(open_call{c, false, 0});
        continue;
      }
      if (stack.empty()) {
        ++n.unpaired;
        continue;
      }
      open_call done = stack.back();
      stack.pop_back();
      if (!done.has_stream && host_call_has_stream(c.flags)) {
        done.has_stream = true;
        done.stream = host_call_stream(c.flags);
      }
      if (!stack.empty()) { // nested: the same wait as the call around it
        ++n.nested;
        if (!stack.back().has_stream && done.has_stream) {
          stack.back().has_stream = true;
          stack.back().stream = done.stream;
        }
        continue;
      }
      sync_record r;
      r.start = done.entry.time;
      r.end = c.time;
      r.correlation = done.entry.correlation;
      r.thread = thread;
      r.stream = done.has_stream ? done.stream : 0;
      const std::uint32_t kind = (done.entry.flags & host_call_kind_mask) >> host_call_kind_shift;
      r.kind = kind <= static_cast<std::uint32_t>(sync_kind::context) ? static_cast<sync_kind>(kind) : sync_kind::unknown;
      out.push_back(r);
    }
    n.unpaired += stack.size();
  }
  std::stable_sort(out.begin(), out.end(), [](const sync_record& a, const sync_record& b) { return a.start < b.start; });
  return out;
}

// A profiler start or stop on the trace clock.
struct profiler_switch {
  timestamp_ns time = 0;
  bool start = false;
};

// When the profiler was on, in time order, from the program's profiler starts and stops
// (whoever made them: nested or repeated calls collapse, a stop with no start closes a window
// open since `begin`, a start with no stop stays open until `finish`) and from the windows of
// nvscope's capture guards (`guards`; an end of ~0 is still open). Overlapping windows merge.
inline std::vector<time_window> capture_windows_from(std::vector<profiler_switch> switches, std::vector<time_window> guards,
                                                     timestamp_ns begin, timestamp_ns finish) {
  std::stable_sort(switches.begin(), switches.end(),
                   [](const profiler_switch& a, const profiler_switch& b) { return a.time < b.time; });
  std::vector<time_window> all;
  bool open = false;
  timestamp_ns since = begin;
  for (const auto& s : switches) {
    if (s.start && !open) since = s.time;
    if (!s.start && (open || all.empty())) all.push_back(time_window{since, s.time});
    open = s.start;
  }
  if (open) all.push_back(time_window{since, finish});
  for (auto w : guards) all.push_back(time_window{w.begin, w.end == ~timestamp_ns{0} ? finish : w.end});
  return merge_windows(std::move(all));
}

struct finish_counts {
  std::uint64_t launches_matched = 0;
  std::uint64_t records_outside_capture = 0;
};

// The host calls by correlation id, one per id: a runtime call and the driver call inside it
// can share a correlation id; the earliest wins.
class host_call_index {
 public:
  explicit host_call_index(std::vector<timed_host_call> calls) : calls_(std::move(calls)) {
    std::sort(calls_.begin(), calls_.end(), [](const timed_host_call& a, const timed_host_call& b) {
      return a.correlation != b.correlation ? a.correlation < b.correlation : a.time < b.time;
    });
    auto same = [](const timed_host_call& a, const timed_host_call& b) { return a.correlation == b.correlation; };
    calls_.erase(std::unique(calls_.begin(), calls_.end(), same), calls_.end());
  }

  const timed_host_call* find(std::uint32_t correlation) const noexcept {
    auto it = std::lower_bound(calls_.begin(), calls_.end(), correlation,
                               [](const timed_host_call& c, std::uint32_t v) { return c.correlation < v; });
    return it != calls_.end() && it->correlation == correlation ? &*it : nullptr;
  }

  // When a GPU record happened, for capture filtering: its launch time, else its start.
  timestamp_ns launched_at(std::uint32_t correlation, timestamp_ns start) const noexcept {
    const timed_host_call* c = find(correlation);
    return c != nullptr ? c->time : start;
  }

  const std::vector<timed_host_call>& calls() const noexcept { return calls_; }

 private:
  std::vector<timed_host_call> calls_;
};

// Keeps what was launched (GPU records) or began (the rest) inside a window; returns how
// many records were dropped. `windows` may overlap and come in any order.
inline std::uint64_t keep_in_windows(trace& t, const host_call_index& calls, const std::vector<time_window>& windows) {
  const auto merged = merge_windows(windows);
  auto launched = [&](const auto& r) { return calls.launched_at(r.correlation, r.start); };
  auto started = [](const auto& r) { return r.start; };
  std::size_t dropped = erase_outside(t.kernels, merged, launched);
  dropped += erase_outside(t.copies, merged, launched);
  dropped += erase_outside(t.memsets, merged, launched);
  dropped += erase_outside(t.syncs, merged, started);
  dropped += erase_outside(t.api_calls, merged, started);
  dropped += erase_outside(t.ranges, merged, started);
  return static_cast<std::uint64_t>(dropped);
}

// One launch record per kept GPU record's launch call; each sync gets its call's thread.
inline void join_launches(trace& t, const host_call_index& calls) {
  std::unordered_set<std::uint32_t> launched;
  for (const auto& k : t.kernels) launched.insert(k.correlation);
  for (const auto& c : t.copies) launched.insert(c.correlation);
  for (const auto& m : t.memsets) launched.insert(m.correlation);
  t.launches.clear();
  for (const auto& c : calls.calls())
    if (!c.is_sync && launched.count(c.correlation) != 0) t.launches.push_back(launch_record{c.time, c.correlation, c.thread});
  for (auto& s : t.syncs)
    if (const timed_host_call* c = calls.find(s.correlation)) s.thread = c->thread;
}

// Every list in time order; ranges that start together outer first (analysis nests them in
// this order).
inline void sort_by_time(trace& t) {
  auto by_start = [](const auto& a, const auto& b) { return a.start < b.start; };
  std::stable_sort(t.kernels.begin(), t.kernels.end(), by_start);
  std::stable_sort(t.copies.begin(), t.copies.end(), by_start);
  std::stable_sort(t.memsets.begin(), t.memsets.end(), by_start);
  std::stable_sort(t.syncs.begin(), t.syncs.end(), by_start);
  std::stable_sort(t.api_calls.begin(), t.api_calls.end(), by_start);
  std::sort(t.launches.begin(), t.launches.end(),
            [](const launch_record& a, const launch_record& b) { return a.time < b.time; });
  std::stable_sort(t.ranges.begin(), t.ranges.end(), [](const range_record& a, const range_record& b) {
    if (a.start != b.start) return a.start < b.start;
    const timestamp_ns ae = a.end == 0 ? ~timestamp_ns{0} : a.end;
    const timestamp_ns be = b.end == 0 ? ~timestamp_ns{0} : b.end;
    return ae > be;
  });
}

// Joins, filters (with `capture_windows`, when given) and sorts.
inline finish_counts finish_trace(trace& t, std::vector<timed_host_call> calls,
                                  const std::vector<time_window>* capture_windows) {
  finish_counts fc;
  const host_call_index index(std::move(calls));
  if (capture_windows != nullptr) fc.records_outside_capture = keep_in_windows(t, index, *capture_windows);
  join_launches(t, index);
  fc.launches_matched = t.launches.size();
  sort_by_time(t);
  t.lost.unclosed_ranges = static_cast<std::uint64_t>(
      std::count_if(t.ranges.begin(), t.ranges.end(), [](const range_record& r) { return r.end == 0 && !r.is_mark; }));
  return fc;
}

} // namespace detail
} // namespace v1
} // namespace nvscope

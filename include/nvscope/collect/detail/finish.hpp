// nvscope-target: nvscope
#pragma once

// What the collector does to a trace once recording stops, in plain C++ (tested on the CPU):
// join the launching threads' host calls to the GPU records by correlation id, keep only what
// fell inside capture windows when asked, nest the NVTX ranges of each thread, and sort.

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
// (collector_launch_log.hpp): host_call_exit for an exit, the sync kind in bits 5-7 of an
// entry, the stream id in bits 9-31 of an exit.
struct sync_call {
  timestamp_ns time = 0;
  std::uint32_t correlation = 0;
  std::uint32_t thread = 0;
  std::uint32_t flags = 0;
};

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

// [begin, end) on the trace clock.
struct time_window {
  timestamp_ns begin = 0;
  timestamp_ns end = 0;
  bool contains(timestamp_ns t) const noexcept { return t >= begin && t < end; }
};

inline bool in_any(const std::vector<time_window>& windows, timestamp_ns t) noexcept {
  for (const auto& w : windows)
    if (w.contains(t)) return true;
  return false;
}

// Gives each range its parent and depth among the ranges of its own thread: push/pop ranges
// nest strictly; a mark gets the innermost range open around it. Start/end ranges (which may
// cross threads) stay outermost. `ranges` must be sorted by start.
inline void nest_ranges(std::vector<range_record>& ranges) {
  std::unordered_map<std::uint32_t, std::vector<std::uint32_t>> stacks;
  for (std::uint32_t i = 0; i < ranges.size(); ++i) {
    range_record& r = ranges[i];
    r.parent = range_record::no_parent;
    r.depth = 0;
    if (!r.is_push_pop && !r.is_mark) continue;
    auto& stack = stacks[r.thread];
    while (!stack.empty()) {
      const range_record& top = ranges[stack.back()];
      const bool top_open = top.end == 0;
      if (top_open || r.start < top.end || (r.is_mark && r.start <= top.end)) break;
      stack.pop_back();
    }
    if (!stack.empty()) {
      r.parent = stack.back();
      r.depth = static_cast<std::uint16_t>(ranges[stack.back()].depth + 1);
    }
    if (!r.is_mark && r.is_push_pop) stack.push_back(i);
  }
}

struct finish_counts {
  std::uint64_t launches_matched = 0;
  std::uint64_t records_outside_capture = 0;
};

// Joins, filters, nests and sorts. `calls` may hold duplicates (a runtime call and the driver
// call inside it can share a correlation id); the earliest wins.
inline finish_counts finish_trace(trace& t, std::vector<timed_host_call> calls,
                                  const std::vector<time_window>* capture_windows) {
  finish_counts fc;
  std::sort(calls.begin(), calls.end(), [](const timed_host_call& a, const timed_host_call& b) {
    return a.correlation != b.correlation ? a.correlation < b.correlation : a.time < b.time;
  });
  calls.erase(std::unique(calls.begin(), calls.end(),
                          [](const timed_host_call& a, const timed_host_call& b) { return a.correlation == b.correlation; }),
              calls.end());
  auto find_call = [&](std::uint32_t correlation) -> const timed_host_call* {
    auto it = std::lower_bound(calls.begin(), calls.end(), correlation,
                               [](const timed_host_call& c, std::uint32_t v) { return c.correlation < v; });
    return it != calls.end() && it->correlation == correlation ? &*it : nullptr;
  };

  // When a GPU record happened, for capture filtering: its launch time, else its start.
  auto launched_at = [&](std::uint32_t correlation, timestamp_ns start) {
    const timed_host_call* c = find_call(correlation);
    return c != nullptr ? c->time : start;
  };
  if (capture_windows != nullptr) {
    auto filter = [&](auto& records, auto when) {
      auto keep_end = std::remove_if(records.begin(), records.end(), [&](const auto& r) {
        return !in_any(*capture_windows, when(r));
      });
      fc.records_outside_capture += static_cast<std::uint64_t>(records.end() - keep_end);
      records.erase(keep_end, records.end());
    };
    filter(t.kernels, [&](const kernel_record& r) { return launched_at(r.correlation, r.start); });
    filter(t.copies, [&](const copy_record& r) { return launched_at(r.correlation, r.start); });
    filter(t.memsets, [&](const memset_record& r) { return launched_at(r.correlation, r.start); });
    filter(t.syncs, [&](const sync_record& r) { return r.start; });
    filter(t.api_calls, [&](const api_record& r) { return r.start; });
    filter(t.ranges, [&](const range_record& r) { return r.start; });
  }

  std::unordered_set<std::uint32_t> launched;
  for (const auto& k : t.kernels) launched.insert(k.correlation);
  for (const auto& c : t.copies) launched.insert(c.correlation);
  for (const auto& m : t.memsets) launched.insert(m.correlation);
  t.launches.clear();
  for (const auto& c : calls) {
    if (c.is_sync || launched.count(c.correlation) == 0) continue;
    t.launches.push_back(launch_record{c.time, c.correlation, c.thread});
  }
  fc.launches_matched = t.launches.size();
  for (auto& s : t.syncs) {
    const timed_host_call* c = find_call(s.correlation);
    if (c != nullptr) s.thread = c->thread;
  }

  auto by_start = [](const auto& a, const auto& b) { return a.start < b.start; };
  std::stable_sort(t.kernels.begin(), t.kernels.end(), by_start);
  std::stable_sort(t.copies.begin(), t.copies.end(), by_start);
  std::stable_sort(t.memsets.begin(), t.memsets.end(), by_start);
  std::stable_sort(t.syncs.begin(), t.syncs.end(), by_start);
  std::stable_sort(t.api_calls.begin(), t.api_calls.end(), by_start);
  std::sort(t.launches.begin(), t.launches.end(),
            [](const launch_record& a, const launch_record& b) { return a.time < b.time; });
  // Outer ranges first when two start together, so that nesting sees the parent first.
  std::stable_sort(t.ranges.begin(), t.ranges.end(), [](const range_record& a, const range_record& b) {
    if (a.start != b.start) return a.start < b.start;
    const timestamp_ns ae = a.end == 0 ? ~timestamp_ns{0} : a.end;
    const timestamp_ns be = b.end == 0 ? ~timestamp_ns{0} : b.end;
    return ae > be;
  });
  nest_ranges(t.ranges);
  t.lost.unclosed_ranges = static_cast<std::uint64_t>(
      std::count_if(t.ranges.begin(), t.ranges.end(), [](const range_record& r) { return r.end == 0 && !r.is_mark; }));
  return fc;
}

} // namespace detail
} // namespace v1
} // namespace nvscope

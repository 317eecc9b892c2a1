// nvscope-target: nvscope
#pragma once

// analyze/detail/nesting.hpp: range nesting and the ranges open at each launch, by one sweep
// per thread over ranges and queries in time order (internal to the analyze layer).
//
// The rule, the only one in nvscope: on one thread, push/pop ranges sorted by (start, end
// descending) nest by containment (a range's parent is the innermost earlier range whose end
// is not before its own); a launch or a mark at time t belongs to the innermost push/pop
// range with start <= t <= end. Start/end ranges never nest; a launch is inside every
// start/end range of its thread with start <= t <= end.

#include <nvscope/analyze/detail/buckets.hpp>
#include <nvscope/trace.hpp>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace nvscope {
inline namespace v1 {
namespace detail {

// The inputs of the sweep: ranges and queries of every thread, each bucket in time order.
struct thread_timelines {
  buckets push_pop;  // per thread slot: push/pop ranges by (start, end desc, index)
  buckets start_end; // per thread slot: start/end ranges by start
  buckets queries;   // per thread slot: launches [0, nl), then marks (nl + range index), by time
};

// `same_thread_only`: start/end ranges ended on another thread take no launches (nsys's rule).
inline thread_timelines timelines_of(const trace& t, const thread_table& slots, const std::vector<timestamp_ns>& end, bool same_thread_only) {
  const auto nr = t.ranges.size(), nl = t.launches.size(), ns = slots.size(), none = ns;
  // Each range's slot and role read once from its 64-byte record into 5 bytes: the three
  // bucketings below read every key twice (PyTorch's shape at 2.7 M ranges: 6 passes over
  // 170 MB of records were a quarter of `attribute`'s time).
  enum : std::uint8_t { push_pop, start_end, mark, left_out };
  scratch_vector<std::uint32_t> slot(nr);
  scratch_vector<std::uint8_t> role(nr);
  for (std::size_t i = 0; i < nr; ++i) {
    const auto& r = t.ranges[i];
    slot[i] = static_cast<std::uint32_t>(slots.slot(r.thread));
    role[i] = r.is_mark ? mark
              : r.is_push_pop ? push_pop
              : same_thread_only && r.end != 0 && r.closing_thread() != r.thread ? left_out // nsys's rule
                                                                                   : start_end;
  }
  auto with_role = [&](std::uint8_t wanted) {
    return [&, wanted](std::size_t i) -> std::size_t { return role[i] == wanted ? slot[i] : none; };
  };
  thread_timelines tl{buckets(nr, ns, with_role(push_pop)), buckets(nr, ns, with_role(start_end)),
                      buckets(nl + nr, ns, [&](std::size_t q) -> std::size_t {
                        if (q < nl) return slots.slot(t.launches[q].thread);
                        return role[q - nl] == mark ? slot[q - nl] : none;
                      })};
  sort_each(tl.push_pop, [&](std::uint32_t a, std::uint32_t b) {
    const auto sa = t.ranges[a].start, sb = t.ranges[b].start;
    if (sa != sb) return sa < sb;
    return end[a] != end[b] ? end[a] > end[b] : a < b;
  });
  sort_each(tl.start_end, [&](std::uint32_t a, std::uint32_t b) { return t.ranges[a].start < t.ranges[b].start; });
  auto time_of = [&](std::uint32_t q) { return q < nl ? t.launches[q].time : t.ranges[q - nl].start; };
  sort_each(tl.queries, [&](std::uint32_t a, std::uint32_t b) { return time_of(a) < time_of(b); });
  return tl;
}

// One thread's push/pop sweep: fills parent/depth of its ranges and marks, and the innermost
// range open at each of its launches. Every range is pushed and popped once: linear.
inline void sweep_push_pop(const trace& t, const std::uint32_t* r_first, const std::uint32_t* r_last, const std::uint32_t* q_first,
                           const std::uint32_t* q_last, const std::vector<timestamp_ns>& end, std::vector<std::uint32_t>& parent,
                           std::vector<std::uint16_t>& depth, scratch_vector<std::uint32_t>& launch_owner, std::vector<std::uint32_t>& stack) {
  const auto nl = t.launches.size();
  stack.clear();
  auto pop_until = [&](timestamp_ns v) { while (!stack.empty() && end[stack.back()] < v) stack.pop_back(); };
  auto top = [&] { return stack.empty() ? no_index : stack.back(); };
  auto level = [&] { return static_cast<std::uint16_t>(std::min<std::size_t>(stack.size(), 0xffff)); };
  for (auto q = q_first; q != q_last; ++q) {
    const auto time = *q < nl ? t.launches[*q].time : t.ranges[*q - nl].start;
    for (; r_first != r_last && t.ranges[*r_first].start <= time; ++r_first) {
      pop_until(end[*r_first]);
      parent[*r_first] = top();
      depth[*r_first] = level();
      stack.push_back(*r_first);
    }
    pop_until(time);
    if (*q < nl) launch_owner[*q] = top();
    else { parent[*q - nl] = top(); depth[*q - nl] = level(); }
  }
  for (; r_first != r_last; ++r_first) {
    pop_until(end[*r_first]);
    parent[*r_first] = top();
    depth[*r_first] = level();
    stack.push_back(*r_first);
  }
}

// One thread's start/end sweep: take(launch, open, changed) at each launch with the start/end
// ranges open there (`open`, in the order they are kept open) and whether that list changed
// since the thread's previous launch. Ranges enter once and leave once; the work is linear
// plus the ranges open at each launch.
template <class Take>
void sweep_start_end(const trace& t, const std::uint32_t* r_first, const std::uint32_t* r_last, const std::uint32_t* q_first,
                     const std::uint32_t* q_last, const std::vector<timestamp_ns>& end, Take&& take, std::vector<std::uint32_t>& open) {
  const auto nl = t.launches.size();
  open.clear();
  bool changed = true;
  for (auto q = q_first; q != q_last; ++q) {
    if (*q >= nl) continue;
    const auto time = t.launches[*q].time;
    for (; r_first != r_last && t.ranges[*r_first].start <= time; ++r_first) {
      open.push_back(*r_first);
      changed = true;
    }
    for (std::size_t i = 0; i < open.size();) {
      if (end[open[i]] >= time) {
        ++i;
        continue;
      }
      open[i] = open.back();
      open.pop_back();
      changed = true;
    }
    take(*q, open, changed);
    changed = false;
  }
}

} // namespace detail
} // namespace v1
} // namespace nvscope

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
  buckets queries;   // per thread slot: launches [0, nl) (unless left out), then marks (nl + range index), by time
};

// `same_thread_only`: start/end ranges ended on another thread take no launches (nsys's rule).
// `launches`: whether the queries hold the launches (else only the marks: sweep_interleaved).
inline thread_timelines timelines_of(const trace& t, const thread_table& slots, const std::vector<timestamp_ns>& end, bool same_thread_only,
                                     bool launches = true) {
  const auto nr = t.ranges.size(), nl = t.launches.size(), ns = slots.size(), none = ns;
  // Each range's slot and role read once from its 64-byte record into 5 bytes, which the three
  // bucketings below read twice each instead of the records.
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
  const std::size_t first_query = launches ? 0 : nl; // queries q of [first_query, nl + nr), bucketed as q - first_query
  thread_timelines tl{buckets(nr, ns, with_role(push_pop)), buckets(nr, ns, with_role(start_end)),
                      buckets(nl + nr - first_query, ns, [&](std::size_t i) -> std::size_t {
                        const auto q = i + first_query;
                        if (q < nl) return slots.slot(t.launches[q].thread);
                        return role[q - nl] == mark ? slot[q - nl] : none;
                      })};
  if (first_query != 0)
    for (auto& q : tl.queries.order) q += static_cast<std::uint32_t>(first_query);
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

// One thread's push/pop sweep as it goes: its ranges still to push (by start, end descending) and
// the stack of those open. `to(time)` at each query in time order: the ranges started by then
// pushed, each taking its parent and depth (the innermost open range that ends no earlier), then
// those ended before `time` popped. Every range is pushed and popped once: linear.
class push_pop_sweep {
 public:
  push_pop_sweep(const std::uint32_t* next, const std::uint32_t* last, std::vector<std::uint32_t>& stack) : next_(next), last_(last), stack_(&stack) {
    stack.clear();
  }
  void to(const trace& t, timestamp_ns time, const std::vector<timestamp_ns>& end, std::vector<std::uint32_t>& parent, std::vector<std::uint16_t>& depth) {
    for (; next_ != last_ && t.ranges[*next_].start <= time; ++next_) push(*next_, end, parent, depth);
    pop_until(time, end);
  }
  void finish(const std::vector<timestamp_ns>& end, std::vector<std::uint32_t>& parent, std::vector<std::uint16_t>& depth) {
    for (; next_ != last_; ++next_) push(*next_, end, parent, depth);
  }
  std::uint32_t top() const noexcept { return stack_->empty() ? no_index : stack_->back(); }
  std::uint16_t level() const noexcept { return static_cast<std::uint16_t>(std::min<std::size_t>(stack_->size(), 0xffff)); }

 private:
  void pop_until(timestamp_ns v, const std::vector<timestamp_ns>& end) {
    while (!stack_->empty() && end[stack_->back()] < v) stack_->pop_back();
  }
  void push(std::uint32_t r, const std::vector<timestamp_ns>& end, std::vector<std::uint32_t>& parent, std::vector<std::uint16_t>& depth) {
    pop_until(end[r], end);
    parent[r] = top();
    depth[r] = level();
    stack_->push_back(r);
  }
  const std::uint32_t *next_, *last_;
  std::vector<std::uint32_t>* stack_;
};

// One thread's start/end sweep as it goes: its ranges still to open (by start) and those open.
// `to(time)` at each launch in time order: the ranges started by then opened, those ended before
// `time` closed; `changed` says whether the open list changed since it was last cleared. Ranges
// enter once and leave once: linear plus the ranges open at each launch.
class start_end_sweep {
 public:
  start_end_sweep(const std::uint32_t* next, const std::uint32_t* last, std::vector<std::uint32_t>& open) : next_(next), last_(last), open_(&open) {
    open.clear();
  }
  void to(const trace& t, timestamp_ns time, const std::vector<timestamp_ns>& end) {
    auto& open = *open_;
    for (; next_ != last_ && t.ranges[*next_].start <= time; ++next_) {
      open.push_back(*next_);
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
  }
  const std::vector<std::uint32_t>& open() const noexcept { return *open_; }
  bool changed = true;

 private:
  const std::uint32_t *next_, *last_;
  std::vector<std::uint32_t>* open_;
};

// One thread's push/pop sweep over its queries in time order: fills parent/depth of its ranges
// and marks, and the innermost range open at each of its launches.
inline void sweep_push_pop(const trace& t, const std::uint32_t* r_first, const std::uint32_t* r_last, const std::uint32_t* q_first,
                           const std::uint32_t* q_last, const std::vector<timestamp_ns>& end, std::vector<std::uint32_t>& parent,
                           std::vector<std::uint16_t>& depth, std::vector<std::uint32_t>& launch_owner, std::vector<std::uint32_t>& stack) {
  const auto nl = t.launches.size();
  push_pop_sweep w(r_first, r_last, stack);
  for (auto q = q_first; q != q_last; ++q) {
    w.to(t, *q < nl ? t.launches[*q].time : t.ranges[*q - nl].start, end, parent, depth);
    if (*q < nl) launch_owner[*q] = w.top();
    else parent[*q - nl] = w.top(), depth[*q - nl] = w.level();
  }
  w.finish(end, parent, depth);
}

// One thread's start/end sweep over its launches in time order: take(launch, open, changed, list)
// at each launch with the start/end ranges open there (`open`, in the order they are kept open),
// whether that list changed since the thread's previous launch, and the thread's `list` (the
// place of the list it last wrote, for take to keep).
template <class Take>
void sweep_start_end(const trace& t, const std::uint32_t* r_first, const std::uint32_t* r_last, const std::uint32_t* q_first,
                     const std::uint32_t* q_last, const std::vector<timestamp_ns>& end, Take&& take, std::vector<std::uint32_t>& open) {
  const auto nl = t.launches.size();
  start_end_sweep w(r_first, r_last, open);
  std::uint32_t list = 0;
  for (auto q = q_first; q != q_last; ++q) {
    if (*q >= nl) continue;
    w.to(t, t.launches[*q].time, end);
    take(*q, w.open(), w.changed, list);
    w.changed = false;
  }
}

// Whether each thread's launches come in time order in the records, as a collector's do:
// sweep_interleaved's condition.
inline bool launches_in_thread_order(const trace& t, const thread_table& slots) {
  std::vector<timestamp_ns> last(slots.size(), 0);
  std::uint32_t thread = 0, at = slots.slot(0); // runs of one thread: its slot looked up once a run
  for (const auto& l : t.launches) {
    if (l.thread != thread) thread = l.thread, at = slots.slot(thread);
    if (at >= last.size()) continue; // no slot: no sweep takes it
    if (l.time < last[at]) return false;
    last[at] = l.time;
  }
  return true;
}

// Every thread's sweeps at once, in one read of the launches in record order, where each
// thread's launches come in time order there (launches_in_thread_order): each thread's state
// kept apart, and a thread's marks (tl.queries: timelines_of without the launches) taken before
// its first launch at or after them. The same results as the sweeps per thread (queries of one
// time may go in either order: each sees the same ranges open), without a list of each thread's
// launches made and read back, and the launch records read once in order rather than once a
// thread. `take`: sweep_start_end's, or null for no start/end sweep; held by value while the
// sweep runs, given back at its end.
template <class Take>
void sweep_interleaved(const trace& t, const thread_table& slots, thread_timelines& tl, const std::vector<timestamp_ns>& end,
                       std::vector<std::uint32_t>& parent, std::vector<std::uint16_t>& depth, std::vector<std::uint32_t>& launch_owner,
                       Take* take) {
  const auto ns = slots.size(), nl = t.launches.size();
  std::vector<std::vector<std::uint32_t>> stacks(ns), opens(ns);
  struct thread_state { // one thread's, together: a launch reads them all
    push_pop_sweep pp;
    start_end_sweep se;
    const std::uint32_t *mark, *marks_end;
    std::uint32_t list = 0;
  };
  std::vector<thread_state> w;
  w.reserve(ns);
  for (std::size_t s = 0; s < ns; ++s)
    w.push_back({push_pop_sweep(tl.push_pop.begin(s), tl.push_pop.end(s), stacks[s]), start_end_sweep(tl.start_end.begin(s), tl.start_end.end(s), opens[s]),
                 tl.queries.begin(s), tl.queries.end(s)});
  const auto take_mark = [&](thread_state& x) {
    const auto m = *x.mark++ - static_cast<std::uint32_t>(nl);
    x.pp.to(t, t.ranges[m].start, end, parent, depth);
    parent[m] = x.pp.top();
    depth[m] = x.pp.level();
  };
  Take held = take ? *take : Take{};
  // The current thread's state, taken from w at the first launch of a run of that thread and
  // given back to w at the next thread's launch.
  std::uint32_t thread = 0, s = static_cast<std::uint32_t>(slots.slot(0));
  std::vector<std::uint32_t> unused_stack, unused_open; // a state for x while no thread's is held
  thread_state x = s < ns ? w[s] : thread_state{push_pop_sweep(nullptr, nullptr, unused_stack), start_end_sweep(nullptr, nullptr, unused_open), nullptr, nullptr};
  const launch_record* const launches = t.launches.data();
  std::uint32_t* const owner_of = launch_owner.data();
  for (std::uint32_t l = 0; l < nl; ++l) {
    const auto& launch = launches[l];
    if (launch.thread != thread) {
      if (s < ns) w[s] = x;
      thread = launch.thread, s = static_cast<std::uint32_t>(slots.slot(thread));
      if (s < ns) x = w[s];
    }
    if (s >= ns) continue;
    while (x.mark != x.marks_end && t.ranges[*x.mark - nl].start <= launch.time) take_mark(x);
    x.pp.to(t, launch.time, end, parent, depth);
    owner_of[l] = x.pp.top();
    if (take == nullptr) continue;
    x.se.to(t, launch.time, end);
    held(l, x.se.open(), x.se.changed, x.list);
    x.se.changed = false;
  }
  if (s < ns) w[s] = x;
  if (take) *take = held;
  for (auto& x : w) {
    while (x.mark != x.marks_end) take_mark(x);
    x.pp.finish(end, parent, depth);
  }
}

} // namespace detail
} // namespace v1
} // namespace nvscope

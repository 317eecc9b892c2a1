// nvscope-target: nvscope
#pragma once

/// \file analyze/detail/other_threads.hpp
/// The `process` attribution rule's credit (`attribution_rule::process`,
/// reference::credited_owner): a launch whose thread has no push/pop range open goes to the
/// innermost push/pop range open at its time on the one other thread that has one open then.
///
/// One sweep over the launches without an owner in time order, beside the outermost push/pop
/// ranges in start order: a heap of the open ones by end and a count per thread say how many
/// threads have a range open (a thread has a range open at a time exactly when one of its
/// outermost ranges is). Where exactly one has, its innermost range open then is found as the
/// reference finds it: the last of its ranges in nesting order (start, the longer first, record)
/// that starts by then, or, when that one has ended, the nearest of its ancestors still open.
/// That ancestor is the innermost open: a range open at the time that starts no later than that
/// one contains it, so it is among its ancestors, and the nesting takes the innermost of them.

#include <nvscope/trace.hpp>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <queue>
#include <tuple>
#include <utility>
#include <vector>

namespace nvscope {
inline namespace v1 {
namespace detail {

// Per range `end` (closed) and `parent` (push/pop nesting, no_index for none); per launch
// `owner`, the innermost push/pop range open on its thread or no_index: each launch without one
// credited as the file comment says.
inline void credit_other_threads(const trace& t, const std::vector<timestamp_ns>& end, const std::vector<std::uint32_t>& parent,
                                 std::vector<std::uint32_t>& owner) {
  std::vector<std::uint32_t> orphans; // launches with no owner, by time
  for (std::uint32_t l = 0; l < owner.size(); ++l)
    if (owner[l] == no_index) orphans.push_back(l);
  if (orphans.empty()) return;
  std::vector<std::uint32_t> nested; // push/pop ranges by thread, then in nesting order
  for (std::uint32_t r = 0; r < t.ranges.size(); ++r)
    if (!t.ranges[r].is_mark && t.ranges[r].is_push_pop) nested.push_back(r);
  const auto key = [&](std::uint32_t r) { return std::make_tuple(t.ranges[r].thread, t.ranges[r].start, ~end[r], r); };
  std::sort(nested.begin(), nested.end(), [&](std::uint32_t a, std::uint32_t b) { return key(a) < key(b); });
  std::vector<std::uint32_t> first = {0}, thread_of, outer; // per thread segment of `nested`: where it begins; its thread
  for (std::uint32_t i = 0; i < nested.size(); ++i) {
    if (i > 0 && t.ranges[nested[i]].thread != t.ranges[nested[i - 1]].thread) first.push_back(i);
    if (thread_of.size() < first.size()) thread_of.push_back(t.ranges[nested[i]].thread);
    if (parent[nested[i]] == no_index) outer.push_back(i);
  }
  first.push_back(static_cast<std::uint32_t>(nested.size()));
  const auto segment_of = [&](std::uint32_t i) { return static_cast<std::uint32_t>(std::upper_bound(first.begin(), first.end(), i) - first.begin() - 1); };
  std::sort(outer.begin(), outer.end(), [&](std::uint32_t a, std::uint32_t b) { return std::make_pair(t.ranges[nested[a]].start, a) < std::make_pair(t.ranges[nested[b]].start, b); });
  std::sort(orphans.begin(), orphans.end(), [&](std::uint32_t a, std::uint32_t b) { return std::make_pair(t.launches[a].time, a) < std::make_pair(t.launches[b].time, b); });
  using open_range = std::pair<timestamp_ns, std::uint32_t>; // (end, segment)
  std::priority_queue<open_range, std::vector<open_range>, std::greater<open_range>> open;
  std::vector<std::uint32_t> open_count(thread_of.size(), 0);
  std::uint64_t threads_open = 0, segment_sum = 0; // with one thread open, segment_sum is its segment
  std::size_t next = 0;
  for (const auto l : orphans) {
    const auto time = t.launches[l].time;
    for (; next < outer.size() && t.ranges[nested[outer[next]]].start <= time; ++next) {
      const auto s = segment_of(outer[next]);
      open.emplace(end[nested[outer[next]]], s);
      if (open_count[s]++ == 0) ++threads_open, segment_sum += s;
    }
    for (; !open.empty() && open.top().first < time; open.pop())
      if (--open_count[open.top().second] == 0) --threads_open, segment_sum -= open.top().second;
    if (threads_open != 1 || thread_of[segment_sum] == t.launches[l].thread) continue;
    const auto from = nested.begin() + first[segment_sum], to = nested.begin() + first[segment_sum + 1];
    const auto after = std::upper_bound(from, to, time, [&](timestamp_ns x, std::uint32_t r) { return x < t.ranges[r].start; });
    auto r = after == from ? no_index : *(after - 1);
    while (r != no_index && end[r] < time) r = parent[r];
    owner[l] = r;
  }
}

} // namespace detail
} // namespace v1
} // namespace nvscope

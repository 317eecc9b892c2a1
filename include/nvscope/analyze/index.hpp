// nvscope-target: nvscope
#pragma once

/// \file analyze/index.hpp
/// The indexed view of a trace every analysis pass reads, built once: each GPU record tied to
/// its launch (by correlation id), range ends closed, range nesting per thread (one rule,
/// marks included), the innermost push/pop range and the start/end ranges open at every
/// launch, and range groups (domain, name, style). Thread indexes map through a table sized by
/// the threads present. Every step is linear or n log n in the records.
///
/// \code
///   auto a = nvscope::attribute(t);
///   auto r = a.kernel_owner[0];        // index into t.ranges, or attribution::none
///   auto up = a.parent[r];             // the range that encloses it on its thread
/// \endcode

#include <nvscope/analyze/attribution.hpp>
#include <nvscope/analyze/detail/buckets.hpp>
#include <nvscope/analyze/detail/ends.hpp>
#include <nvscope/analyze/detail/launch_lookup.hpp>
#include <nvscope/analyze/detail/nesting.hpp>
#include <nvscope/analyze/detail/other_threads.hpp>
#include <nvscope/analyze/detail/scratch.hpp>
#include <nvscope/analyze/intervals.hpp>
#include <nvscope/analyze/names.hpp>
#include <nvscope/analyze/report.hpp>
#include <nvscope/trace.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace nvscope {
inline namespace v1 {

namespace detail {
// Every range of `parent` (per range; one of `nr` or more, or none given, is none), children before
// their parents: the order in which the nesting passes sum upwards and, read backwards, pass down.
// Where every parent comes before its children in the trace (ranges recorded as they open, as the
// collector records them), the ranges from last to first are that order: a check of the parents.
// Otherwise leaves first, then each range once its last child is in: right at any depth
// (`depth` stops counting at 65,535; an order by depth put the levels past it parents first).
template <class Order>
void children_first(const std::vector<std::uint32_t>& parent, std::uint32_t nr, Order& order) {
  const std::uint32_t* up = parent.data();
  const auto given = static_cast<std::uint32_t>(std::min<std::size_t>(parent.size(), nr));
  bool parents_first = true;
  for (std::uint32_t r = 0; r < given; ++r) parents_first &= up[r] < r || up[r] >= nr; // read straight, every one: no exit, no bounds test
  order.clear();
  if (parents_first) {
    order.resize(nr);
    for (std::uint32_t i = 0; i < nr; ++i) order[i] = nr - 1 - i;
    return;
  }
  const auto parent_of = [&](std::uint32_t r) { return r < given && up[r] < nr ? up[r] : no_index; };
  order.reserve(nr);
  scratch_vector<std::uint32_t> pending(nr, 0); // per range: its children not yet in the order
  for (std::uint32_t r = 0; r < nr; ++r)
    if (parent_of(r) != no_index) ++pending[parent_of(r)];
  for (std::uint32_t r = 0; r < nr; ++r)
    if (pending[r] == 0) order.push_back(r);
  for (std::size_t i = 0; i < order.size(); ++i) {
    const auto up_of = parent_of(order[i]);
    if (up_of != no_index && --pending[up_of] == 0) order.push_back(up_of);
  }
}

} // namespace detail

/// The indexed view of a trace that every analysis pass reads: built once by `index_trace`.
struct trace_index {
  attribution links;                           ///< launches, owners, nesting, closed ends
  std::vector<std::uint32_t> children_first;   ///< every range once, children before their parents (read backwards: parents first)
  record_indexes launch_owner;     ///< per launch: innermost push/pop range credited (`credit`), or none
  record_indexes start_end_offset; ///< per launch, and one past: into start_end_ranges
  record_indexes start_end_ranges; ///< start/end ranges open at each launch
  std::vector<char> kernel_ok;                 ///< per kernel: has a valid interval
  std::vector<std::uint32_t> group_of;         ///< per range: its (domain, name, style) group; none for marks
  std::vector<std::uint32_t> group_first;      ///< per group: its first range
  std::uint64_t incomplete_found = 0;          ///< GPU records and ranges with no valid end
  std::uint64_t unclosed_found = 0;            ///< ranges never closed
  std::uint64_t unattributed = 0;              ///< valid GPU records with no launch record
  attribution_rule credit = attribution_rule::thread; ///< the rule `launch_owner` follows

  /// Calls f(range) for every range containing launch `l`: the push/pop stack from the
  /// innermost outwards, then the start/end ranges.
  template <class F>
  void for_enclosing(std::uint32_t l, F&& f) const {
    for (auto r = launch_owner[l]; r != attribution::none; r = links.parent[r]) f(r);
    for (auto i = start_end_offset[l]; i < start_end_offset[l + 1]; ++i) f(start_end_ranges[i]);
  }
};

namespace detail {

// Each thread's sweeps in turn, over its queries (timelines_of with the launches): any trace.
inline void sweep_each_thread(const trace& t, const thread_table& slots, thread_timelines& tl, trace_index& x, bool start_end) {
  auto& a = x.links;
  std::vector<std::uint32_t> scratch;
  auto &pp = tl.push_pop, &se = tl.start_end, &q = tl.queries;
  for (std::size_t s = 0; s < slots.size(); ++s)
    sweep_push_pop(t, pp.begin(s), pp.end(s), q.begin(s), q.end(s), a.range_end, a.parent, a.depth, x.launch_owner, scratch);
  if (!start_end) return;
  // The start/end ranges open at each launch: a launch's count, and where in `lists` its ranges
  // lie, a list written only where a thread's open ranges changed (a thread's launches mostly
  // share one); then placed by launch (start_end_offset's order).
  scratch_column<std::uint32_t> list_of(t.launches.size()); // unset: written for each launch with any open
  scratch_vector<std::uint32_t> lists;
  auto take = [&](std::uint32_t l, const std::vector<std::uint32_t>& open, bool changed, std::uint32_t& current) {
    if (open.empty()) return;
    if (changed) {
      current = static_cast<std::uint32_t>(lists.size());
      lists.insert(lists.end(), open.begin(), open.end());
    }
    x.start_end_offset[l + 1] = static_cast<std::uint32_t>(open.size());
    list_of[l] = current;
  };
  for (std::size_t s = 0; s < slots.size(); ++s) sweep_start_end(t, se.begin(s), se.end(s), q.begin(s), q.end(s), a.range_end, take, scratch);
  for (std::size_t l = 0; l < t.launches.size(); ++l) x.start_end_offset[l + 1] += x.start_end_offset[l];
  x.start_end_ranges.resize(x.start_end_offset.back());
  for (std::size_t l = 0; l < t.launches.size(); ++l) { // each launch's list copied (mostly one range)
    const auto from = x.start_end_offset[l], to = x.start_end_offset[l + 1];
    if (from == to) continue;
    const auto* list = lists.data() + list_of[l];
    for (auto i = from; i < to; ++i) x.start_end_ranges[i] = *list++;
  }
}

// The start/end ranges open at each launch, appended where they stay as the sweep meets the
// launches in record order. The sweep holds it by value while it runs.
struct open_ranges_appender {
  std::uint32_t* offset = nullptr; // start_end_offset: each launch's count, summed afterwards
  record_indexes* ranges = nullptr;
  std::uint32_t* out = nullptr;
  std::size_t used = 0, room = 0;
  void operator()(std::uint32_t l, const std::vector<std::uint32_t>& open, bool, std::uint32_t&) {
    offset[l + 1] = static_cast<std::uint32_t>(open.size());
    if (room - used < open.size()) grow(open.size());
    for (const auto r : open) out[used++] = r;
  }
  NVSCOPE_DETAIL_COLD void grow(std::size_t more) {
    ranges->resize(std::max(2 * ranges->size(), used + more));
    out = ranges->data();
    room = ranges->size();
  }
};

// Every thread's sweeps at once (sweep_interleaved): the launches come in record order, so each
// one's open start/end ranges are appended where they stay.
inline void sweep_all_threads(const trace& t, const thread_table& slots, thread_timelines& tl, trace_index& x, bool start_end) {
  auto& a = x.links;
  open_ranges_appender append;
  if (start_end) {
    x.start_end_ranges.resize(t.launches.size()); // one a launch, the usual most: grown where more are open
    append = {x.start_end_offset.data(), &x.start_end_ranges, x.start_end_ranges.data(), 0, x.start_end_ranges.size()};
  }
  sweep_interleaved(t, slots, tl, a.range_end, a.parent, a.depth, x.launch_owner, start_end ? &append : nullptr);
  if (!start_end) return;
  x.start_end_ranges.resize(append.used);
  for (std::size_t l = 0; l < t.launches.size(); ++l) x.start_end_offset[l + 1] += x.start_end_offset[l];
}

// Nesting, owners of launches and (`open_start_end`) the start/end ranges open at each launch,
// per thread: every thread at once where each thread's launches come in time order in the
// records, else one thread after another.
// `slots`: the trace's thread table (linked_index's).
inline void nest_ranges(const trace& t, trace_index& x, start_end_rule rule, bool open_start_end, const thread_table& slots) {
  auto& a = x.links;
  const bool at_once = slots.launches_in_order(); // then no per-thread list of launches
  auto tl = timelines_of(t, slots, a.range_end, rule == start_end_rule::nsys, !at_once);
  a.parent.assign(t.ranges.size(), attribution::none);
  a.depth.assign(t.ranges.size(), 0);
  x.launch_owner.assign(t.launches.size(), attribution::none);
  if (open_start_end) x.start_end_offset.assign(t.launches.size() + 1, 0);
  const bool start_end = open_start_end && !tl.start_end.order.empty();
  if (at_once) sweep_all_threads(t, slots, tl, x, start_end);
  else sweep_each_thread(t, slots, tl, x, start_end);
}

// Each GPU record's launch (by correlation id) and owner; counts records with no valid end
// and valid ones with no launch. `slots`: the trace's thread table (its read of the launches
// found their largest correlation id).
inline void link_launches(const trace& t, trace_index& x, const thread_table& slots) {
  const launch_lookup lookup(t.launches, slots.most_correlation());
  auto link = [&](const auto& records, record_indexes& launch, record_indexes& owner, char* ok) {
    launch.resize(records.size());
    owner.resize(records.size());
    std::uint32_t *const launch_of = launch.data(), *const owner_of = owner.data();
    const std::uint32_t* const launch_owner = x.launch_owner.data();
    std::uint64_t incomplete = 0, unattributed = 0;
    for (std::size_t i = 0; i < records.size(); ++i) {
      const auto& r = records[i];
      const auto l = lookup.find(r.correlation);
      const bool valid = valid_interval(r.start, r.end);
      launch_of[i] = l;
      owner_of[i] = l == no_index ? attribution::none : launch_owner[l];
      if (ok) ok[i] = valid;
      incomplete += !valid;
      unattributed += valid && l == no_index;
    }
    x.incomplete_found += incomplete;
    x.unattributed += unattributed;
  };
  x.kernel_ok.resize(t.kernels.size());
  link(t.kernels, x.links.kernel_launch, x.links.kernel_owner, x.kernel_ok.data());
  link(t.copies, x.links.copy_launch, x.links.copy_owner, nullptr);
  link(t.memsets, x.links.memset_launch, x.links.memset_owner, nullptr);
  for (const auto& s : t.syncs) x.incomplete_found += !valid_interval(s.start, s.end);
}

// Range groups, one per (domain, name, style), numbered in order of first appearance. Keys are
// numbered per style (names of the default domain by an array read: a trace with a range per
// operator has millions of ranges and few names), then given their group.
inline void group_ranges(const trace& t, trace_index& x) {
  key_numbers keys[2]{key_numbers(t.strings.size()), key_numbers(t.strings.size())};
  std::vector<std::uint32_t> group_of_key[2];
  x.group_of.assign(t.ranges.size(), attribution::none);
  for (std::uint32_t i = 0; i < t.ranges.size(); ++i) {
    const auto& r = t.ranges[i];
    if (r.is_mark) continue;
    x.unclosed_found += r.end == 0;
    x.incomplete_found += r.end != 0 && r.end < r.start;
    const std::uint64_t key = (static_cast<std::uint64_t>(r.domain) << 32) | r.name;
    auto& groups = group_of_key[r.is_push_pop];
    const auto k = keys[r.is_push_pop].of(key);
    if (k == groups.size()) {
      groups.push_back(static_cast<std::uint32_t>(x.group_first.size()));
      x.group_first.push_back(i);
    }
    x.group_of[i] = groups[k];
  }
}

// Groups that print one label and have one style made one (nsys groups its NVTX tables by the
// printed `domain:name` and the style, so `:q` in the default domain and `q` in a domain named
// `:` are one row): the later group's ranges join the first's, the groups renumbered in order
// of first appearance. A label per group is made only when two groups could collide: when some
// domain's name or some range's name holds a colon.
inline void merge_same_labels(const trace& t, trace_index& x) {
  bool colon = false;
  for (const auto g : x.group_first) {
    const auto& r = t.ranges[g];
    colon = colon || t.strings[r.name].find(':') != std::string_view::npos || (r.domain && t.strings[r.domain].find(':') != std::string_view::npos);
  }
  if (!colon) return;
  std::map<std::pair<std::string, bool>, std::uint32_t> kept; // (label, push/pop): new group
  std::vector<std::uint32_t> renumber(x.group_first.size());
  std::vector<std::uint32_t> first;
  for (std::uint32_t g = 0; g < x.group_first.size(); ++g) {
    const auto& r = t.ranges[x.group_first[g]];
    const auto [it, added] = kept.emplace(std::make_pair(range_label(t, r), r.is_push_pop), static_cast<std::uint32_t>(first.size()));
    if (added) first.push_back(x.group_first[g]);
    renumber[g] = it->second;
  }
  if (first.size() == x.group_first.size()) return;
  for (auto& g : x.group_of)
    if (g != attribution::none) g = renumber[g];
  x.group_first = std::move(first);
}

// The index without its range groups: ends closed, nesting, owners (credited by `credit`), each
// record's launch, and (`open_start_end`) the start/end ranges open at each launch.
inline trace_index linked_index(const trace& t, start_end_rule rule, bool open_start_end, const thread_table* threads = nullptr,
                                attribution_rule credit = attribution_rule::thread) {
  const thread_table own = threads ? thread_table() : thread_table(t);
  const thread_table& table = threads ? *threads : own;
  trace_index x;
  x.credit = credit;
  x.links.trace_end = trace_end_of(t);
  x.links.range_end = closed_range_ends(t, x.links.trace_end);
  nest_ranges(t, x, rule, open_start_end, table);
  if (credit == attribution_rule::process) credit_other_threads(t, x.links.range_end, x.links.parent, x.launch_owner);
  children_first(x.links.parent, static_cast<std::uint32_t>(t.ranges.size()), x.children_first); // once, for every pass that follows the nesting
  link_launches(t, x, table);
  return x;
}

// index_trace (below); `threads`: the trace's thread table where the caller made it, else null.
inline trace_index indexed(const trace& t, start_end_rule rule, const thread_table* threads, attribution_rule credit = attribution_rule::thread) {
  auto x = linked_index(t, rule, true, threads, credit);
  group_ranges(t, x);
  merge_same_labels(t, x);
  return x;
}

} // namespace detail

/// Builds the indexed view of `t` that every analysis pass reads: O(n log n) in the ranges,
/// linear in everything else (docs/analysis.md). `rule`: which start/end ranges take launches;
/// `credit`: which push/pop range a launch from a thread with none open goes to.
/// \code
///   const nvscope::trace_index x = nvscope::index_trace(t);
///   auto kernels = nvscope::kernel_summary(t, x);
/// \endcode
inline trace_index index_trace(const trace& t, start_end_rule rule = start_end_rule::nsys, attribution_rule credit = attribution_rule::thread) {
  return detail::indexed(t, rule, nullptr, credit);
}

#if defined(NVSCOPE_IMPLEMENTATION)
// attribute(t) and api_call_launches(t), declared in attribution.hpp: defined in the program's
// implementation file. attribute is the links of linked_index.
attribution attribute(const trace& t, attribution_rule credit) { return detail::linked_index(t, start_end_rule::nsys, false, nullptr, credit).links; }

std::vector<std::uint32_t> api_call_launches(const trace& t) {
  const detail::launch_lookup lookup(t.launches);
  std::vector<std::uint32_t> out(t.api_calls.size());
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = lookup.find(t.api_calls[i].correlation);
  return out;
}
#endif

/// How the ranges of `t` nest, computed from times per thread: per range its parent (or
/// `attribution::none`) and depth. The trace itself is left as its producer wrote it.
/// \code
///   auto n = nvscope::link_ranges(t);
///   assert(n.parent[inner] == outer && n.depth[inner] == 1);
/// \endcode
struct range_nesting {
  std::vector<std::uint32_t> parent;
  std::vector<std::uint16_t> depth;
};

/// The nesting of `t`'s ranges (see `range_nesting`).
/// \code
///   auto n = nvscope::link_ranges(t);
/// \endcode
inline range_nesting link_ranges(const trace& t) {
  auto a = attribute(t);
  return {std::move(a.parent), std::move(a.depth)};
}

} // namespace v1
} // namespace nvscope

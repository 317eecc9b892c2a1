// nvscope-target: cupti
#pragma once

// The collector's side of a bounded collection (collector_options::bounded), in plain C++:
// step ranges found in the NVTX log as it grows, NVTX events turned into ranges as they close
// (the log is emptied after each buffer), sync calls paired as their waits end, losses as they
// are counted, the launch calls joined to GPU records as these arrive (and kept only for the
// records kept raw), and the flight recorder's records put back into a trace.

#include <nvscope/collect/detail/buffer_decoder.hpp>
#include <nvscope/collect/detail/finish.hpp>
#include <nvscope/collect/detail/long_run.hpp>
#include <nvscope/collect/detail/nvtx_listener.hpp>
#include <nvscope/collect/detail/process_state.hpp>
#include <nvscope/trace.hpp>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

namespace nvscope {
inline namespace v1 {
namespace detail {

// The step rule when the caller gives none: `step`, or a step word (`step`, `iteration`,
// `iter`) then an optional `_`, ` `, `#`, `-` or `:` then digits, in any case. The names
// capture's schedule pushes (`step_N`) are steps.
inline bool plain_step_name(std::string_view name) noexcept {
  auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
  for (std::string_view word : {"iteration", "step", "iter"}) {
    if (name.size() < word.size()) continue;
    bool same = true;
    for (std::size_t i = 0; i < word.size(); ++i) same = same && lower(name[i]) == word[i];
    if (!same) continue;
    std::size_t i = word.size();
    if (i == name.size()) return word == "step";
    if (std::string_view("_ #-:").find(name[i]) != std::string_view::npos) ++i;
    if (i == name.size()) return false;
    for (; i < name.size(); ++i)
      if (name[i] < '0' || name[i] > '9') return false;
    return true;
  }
  return false;
}

struct bounded_state {
  std::map<std::pair<std::uint64_t, std::uint64_t>, std::vector<std::int64_t>> open; // per (thread, domain): each open push's step number, -1 for no step
  std::uint64_t dropped = 0, errors = 0, launches_lost = 0;            // losses counted so far
  std::vector<timed_host_call> calls; // launches whose record has not come, by correlation; time 0: taken
  std::size_t calls_taken = 0;        // entries of `calls` taken, erased once they are half of it
  std::size_t hint = 0;               // where the last record's launch was found (records come in launch order)
  std::vector<timed_host_call> used;  // launches of records placed (pruned to the kept)
  std::vector<std::string> notes;
  std::vector<profiler_call> profiler_calls; // followed while recording, for stop()'s capture windows
  bool profiler_on = false;
  // The NVTX range window (collector_options::keep_range_raw): the first range the rule
  // selects, followed as its push or start and its pop or end are scanned.
  std::unordered_map<std::uint64_t, std::string> domain_names; // by domain handle
  enum class range_window : std::uint8_t { not_seen, open, closed } range_state = range_window::not_seen;
  std::pair<std::uint64_t, std::uint64_t> range_stack{0, 0}; // its (thread, domain) stack, for a push
  std::size_t range_depth = 0;                                // that stack's size before its push
  std::uint64_t range_id = 0;                                 // its id, for a start
  bool range_pushed = false;

  // A launch waits in `calls` (sorted by correlation; calls are drained nearly in that order,
  // so an insert is nearly always at the end) for its GPU record; a sync call (no GPU record of
  // its own to wait for) goes to `used`, kept while a sync record of its correlation is held.
  void add_call(const timed_host_call& c) {
    if (c.is_sync) return used.push_back(c);
    if (calls.empty() || calls.back().correlation < c.correlation) return calls.push_back(c);
    auto it = std::lower_bound(calls.begin(), calls.end(), c.correlation,
                               [](const timed_host_call& a, std::uint32_t v) { return a.correlation < v; });
    if (it == calls.end() || it->correlation != c.correlation) calls.insert(it, c);
    else if (it->time == 0 || c.time < it->time) *it = c; // the earliest of a runtime and its driver call
  }
  // A GPU record's launch time (its start where its launch was not logged).
  timestamp_ns launched_at(std::uint32_t correlation, timestamp_ns start) {
    timed_host_call* c = find_call(correlation);
    if (c == nullptr || c->time == 0) return start;
    used.push_back(*c);
    const timestamp_ns t = c->time;
    c->time = 0;
    if (++calls_taken * 2 > calls.size() + 64) erase_taken();
    return t;
  }
  // Keeps `used` to the launches of records the folder still holds, once it is four times their
  // count and 32,768 more (a pass over the kept records, paid once in that many launches).
  void prune(const long_run_folder& folder) {
    const std::size_t kept = folder.counts().records_kept;
    if (used.size() <= 4 * kept + 32768) return;
    std::vector<std::uint32_t> live;
    live.reserve(kept);
    folder.each_kept([&](const step_records& s) {
      for (const auto& r : s.kernels) live.push_back(r.correlation);
      for (const auto& r : s.copies) live.push_back(r.correlation);
      for (const auto& r : s.memsets) live.push_back(r.correlation);
      for (const auto& r : s.syncs) live.push_back(r.correlation);
    });
    std::sort(live.begin(), live.end());
    used.erase(std::remove_if(used.begin(), used.end(),
                              [&](const timed_host_call& c) { return !std::binary_search(live.begin(), live.end(), c.correlation); }),
               used.end());
  }
  // The launch calls of the records kept (stop() joins them; host_call_index keeps one of each id).
  void calls_into(std::vector<timed_host_call>& out) const { out.insert(out.end(), used.begin(), used.end()); }
  // Launch calls still waiting for their record.
  std::size_t calls_waiting() const noexcept { return calls.size() - calls_taken; }
  // `calls` entry of `correlation`, or nullptr: at the hint or just past it first.
  timed_host_call* find_call(std::uint32_t correlation) noexcept {
    for (std::size_t i = hint; i < calls.size() && i < hint + 4; ++i)
      if (calls[i].correlation == correlation) return &calls[hint = i];
    auto it = std::lower_bound(calls.begin(), calls.end(), correlation,
                               [](const timed_host_call& a, std::uint32_t v) { return a.correlation < v; });
    if (it == calls.end() || it->correlation != correlation) return nullptr;
    hint = static_cast<std::size_t>(it - calls.begin());
    return &*it;
  }
  void erase_taken() {
    calls.erase(std::remove_if(calls.begin(), calls.end(), [](const timed_host_call& c) { return c.time == 0; }), calls.end());
    calls_taken = 0;
    hint = 0;
  }

  // Launch records of `t`'s GPU records, as finish_trace would join them (a snapshot).
  void launches_into(trace& t) const {
    std::vector<timed_host_call> mine;
    calls_into(mine);
    join_launches(t, host_call_index(std::move(mine)));
  }
};

// Which NVTX range is a window of raw records (collector_options::keep_range_raw): its name and
// its domain's name (empty in the default domain).
using range_rule = std::function<bool(std::string_view name, std::string_view domain)>;

// The range window opens at the first range `rule` selects (a push, or a start) and closes at its
// pop or end; `stack` is the (thread, domain) stack of a push, `depth` its size before the push.
inline void follow_range_window(bounded_state& b, long_run_folder& folder, const nvtx_event& e, timestamp_ns t,
                                const range_rule& rule, std::size_t depth) {
  using state = bounded_state::range_window;
  const bool push = e.kind == nvtx_event_kind::push, start = e.kind == nvtx_event_kind::start;
  if (b.range_state == state::not_seen && (push || start) && !e.name.empty()) {
    const auto d = b.domain_names.find(e.domain);
    if (!rule(e.name, d == b.domain_names.end() ? std::string_view() : std::string_view(d->second))) return;
    folder.window_begun(t);
    b.range_state = state::open;
    b.range_pushed = push;
    b.range_stack = {e.os_thread, e.domain}, b.range_depth = depth, b.range_id = e.key;
    return;
  }
  if (b.range_state != state::open) return;
  const bool closes = b.range_pushed ? e.kind == nvtx_event_kind::pop && b.range_stack == std::make_pair(e.os_thread, e.domain) && depth == b.range_depth
                                     : e.kind == nvtx_event_kind::end && e.key == b.range_id;
  if (!closes) return;
  folder.window_ended(t);
  b.range_state = state::closed;
}

// The NVTX events logged since the last call, taken out of the log: a bounded collection holds
// no event longer than the buffer it came with.
inline std::vector<nvtx_event> take_nvtx_events() {
  std::vector<nvtx_event> events;
  auto& log = nvtx_log();
  std::lock_guard<std::mutex> lock(log.mutex);
  events.swap(log.events);
  return events;
}

// New NVTX events: a step range's push begins a step, its pop ends it; the range window (`rule`,
// when given) opens and closes as its range does.
template <class ToTrace>
void scan_step_events(bounded_state& b, long_run_folder& folder, const std::vector<nvtx_event>& events, bool (*is_step)(std::string_view),
                      const ToTrace& to_trace, const range_rule& rule = {}) {
  for (const nvtx_event& e : events) {
    if (e.kind == nvtx_event_kind::domain_created) b.domain_names[e.domain] = e.name;
    const bool stacked = e.kind == nvtx_event_kind::push || e.kind == nvtx_event_kind::pop;
    if (!stacked && e.kind != nvtx_event_kind::start && e.kind != nvtx_event_kind::end) continue;
    auto* stack = stacked ? &b.open[{e.os_thread, e.domain}] : nullptr; // push/pop: per thread and domain, as stop() pairs them
    if (e.kind == nvtx_event_kind::pop && stack->empty()) continue;
    if (e.kind == nvtx_event_kind::pop) {
      if (stack->back() >= 0) folder.step_ended(to_trace(e.time), static_cast<std::uint64_t>(stack->back()));
      stack->pop_back();
    }
    if (rule) follow_range_window(b, folder, e, to_trace(e.time), rule, stack ? stack->size() : 0);
    if (e.kind != nvtx_event_kind::push) continue;
    const bool step = !e.name.empty() && (is_step ? is_step(e.name) : plain_step_name(e.name));
    stack->push_back(step ? static_cast<std::int64_t>(folder.step_begun(to_trace(e.time), e.name)) : -1);
  }
}

// The same on the events logged since the last call, which it takes out of the log and returns.
template <class ToTrace>
std::vector<nvtx_event> scan_step_events(bounded_state& b, long_run_folder& folder, bool (*is_step)(std::string_view),
                                         const ToTrace& to_trace, const range_rule& rule = {}) {
  auto events = take_nvtx_events();
  scan_step_events(b, folder, events, is_step, to_trace, rule);
  return events;
}

// NVTX events into range records as they come: the builder writes into the live trace (its
// string table, its threads' names), and each range is handed on as it closes (a mark at once);
// only the ranges open now stay in the trace. A step range's name (`step_N`, one per step) is
// not interned: the range carries `step_marker()` as its name and its own name beside it, and
// the folder names it only where it is kept (so the string table does not grow with the steps).
class live_ranges {
 public:
  using to_trace_fn = std::function<timestamp_ns(std::uint64_t)>;
  using thread_fn = std::function<std::uint32_t(std::uint64_t)>;
  live_ranges(trace& t, to_trace_fn to_trace, thread_fn thread, const nvtx_registrations& known,
              bool (*is_step)(std::string_view) = nullptr)
      : t_(t), to_trace_(std::move(to_trace)), thread_(std::move(thread)), is_step_(is_step),
        builder_(t, to_trace_, thread_, known), marker_(t.strings.intern(step_marker_text())) {}
  live_ranges(const live_ranges&) = delete;
  live_ranges& operator=(const live_ranges&) = delete;

  void add(const std::vector<nvtx_event>& events) {
    for (const auto& e : events) {
      if (e.kind != nvtx_event_kind::push || e.name.empty() || !(is_step_ ? is_step_(e.name) : plain_step_name(e.name))) {
        builder_.add(e);
        continue;
      }
      nvtx_event marked = e;
      marked.name = step_marker_text();
      builder_.add(marked);
      step_names_[{t_.ranges.back().start, t_.ranges.back().thread}] = e.name;
    }
    builder_.release_closed([this](const range_record& r) {
      closed_.push_back(r);
      closed_names_.emplace_back();
      if (r.name != marker_) return;
      auto it = step_names_.find({r.start, r.thread});
      if (it == step_names_.end()) return;
      closed_names_.back() = std::move(it->second);
      step_names_.erase(it);
    });
  }
  // The ranges closed since the folder last took them, and beside each its step name (empty
  // unless it is a step range); long_run_folder::take_ranges empties both.
  std::vector<range_record>& closed() noexcept { return closed_; }
  std::vector<std::string>& closed_names() noexcept { return closed_names_; }
  std::uint64_t unmatched() const noexcept { return builder_.unmatched(); }
  string_id step_marker() const noexcept { return marker_; }
  static std::string_view step_marker_text() noexcept { return "\x1e<step range>"; }
  // Names the step ranges still open in the trace (at stop).
  void name_open_steps() {
    for (auto& r : t_.ranges) {
      auto it = r.name == marker_ ? step_names_.find({r.start, r.thread}) : step_names_.end();
      if (it != step_names_.end()) r.name = t_.strings.intern(it->second);
    }
  }

 private:
  trace& t_;
  to_trace_fn to_trace_;
  thread_fn thread_;
  bool (*is_step_)(std::string_view);
  range_builder<to_trace_fn, thread_fn> builder_;
  string_id marker_;
  std::map<std::pair<timestamp_ns, std::uint32_t>, std::string> step_names_; // open step ranges' names, by (start, thread)
  std::vector<range_record> closed_;
  std::vector<std::string> closed_names_;
};

// The sync calls of `pending` up to the last point where their thread was outside every sync
// call, each thread's in its order; the rest (a wait still going on) stays in `pending`, before
// the calls that come next. Paired by syncs_from_host_calls as each wait ends.
inline std::vector<sync_call> complete_sync_calls(std::vector<sync_call>& pending) {
  std::stable_sort(pending.begin(), pending.end(), [](const sync_call& a, const sync_call& b) { return a.thread < b.thread; });
  std::vector<sync_call> done, rest;
  std::size_t i = 0;
  while (i < pending.size()) {
    const std::uint32_t thread = pending[i].thread;
    std::size_t j = i, last = i;
    long depth = 0;
    for (; j < pending.size() && pending[j].thread == thread; ++j) {
      depth += (pending[j].flags & host_call_exit) != 0 ? -1 : 1;
      if (depth <= 0) last = j + 1, depth = 0; // an exit with no entry ends nothing open: counted unpaired
    }
    done.insert(done.end(), pending.begin() + static_cast<std::ptrdiff_t>(i), pending.begin() + static_cast<std::ptrdiff_t>(last));
    rest.insert(rest.end(), pending.begin() + static_cast<std::ptrdiff_t>(last), pending.begin() + static_cast<std::ptrdiff_t>(j));
    i = j;
  }
  pending.swap(rest);
  return done;
}

// The program's profiler starts and stops (with only_in_capture) open and close a window as
// they come; repeated starts or stops collapse (a runtime call and the driver call inside it).
// Kept in `b.profiler_calls` for stop()'s capture windows.
template <class ToTrace>
void follow_profiler_switches(bounded_state& b, long_run_folder& folder, const std::vector<profiler_call>& calls, const ToTrace& to_trace) {
  for (const auto& c : calls) {
    const timestamp_ns t = to_trace(c.time);
    if (c.start && !b.profiler_on) folder.window_begun(t);
    if (!c.start && b.profiler_on) folder.window_ended(t);
    b.profiler_on = c.start;
  }
  b.profiler_calls.insert(b.profiler_calls.end(), calls.begin(), calls.end());
}

// The losses counted since the last call.
inline loss_counts new_losses(bounded_state& b, const buffer_counts& c, std::uint64_t launches_lost) {
  loss_counts l;
  l.dropped_records = c.dropped - b.dropped;
  l.buffer_errors = c.errors - b.errors;
  l.launches_lost = launches_lost >= b.launches_lost ? launches_lost - b.launches_lost : 0;
  b.dropped = c.dropped, b.errors = c.errors, b.launches_lost = launches_lost;
  return l;
}

// Sorts `v` by `key` and keeps one record of each key.
template <class Record, class Key>
void keep_once(std::vector<Record>& v, const Key& key) {
  std::sort(v.begin(), v.end(), [&](const Record& a, const Record& b) { return key(a) < key(b); });
  v.erase(std::unique(v.begin(), v.end(), [&](const Record& a, const Record& b) { return key(a) == key(b); }), v.end());
}

// The flight recorder's and the windows' records into `t` (each once: a record of a kept step
// inside a window is in both). The ranges still open stay in `t` as they are.
inline void bounded_records(const long_run_folder& folder, trace& t) {
  std::vector<range_record> ranges;
  folder.each_kept([&](const step_records& s) {
    t.kernels.insert(t.kernels.end(), s.kernels.begin(), s.kernels.end());
    t.copies.insert(t.copies.end(), s.copies.begin(), s.copies.end());
    t.memsets.insert(t.memsets.end(), s.memsets.begin(), s.memsets.end());
    t.syncs.insert(t.syncs.end(), s.syncs.begin(), s.syncs.end());
    t.api_calls.insert(t.api_calls.end(), s.api_calls.begin(), s.api_calls.end());
    for (auto r : s.ranges) {
      if (r.name == folder.step_marker()) r.name = t.strings.intern(s.summary.name);
      ranges.push_back(r);
    }
  });
  auto by_time = [](const auto& r) { return std::make_tuple(r.start, r.end, r.correlation); };
  keep_once(t.kernels, by_time);
  keep_once(t.copies, by_time);
  keep_once(t.memsets, by_time);
  keep_once(t.syncs, by_time);
  keep_once(t.api_calls, by_time);
  keep_once(ranges, [](const range_record& r) { return std::make_tuple(r.start, r.end, r.thread, r.domain, r.name, r.is_mark, r.is_push_pop); });
  t.ranges.insert(t.ranges.end(), ranges.begin(), ranges.end());
}

} // namespace detail
} // namespace v1
} // namespace nvscope

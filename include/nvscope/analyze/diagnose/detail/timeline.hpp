// nvscope-target: nvscope
#pragma once

// The view every diagnosis pass reads, built once from the trace and its attribution: GPU
// operations in start order with their launch call, the innermost range on a thread at any
// time, each thread's synchronisations, the API name of a correlation id. Internal.

#include <nvscope/analyze/index.hpp>
#include <nvscope/analyze/diagnose/results.hpp>
#include <nvscope/trace.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

namespace nvscope {
inline namespace v1 {
namespace detail {
namespace diag {

enum class op_kind : std::uint8_t { kernel, copy, memset };

struct gpu_op {
  timestamp_ns start = 0;
  timestamp_ns end = 0;
  timestamp_ns call_start = 0; // launch call start (API record, else launch record); 0: unknown
  timestamp_ns call_end = 0;   // launch call end; equals call_start without an API record
  std::uint32_t index = 0;     // into kernels, copies or memsets
  std::uint32_t thread = diagnosis_none;
  std::uint32_t owner = diagnosis_none;
  std::uint32_t correlation = 0;
  std::uint32_t stream = 0;
  std::uint16_t device = 0;
  op_kind kind = op_kind::kernel;
  bool has_call = false; // an API record gives the call's end
};

// Thread index (as records carry it) -> slot; any index past trace::threads shares one slot.
inline std::size_t thread_slot(const trace& t, std::uint32_t thread) noexcept {
  return thread < t.threads.size() ? thread : t.threads.size();
}

struct api_call {
  timestamp_ns start = 0;
  timestamp_ns end = 0;
  string_id name = 0;
};

// The view. Pointers stay valid while the trace and attribution live.
// The diagnosis window (`end == 0`: the whole trace) holds what starts inside it.
inline bool in_window(const time_window& w, timestamp_ns start) noexcept {
  return w.end == 0 || (start >= w.begin && start < w.end);
}

struct timeline {
  const trace* t = nullptr;
  const attribution* a = nullptr;
  std::vector<gpu_op> ops; // by start
  std::vector<std::vector<std::uint32_t>> ranges_by_thread; // push/pop ranges by start
  std::vector<std::vector<timestamp_ns>> range_starts_by_thread;
  std::vector<std::vector<std::pair<timestamp_ns, timestamp_ns>>> syncs_by_thread; // by start
  std::unordered_map<std::uint32_t, api_call> calls; // correlation -> runtime call (else driver)
  timestamp_ns begin = 0; // first operation's start
  timestamp_ns end = 0;   // last operation's end
  time_window window{};   // what is diagnosed, by start time; end == 0: everything

  bool inside(timestamp_ns start) const noexcept { return in_window(window, start); }

  // Innermost push/pop range open on `thread` at `time`, or none.
  std::uint32_t range_at(std::uint32_t thread, timestamp_ns time) const noexcept {
    const auto slot = thread_slot(*t, thread);
    if (slot >= ranges_by_thread.size()) return diagnosis_none;
    const auto& starts = range_starts_by_thread[slot];
    auto it = std::upper_bound(starts.begin(), starts.end(), time);
    if (it == starts.begin()) return diagnosis_none;
    std::uint32_t r = ranges_by_thread[slot][static_cast<std::size_t>(it - starts.begin()) - 1];
    while (r != diagnosis_none && r < a->range_end.size() && a->range_end[r] < time) r = a->parent[r];
    return r < t->ranges.size() ? r : diagnosis_none;
  }

  // The end of the last synchronisation `thread` sat in at some moment of [from, to], or 0.
  timestamp_ns last_sync_end(std::uint32_t thread, timestamp_ns from, timestamp_ns to) const noexcept {
    const auto slot = thread_slot(*t, thread);
    if (slot >= syncs_by_thread.size()) return 0;
    const auto& s = syncs_by_thread[slot];
    auto it = std::upper_bound(s.begin(), s.end(), std::make_pair(to, ~timestamp_ns{0}));
    timestamp_ns last = 0;
    for (int back = 0; it != s.begin() && back < 8; ++back) { // syncs of one thread do not overlap
      --it;
      if (it->second >= from) last = std::max(last, it->second);
    }
    return last;
  }

  string_id call_name(std::uint32_t correlation) const noexcept {
    const auto it = calls.find(correlation);
    return it == calls.end() ? 0 : it->second.name;
  }
};

template <class Record>
void add_records(timeline& tl, op_kind kind, const std::vector<Record>& records,
                 const std::vector<std::uint32_t>& launch_of, const std::vector<std::uint32_t>& owner_of) {
  const trace& t = *tl.t;
  for (std::uint32_t i = 0; i < records.size(); ++i) {
    const auto& r = records[i];
    if (r.end == 0 || r.end < r.start || !tl.inside(r.start)) continue; // incomplete: counted by analyze's losses
    gpu_op op;
    op.start = r.start;
    op.end = r.end;
    op.index = i;
    op.kind = kind;
    op.correlation = r.correlation;
    op.stream = r.stream;
    op.device = r.device;
    op.owner = i < owner_of.size() ? owner_of[i] : diagnosis_none;
    const auto l = i < launch_of.size() ? launch_of[i] : diagnosis_none;
    if (l != diagnosis_none && l < t.launches.size()) {
      op.thread = t.launches[l].thread;
      op.call_start = op.call_end = t.launches[l].time;
    }
    const auto c = tl.calls.find(r.correlation);
    if (c != tl.calls.end() && c->second.end >= c->second.start) {
      op.call_start = c->second.start;
      op.call_end = c->second.end;
      op.has_call = true;
    }
    tl.ops.push_back(op);
  }
}

inline void index_calls(timeline& tl) {
  for (const auto& c : tl.t->api_calls) {
    if (c.correlation == 0 || c.end < c.start) continue;
    auto it = tl.calls.find(c.correlation);
    if (it == tl.calls.end()) {
      tl.calls.emplace(c.correlation, api_call{c.start, c.end, c.name});
    } else if (!c.is_driver && c.start <= it->second.start) { // the runtime call wraps the driver one
      it->second = api_call{c.start, c.end, c.name};
    }
  }
}

inline void index_ranges_and_syncs(timeline& tl) {
  const trace& t = *tl.t;
  const std::size_t slots = t.threads.size() + 1;
  tl.ranges_by_thread.assign(slots, {});
  tl.range_starts_by_thread.assign(slots, {});
  tl.syncs_by_thread.assign(slots, {});
  for (std::uint32_t i = 0; i < t.ranges.size(); ++i) {
    const auto& r = t.ranges[i];
    if (!r.is_mark && r.is_push_pop) tl.ranges_by_thread[thread_slot(t, r.thread)].push_back(i);
  }
  for (std::size_t s = 0; s < slots; ++s) {
    auto& v = tl.ranges_by_thread[s];
    std::sort(v.begin(), v.end(), [&](std::uint32_t x, std::uint32_t y) {
      return t.ranges[x].start != t.ranges[y].start ? t.ranges[x].start < t.ranges[y].start : x < y;
    });
    for (auto r : v) tl.range_starts_by_thread[s].push_back(t.ranges[r].start);
  }
  for (const auto& s : t.syncs)
    if (s.end >= s.start && s.end != 0) tl.syncs_by_thread[thread_slot(t, s.thread)].emplace_back(s.start, s.end);
  for (auto& v : tl.syncs_by_thread) std::sort(v.begin(), v.end());
}

inline timeline build_timeline(const trace& t, const attribution& a, const time_window& window = {}) {
  timeline tl;
  tl.t = &t;
  tl.a = &a;
  tl.window = window;
  index_calls(tl);
  index_ranges_and_syncs(tl);
  tl.ops.reserve(t.kernels.size() + t.copies.size() + t.memsets.size());
  add_records(tl, op_kind::kernel, t.kernels, a.kernel_launch, a.kernel_owner);
  add_records(tl, op_kind::copy, t.copies, a.copy_launch, a.copy_owner);
  add_records(tl, op_kind::memset, t.memsets, a.memset_launch, a.memset_owner);
  std::sort(tl.ops.begin(), tl.ops.end(), [](const gpu_op& x, const gpu_op& y) {
    return x.start != y.start ? x.start < y.start : x.end < y.end;
  });
  if (!tl.ops.empty()) {
    tl.begin = tl.ops.front().start;
    for (const auto& op : tl.ops) tl.end = std::max(tl.end, op.end);
  }
  return tl;
}

// Quantile p of a sorted vector by nearest rank (the smallest value with at least p of the
// values at or below it); the median as nsys computes it (mean of the two middle values).
inline double quantile(const std::vector<std::uint64_t>& sorted, double p) noexcept {
  if (sorted.empty()) return 0.0;
  auto rank = static_cast<std::size_t>(std::ceil(p * static_cast<double>(sorted.size())));
  rank = std::min(std::max<std::size_t>(rank, 1), sorted.size());
  return static_cast<double>(sorted[rank - 1]);
}

inline double median(const std::vector<std::uint64_t>& sorted) noexcept {
  const auto n = sorted.size();
  if (n == 0) return 0.0;
  if (n % 2 == 1) return static_cast<double>(sorted[n / 2]);
  return (static_cast<double>(sorted[n / 2 - 1]) + static_cast<double>(sorted[n / 2])) / 2.0;
}

// Tukey's upper fence, Q3 + 1.5 IQR (quartiles by nearest rank).
inline double upper_fence(const std::vector<std::uint64_t>& sorted) noexcept {
  const double q1 = quantile(sorted, 0.25);
  const double q3 = quantile(sorted, 0.75);
  return q3 + 1.5 * (q3 - q1);
}

// Accumulates time per range name (domain, name) and returns the largest first.
class range_tally {
 public:
  explicit range_tally(const trace& t) : t_(&t) {}
  void add(std::uint32_t range, std::uint64_t ns) {
    const std::uint64_t key = range < t_->ranges.size()
                                  ? (static_cast<std::uint64_t>(t_->ranges[range].domain) << 32) | t_->ranges[range].name
                                  : ~std::uint64_t{0};
    auto& slot = by_key_[key];
    slot.ns += ns;
    slot.count += 1;
    if (range < t_->ranges.size() && ns >= slot.best_ns) {
      slot.best_ns = ns;
      slot.range = range;
    }
  }
  std::vector<range_time> top(std::size_t n) const {
    std::vector<range_time> out;
    for (const auto& [key, s] : by_key_) {
      range_time r;
      r.range = s.range;
      r.ns = s.ns;
      r.count = s.count;
      if (s.range != diagnosis_none) {
        r.domain = t_->ranges[s.range].domain;
        r.name = t_->ranges[s.range].name;
      }
      out.push_back(r);
    }
    std::sort(out.begin(), out.end(), [](const range_time& x, const range_time& y) {
      return x.ns != y.ns ? x.ns > y.ns : x.range < y.range;
    });
    if (out.size() > n) out.resize(n);
    return out;
  }

 private:
  struct slot_t {
    std::uint64_t ns = 0, count = 0, best_ns = 0;
    std::uint32_t range = diagnosis_none;
  };
  const trace* t_;
  std::unordered_map<std::uint64_t, slot_t> by_key_;
};

} // namespace diag
} // namespace detail
} // namespace v1
} // namespace nvscope

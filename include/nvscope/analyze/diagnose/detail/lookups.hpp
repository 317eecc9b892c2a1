// nvscope-target: nvscope
#pragma once

// What the diagnosis' view (detail/timeline.hpp) is looked up through, and the one tally the
// passes share: the API call of a correlation id, hinted searches of a thread's sorted columns,
// time summed per range name. Internal.

#include <nvscope/analyze/detail/buckets.hpp>
#include <nvscope/analyze/detail/inlining.hpp>
#include <nvscope/analyze/detail/launch_lookup.hpp>
#include <nvscope/analyze/diagnosis.hpp>
#include <nvscope/trace.hpp>

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace nvscope {
inline namespace v1 {
namespace detail {
namespace diag {

// Correlation id -> the API call that launched it: the runtime call where there is one (it
// wraps the driver call), else the driver call; calls with no id or an end before their start
// are left out.
class call_table {
 public:
  void build(const std::vector<api_record>& calls) {
    calls_ = &calls;
    index_ = correlation_index(
        calls, [](const api_record& c) { return c.correlation != 0 && c.end >= c.start; },
        [&](std::uint32_t held, std::uint32_t i) { return !calls[i].is_driver && calls[i].start <= calls[held].start; });
  }
  const api_record* find(std::uint32_t correlation) const noexcept {
    const auto i = index_.find(correlation);
    return i == no_index ? nullptr : &(*calls_)[i];
  }
  bool empty() const noexcept { return index_.empty(); }

 private:
  const std::vector<api_record>* calls_ = nullptr;
  correlation_index index_;
};

// Where each thread's last range and sync lookups ended (per thread slot), for a pass whose
// lookup times mostly grow (the operations in start order): the next lookup walks forward from
// there, a few steps at most, and searches where the time went back or jumped ahead.
struct lookup_hints {
  explicit lookup_hints(const thread_table& threads) : ranges(threads.size(), 0), syncs(threads.size(), 0), last_slot_(threads.slot(0)) {}
  std::vector<std::size_t> ranges, syncs;
  // The slot of `thread`: a run of lookups of one thread (the rule) searches the table once.
  std::uint32_t slot(const thread_table& threads, std::uint32_t thread) noexcept {
    if (thread != last_thread_) last_thread_ = thread, last_slot_ = threads.slot(thread);
    return last_slot_;
  }

 private:
  std::uint32_t last_thread_ = 0, last_slot_; // thread index 0's slot to start with (any index may come)
};

// std::upper_bound's place of `key` in sorted `v`, found from `hint` and left there.
template <class Values, class Key>
std::size_t place_after(const Values& v, const Key& key, std::size_t& hint) noexcept {
  std::size_t p = hint;
  if (p > v.size() || (p > 0 && key < v[p - 1])) {
    p = static_cast<std::size_t>(std::upper_bound(v.begin(), v.end(), key) - v.begin());
  } else {
    for (int steps = 0; p < v.size() && !(key < v[p]); ++p)
      if (++steps == 8) {
        p = static_cast<std::size_t>(std::upper_bound(v.begin() + static_cast<std::ptrdiff_t>(p), v.end(), key) - v.begin());
        break;
      }
  }
  return hint = p;
}

// Accumulates time per range name (domain, name) and returns the largest first.
class range_tally {
 public:
  explicit range_tally(const trace& t) : t_(&t) {}
  range_tally(range_tally&&) noexcept = default; // the slots' buffer moves with it: slot_ stays valid
  range_tally& operator=(range_tally&&) noexcept = default;
  range_tally(const range_tally&) = delete; // a copy's slot_ would point into the original's slots
  range_tally& operator=(const range_tally&) = delete;
  NVSCOPE_DETAIL_INLINE void add(std::uint32_t range, std::uint64_t ns) { add_run(range, ns, 1, ns); }
  // `count` adds of `range` in a row, `ns` in all and `longest` the longest: what they would
  // leave (the range is the same for each, so some add of them passes the test of the longest
  // exactly where `longest` passes it).
  NVSCOPE_DETAIL_INLINE void add_run(std::uint32_t range, std::uint64_t ns, std::uint64_t count, std::uint64_t longest) {
    if (range != last_range_ || slot_ == nullptr) switch_to(range); // runs of one range are common: its record is read once a run
    slot_->ns += ns;
    slot_->count += count;
    if (in_trace_ && longest >= slot_->best_ns) {
      slot_->best_ns = longest;
      slot_->range = range;
    }
  }
  std::vector<range_time> top(std::size_t n) const {
    std::vector<range_time> out;
    for (const auto& s : slots_) {
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
  NVSCOPE_DETAIL_COLD void switch_to(std::uint32_t range) {
    last_range_ = range;
    in_trace_ = range < t_->ranges.size();
    const std::uint64_t key = in_trace_ ? (static_cast<std::uint64_t>(t_->ranges[range].domain) << 32) | t_->ranges[range].name : ~std::uint64_t{0};
    if (key != last_key_ || slots_.empty()) { // and runs of one name, and two names in turn (an operator's outer and inner range)
      std::swap(last_key_, other_key_);
      std::swap(last_, other_);
      if (key != last_key_ || slots_.size() < 2) {
        last_key_ = key;
        last_ = numbers_.of(key);
        if (last_ == slots_.size()) slots_.emplace_back();
      }
    }
    slot_ = &slots_[last_]; // until the next switch (the only place slots_ grows)
  }
  struct slot_t {
    std::uint64_t ns = 0, count = 0, best_ns = 0;
    std::uint32_t range = diagnosis_none;
  };
  const trace* t_;
  key_numbers numbers_;        // (domain, name) -> slot
  std::vector<slot_t> slots_;
  std::uint64_t last_key_ = 0, other_key_ = 0; // the key last added, and the one before it (while slots_ holds two)
  std::uint32_t last_range_ = 0; // the range last added (its key is last_key_)
  std::uint32_t last_ = 0, other_ = 0; // the slots of last_key_ and other_key_
  slot_t* slot_ = nullptr;     // slots_[last_]; none before the first add
  bool in_trace_ = false;      // last_range_ is a range of the trace (not diagnosis_none or past them)
};

} // namespace diag
} // namespace detail
} // namespace v1
} // namespace nvscope

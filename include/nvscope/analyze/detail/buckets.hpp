// nvscope-target: nvscope
#pragma once

// analyze/detail/buckets.hpp: thread slots, key numbering and counting-sort buckets (internal to
// the analyze layer).

#include <nvscope/analyze/detail/inlining.hpp>
#include <nvscope/analyze/detail/scratch.hpp>
#include <nvscope/trace.hpp>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace nvscope {
inline namespace v1 {
namespace detail {


// Numbers 64-bit keys 0, 1, 2, ... in the order they first come. A key below `dense` costs an
// array read; any other is looked up in an open-addressing table (linear probing, at most half
// full, Fibonacci hashing): traces with a range per operator make millions of lookups, and a
// node-based map spent most of its time allocating.
class key_numbers {
 public:
  explicit key_numbers(std::size_t dense = 0) : dense_(dense, no_index), slots_(1024, no_index) {}
  // A dense key's known number is read inline by the loop that asks (most keys, once each
  // record); a new dense key and every other key take the out-of-line path.
  NVSCOPE_DETAIL_INLINE std::uint32_t of(std::uint64_t key) {
    if (key < dense_.size() && dense_[static_cast<std::size_t>(key)] != no_index) return dense_[static_cast<std::size_t>(key)];
    return of_new_or_sparse(key);
  }
  std::size_t size() const noexcept { return keys_.size(); }
  std::uint64_t key(std::uint32_t n) const noexcept { return keys_[n]; }
  std::vector<std::uint64_t>& keys() noexcept { return keys_; } // by number

 private:
  std::uint32_t of_new_or_sparse(std::uint64_t key) {
    if (key < dense_.size()) return dense_[static_cast<std::size_t>(key)] = add(key);
    auto slot = find(key);
    if (slots_[slot] == no_index) {
      if (2 * ++in_table_ > slots_.size()) {
        grow();
        slot = find(key);
      }
      slots_[slot] = add(key);
    }
    return slots_[slot];
  }
  std::uint32_t add(std::uint64_t key) {
    keys_.push_back(key);
    return static_cast<std::uint32_t>(keys_.size() - 1);
  }
  // The slot holding `key`, or the empty slot where it would go.
  std::size_t find(std::uint64_t key) const noexcept {
    const std::size_t mask = slots_.size() - 1;
    for (auto i = static_cast<std::size_t>((key * 0x9e3779b97f4a7c15ull) >> shift_);; i = (i + 1) & mask) {
      const auto n = slots_[i]; // the product's top bits pick the slot
      if (n == no_index || keys_[n] == key) return i;
    }
  }
  void grow() {
    slots_.assign(slots_.size() * 2, no_index);
    --shift_;
    for (std::uint32_t n = 0; n < keys_.size(); ++n)
      if (keys_[n] >= dense_.size()) slots_[find(keys_[n])] = n;
  }

  std::vector<std::uint32_t> dense_;
  std::vector<std::uint32_t> slots_; // key numbers; no_index: empty
  std::vector<std::uint64_t> keys_;  // by number
  std::size_t in_table_ = 0;         // keys in slots_
  int shift_ = 64 - 10;              // slots_.size() == 1 << (64 - shift_)
};

// Thread index (as records carry it) -> dense slot. Indexes of `trace::threads` map to
// themselves; any other value a range, launch or sync carries (a corrupt or foreign index)
// gets a slot of its own after them, so that memory follows the threads present, never the
// largest index. An index no record carries has no slot: `slot` returns `size()`. On the same
// read of the launches, whether each thread's come in time order in the records (what
// launches_in_thread_order finds: the sweeps then take every thread at once), and their largest
// correlation id (for the launch lookup's table).
class thread_table {
 public:
  thread_table() = default; // no threads
  explicit thread_table(const trace& t) : known_(static_cast<std::uint32_t>(t.threads.size())) {
    auto note = [&](std::uint32_t th) { // runs of one thread are the rule: noted once a run
      if (th >= known_ && (extra_.empty() || extra_.back() != th)) extra_.push_back(th);
    };
    for (const auto& r : t.ranges) note(r.thread);
    read_launches(t.launches, note);
    for (const auto& s : t.syncs) note(s.thread);
    std::sort(extra_.begin(), extra_.end());
    extra_.erase(std::unique(extra_.begin(), extra_.end()), extra_.end());
  }
  std::uint32_t slot(std::uint32_t thread) const noexcept {
    if (thread < known_) return thread;
    const auto it = std::lower_bound(extra_.begin(), extra_.end(), thread);
    return it != extra_.end() && *it == thread ? known_ + static_cast<std::uint32_t>(it - extra_.begin())
                                               : static_cast<std::uint32_t>(size());
  }
  std::size_t size() const noexcept { return known_ + extra_.size(); }
  bool launches_in_order() const noexcept { return launches_in_order_; }
  std::uint32_t most_correlation() const noexcept { return most_correlation_; } // of the launches; 0 for none

 private:
  // Notes each run's thread; a thread's last launch time held in a local while its run lasts
  // (kept per thread between runs: by index for the table's, numbered for any other).
  template <class Note>
  void read_launches(const std::vector<launch_record>& launches, Note& note) {
    std::vector<timestamp_ns> last_known(known_, 0), last_other;
    key_numbers others;
    timestamp_ns* home = nullptr; // where the run's thread keeps its last time between runs
    timestamp_ns last = 0;
    std::uint32_t thread = 0, most = 0;
    bool in_order = true;
    for (const auto& l : launches) {
      most = l.correlation > most ? l.correlation : most;
      if (home == nullptr || l.thread != thread) {
        if (home) *home = last;
        thread = l.thread;
        note(thread);
        if (thread < known_) {
          home = &last_known[thread];
        } else {
          const auto n = others.of(thread);
          if (n == last_other.size()) last_other.push_back(0);
          home = &last_other[n];
        }
        last = *home;
      }
      in_order = in_order && l.time >= last;
      last = l.time;
    }
    launches_in_order_ = in_order;
    most_correlation_ = most;
  }

  std::uint32_t known_ = 0;
  std::vector<std::uint32_t> extra_;
  bool launches_in_order_ = true;
  std::uint32_t most_correlation_ = 0;
};

// Items bucketed by a key below `buckets` (counting sort, stable): items of bucket b are
// order[offset[b] .. offset[b + 1]).
struct buckets {
  scratch_vector<std::uint32_t> offset;
  scratch_column<std::uint32_t> order; // every place written once

  template <class KeyOf>
  buckets(std::size_t count, std::size_t nbuckets, KeyOf key_of) : offset(nbuckets + 1, 0) {
    for (std::size_t i = 0; i < count; ++i) {
      const auto k = key_of(i);
      if (k < nbuckets) ++offset[k + 1];
    }
    for (std::size_t b = 1; b <= nbuckets; ++b) offset[b] += offset[b - 1];
    order.resize(offset[nbuckets]);
    auto cursor = offset;
    for (std::size_t i = 0; i < count; ++i) {
      const auto k = key_of(i);
      if (k < nbuckets) order[cursor[k]++] = static_cast<std::uint32_t>(i);
    }
  }
  std::uint32_t* begin(std::size_t b) noexcept { return order.data() + offset[b]; }
  std::uint32_t* end(std::size_t b) noexcept { return order.data() + offset[b + 1]; }
  std::size_t count() const noexcept { return offset.size() - 1; }
};

// Joins neighbours that share a key in a list sorted by key (`same(a, b)`: they share one;
// `join(into, from)` adds one into the other): one entry a key is left, in order.
template <class List, class Same, class Join>
void join_equal_neighbours(List& v, Same same, Join join) {
  std::size_t out = 0;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (out && same(v[out - 1], v[i])) join(v[out - 1], v[i]);
    else v[out++] = v[i];
  }
  v.resize(out);
}

// Sorts each bucket by `less`; skipped where a bucket is already in order (the usual case).
template <class Less>
void sort_each(buckets& b, Less less) {
  for (std::size_t k = 0; k < b.count(); ++k)
    if (!std::is_sorted(b.begin(k), b.end(k), less)) std::sort(b.begin(k), b.end(k), less);
}


} // namespace detail
} // namespace v1
} // namespace nvscope

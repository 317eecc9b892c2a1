// nvscope-target: nvscope
#pragma once

// analyze/detail/hot_counts.hpp: counts of a table updated a key at a time where keys come in
// runs (internal to the analyze layer).
//
// A pass that adds to counts[key] for every record, where the records of one range come
// together, adds to one address again and again. Two keys' counts are held here instead,
// written back when another key takes their place and at the end: a run of one key, or two keys
// in turn (a step and the start/end range around it), adds to a held count. Invariant: the
// table plus the held counts is what adding to the table directly would give. `Count`: the
// table's type (counts, or sums of nanoseconds).

#include <nvscope/analyze/detail/inlining.hpp>

#include <cstdint>

namespace nvscope {
inline namespace v1 {
namespace detail {

template <class Count = std::uint32_t>
class hot_counts {
 public:
  static constexpr std::uint32_t none = 0xffffffffu;
  explicit hot_counts(Count* counts) noexcept : counts_(counts) {}
  hot_counts(const hot_counts&) = delete; // one holder of the keys' counts at a time
  hot_counts& operator=(const hot_counts&) = delete;
  ~hot_counts() { flush(); }

  // counts[key] += n; returns what it held before.
  NVSCOPE_DETAIL_INLINE Count add(std::uint32_t key, Count n = 1) noexcept {
    if (key == key0_) return (count0_ += n) - n;
    if (key == key1_) return (count1_ += n) - n;
    if (evict_first_) {
      if (key0_ != none) counts_[key0_] = count0_;
      key0_ = key;
      count0_ = counts_[key] + n;
      evict_first_ = false;
      return count0_ - n;
    }
    if (key1_ != none) counts_[key1_] = count1_;
    key1_ = key;
    count1_ = counts_[key] + n;
    evict_first_ = true;
    return count1_ - n;
  }
  // Every count held written back (the destructor does it too).
  void flush() noexcept {
    if (key0_ != none) counts_[key0_] = count0_;
    if (key1_ != none) counts_[key1_] = count1_;
    key0_ = key1_ = none;
  }

 private:
  Count* counts_;
  std::uint32_t key0_ = none, key1_ = none;
  Count count0_ = 0, count1_ = 0;
  bool evict_first_ = true;
};

} // namespace detail
} // namespace v1
} // namespace nvscope

// nvscope-target: nvscope
#pragma once

// analyze/detail/launch_lookup.hpp: correlation id to record index, for launches and API calls
// (internal to the analyze layer).

#include <nvscope/analyze/detail/scratch.hpp>
#include <nvscope/trace.hpp>

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace nvscope {
inline namespace v1 {
namespace detail {

// Correlation id -> the index of one record with that id: a table indexed by id where ids are
// compact (the largest at most 4 x the records + 65,536, as CUPTI hands them out), else sorted
// pairs. Records `usable` leaves out are not indexed; where several share an id,
// `replaces(held, candidate)` (record indexes, candidate later in record order) picks one.
class correlation_index {
 public:
  correlation_index() = default;
  template <class Records, class Usable, class Replaces>
  correlation_index(const Records& records, Usable usable, Replaces replaces) {
    std::uint64_t max_id = 0, count = 0;
    for (const auto& r : records)
      if (usable(r)) max_id = std::max<std::uint64_t>(max_id, r.correlation), ++count;
    build(records, usable, replaces, max_id, count);
  }
  // Where the caller knows the largest id of the records `usable` takes and how many it takes.
  template <class Records, class Usable, class Replaces>
  correlation_index(const Records& records, Usable usable, Replaces replaces, std::uint64_t max_id, std::uint64_t count) {
    build(records, usable, replaces, max_id, count);
  }
  std::uint32_t find(std::uint32_t correlation) const noexcept {
    if (sorted_.empty()) return correlation < dense_.size() ? dense_[correlation] : no_index;
    auto it = std::lower_bound(sorted_.begin(), sorted_.end(), correlation,
                               [](const auto& p, std::uint32_t c) { return p.first < c; });
    return (it != sorted_.end() && it->first == correlation) ? it->second : no_index;
  }
  bool empty() const noexcept { return dense_.empty() && sorted_.empty(); }

 private:
  template <class Records, class Usable, class Replaces>
  void build(const Records& records, Usable usable, Replaces replaces, std::uint64_t max_id, std::uint64_t count) {
    if (count == 0) return;
    const auto keep = [&](std::uint32_t& held, std::uint32_t i) {
      if (held == no_index || replaces(held, i)) held = i;
    };
    if (max_id <= 4 * count + 65536) {
      dense_.assign(static_cast<std::size_t>(max_id) + 1, no_index);
      for (std::uint32_t i = 0; i < records.size(); ++i)
        if (usable(records[i])) keep(dense_[records[i].correlation], i);
      return;
    }
    std::vector<std::pair<std::uint32_t, std::uint32_t>> all; // (id, record): record order within an id
    for (std::uint32_t i = 0; i < records.size(); ++i)
      if (usable(records[i])) all.emplace_back(records[i].correlation, i);
    std::sort(all.begin(), all.end());
    for (const auto& [id, i] : all) {
      if (sorted_.empty() || sorted_.back().first != id) sorted_.emplace_back(id, no_index);
      keep(sorted_.back().second, i);
    }
  }

  scratch_vector<std::uint32_t> dense_;                         // by id (millions: the large-array storage)
  std::vector<std::pair<std::uint32_t, std::uint32_t>> sorted_; // (id, record) by id
};

// Correlation id -> launch index: the first launch record with that id. `most_correlation`:
// the launches' largest id where the caller read it already (thread_table's read of them).
class launch_lookup : public correlation_index {
 public:
  explicit launch_lookup(const std::vector<launch_record>& launches)
      : correlation_index(launches, [](const launch_record&) { return true; },
                          [](std::uint32_t, std::uint32_t) { return false; }) {}
  launch_lookup(const std::vector<launch_record>& launches, std::uint32_t most_correlation)
      : correlation_index(launches, [](const launch_record&) { return true; },
                          [](std::uint32_t, std::uint32_t) { return false; }, most_correlation, launches.size()) {}
};

} // namespace detail
} // namespace v1
} // namespace nvscope

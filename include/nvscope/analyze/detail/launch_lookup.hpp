// nvscope-target: nvscope
#pragma once

// analyze/detail/launch_lookup.hpp: correlation id to launch index (internal to the analyze layer).

#include <nvscope/trace.hpp>

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace nvscope {
inline namespace v1 {
namespace detail {



// Correlation id -> launch index, dense table when ids are compact, sorted pairs otherwise.
class launch_lookup {
 public:
  explicit launch_lookup(const std::vector<launch_record>& launches) {
    std::uint32_t max_id = 0;
    for (const auto& l : launches) max_id = l.correlation > max_id ? l.correlation : max_id;
    if (static_cast<std::uint64_t>(max_id) <= 4ull * launches.size() + 65536ull) {
      dense_.assign(static_cast<std::size_t>(max_id) + 1, no_index);
      for (std::uint32_t i = 0; i < launches.size(); ++i) {
        auto& slot = dense_[launches[i].correlation];
        if (slot == no_index) slot = i;
      }
      return;
    }
    sorted_.reserve(launches.size());
    for (std::uint32_t i = 0; i < launches.size(); ++i) sorted_.emplace_back(launches[i].correlation, i);
    std::stable_sort(sorted_.begin(), sorted_.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  }
  std::uint32_t find(std::uint32_t correlation) const noexcept {
    if (sorted_.empty()) return correlation < dense_.size() ? dense_[correlation] : no_index;
    auto it = std::lower_bound(sorted_.begin(), sorted_.end(), correlation,
                               [](const auto& p, std::uint32_t c) { return p.first < c; });
    return (it != sorted_.end() && it->first == correlation) ? it->second : no_index;
  }

 private:
  std::vector<std::uint32_t> dense_;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> sorted_;
};


} // namespace detail
} // namespace v1
} // namespace nvscope

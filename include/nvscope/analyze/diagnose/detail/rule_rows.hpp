// nvscope-target: nvscope
#pragma once

// Pieces the expert rules share: row making, the rows' order and cut, GPU busy time inside
// any stretch in log time. Internal.

#include <nvscope/analyze/diagnose/detail/timeline.hpp>
#include <nvscope/analyze/diagnose/results.hpp>

#include <algorithm>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

namespace nvscope {
inline namespace v1 {
namespace detail {
namespace diag {

inline bool has_text(std::string_view s, std::string_view part) noexcept { return s.find(part) != std::string_view::npos; }

inline void finish_rule(rule_result& r, std::uint32_t keep, bool by_duration = true) {
  r.matches = r.rows.size();
  for (const auto& row : r.rows) r.total_ns += row.duration;
  if (by_duration)
    std::stable_sort(r.rows.begin(), r.rows.end(),
                     [](const rule_row& x, const rule_row& y) { return x.duration > y.duration; });
  if (r.rows.size() > keep) r.rows.resize(keep);
}

inline rule_row op_row(const timeline& tl, const gpu_op& op, std::uint64_t bytes) {
  rule_row row;
  row.start = op.start;
  row.duration = op.end - op.start;
  row.bytes = bytes;
  row.record = op.index;
  row.call = tl.call_name(op.correlation);
  row.range = op.owner;
  row.thread = op.thread;
  row.stream = op.stream;
  row.device = op.device;
  return row;
}

// Merged busy intervals with prefix sums: GPU busy time inside any [a, b] in log time.
struct busy_index {
  std::vector<std::pair<timestamp_ns, timestamp_ns>> spans;
  std::vector<std::uint64_t> before; // busy time of spans[0..i)

  explicit busy_index(const timeline& tl) {
    for (const auto& op : tl.ops) {
      if (!spans.empty() && op.start <= spans.back().second) spans.back().second = std::max(spans.back().second, op.end);
      else spans.emplace_back(op.start, op.end);
    }
    before.resize(spans.size() + 1, 0);
    for (std::size_t i = 0; i < spans.size(); ++i) before[i + 1] = before[i] + (spans[i].second - spans[i].first);
  }
  std::uint64_t busy_until(timestamp_ns x) const noexcept {
    auto it = std::upper_bound(spans.begin(), spans.end(), std::make_pair(x, ~timestamp_ns{0}));
    const auto i = static_cast<std::size_t>(it - spans.begin());
    if (i == 0) return 0;
    const auto& s = spans[i - 1];
    return before[i - 1] + (std::min(x, s.second) - s.first);
  }
  std::uint64_t busy(timestamp_ns a, timestamp_ns b) const noexcept { return b > a ? busy_until(b) - busy_until(a) : 0; }
};

} // namespace diag
} // namespace detail
} // namespace v1
} // namespace nvscope

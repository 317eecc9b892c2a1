// nvscope-target: nvscope
#pragma once

// nsys gpu_time_util over the diagnosis window: equal chunks (each ceil(window / chunks) ns,
// the last one shorter), the summed time of the operations in each (may pass 100 % when
// streams overlap, as nsys's), chunks under the threshold coalesced with their size-weighted
// average, each named by the range that held most of its idle time. Internal.

#include <nvscope/analyze/detail/inlining.hpp>
#include <nvscope/analyze/diagnose/detail/rule_rows.hpp>
#include <nvscope/analyze/diagnose/detail/timeline.hpp>
#include <nvscope/analyze/diagnose/options.hpp>
#include <nvscope/analyze/diagnosis.hpp>

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace nvscope {
inline namespace v1 {
namespace detail {
namespace diag {

struct chunk_grid {
  timestamp_ns begin = 0, end = 0;
  std::uint64_t size = 1;
  std::vector<std::uint64_t> used; // summed operation time per chunk

  // i < used.size(), so i * size < end - begin: no sum here passes `end` (any 64-bit window).
  timestamp_ns chunk_begin(std::size_t i) const noexcept { return begin + i * size; }
  timestamp_ns chunk_end(std::size_t i) const noexcept {
    const timestamp_ns b = chunk_begin(i);
    return end - b <= size ? end : b + size;
  }
};

// ceil(a / b) for b >= 1 without forming a + b - 1, which wraps for a window near 2^64.
constexpr std::uint64_t divide_up(std::uint64_t a, std::uint64_t b) noexcept { return a / b + (a % b != 0 ? 1 : 0); }

// The chunks' sums, an operation at a time (the diagnosis' walk of the timeline hands each
// over once). The operations come by start: the chunk of a start only moves forward, no
// division needed; most lie inside it (a compare and an add, its bounds kept while it lasts).
class chunk_sums {
 public:
  chunk_sums(const timeline& tl, std::uint32_t chunks) {
    g_.begin = tl.begin;
    g_.end = tl.end;
    const std::uint64_t n = std::max<std::uint32_t>(1, std::min<std::uint32_t>(chunks, 1000));
    const std::uint64_t window = tl.end > tl.begin ? tl.end - tl.begin : 0;
    g_.size = std::max<std::uint64_t>(1, divide_up(window, n));
    g_.used.assign(static_cast<std::size_t>(divide_up(window, g_.size)), 0);
    lo_ = g_.chunk_begin(0);
    hi_ = g_.chunk_end(0);
  }
  NVSCOPE_DETAIL_INLINE void take(const gpu_op& op) {
    if (op.start >= lo_ && op.end <= hi_ && op.end > op.start) { // inside chunk from_ (never so without chunks: lo_ == hi_)
      g_.used[from_] += op.end - op.start;
      return;
    }
    take_across(op);
  }
  chunk_grid&& grid() && { return std::move(g_); }

 private:
  // An operation past chunk from_'s bounds, or of no length: the chunks it reaches.
  NVSCOPE_DETAIL_COLD void take_across(const gpu_op& op) {
    if (op.end <= op.start || g_.used.empty()) return;
    if (op.start < lo_) from_ = static_cast<std::size_t>((op.start - g_.begin) / g_.size); // out of order
    while (from_ + 1 < g_.used.size() && g_.chunk_begin(from_ + 1) <= op.start) ++from_;
    lo_ = g_.chunk_begin(from_);
    hi_ = g_.chunk_end(from_);
    for (auto i = from_; i < g_.used.size() && g_.chunk_begin(i) < op.end; ++i) {
      const auto a = std::max(op.start, g_.chunk_begin(i));
      const auto b = std::min(op.end, g_.chunk_end(i));
      if (b > a) g_.used[i] += b - a;
    }
  }
  chunk_grid g_;
  std::size_t from_ = 0;
  timestamp_ns lo_ = 0, hi_ = 0; // chunk from_'s bounds
};

// The range holding most idle time inside [a, b).
inline std::uint32_t most_idle_range(const timeline& tl, const idle_breakdown& idle, timestamp_ns a, timestamp_ns b) {
  const auto& s = idle.stretches;
  auto it = std::lower_bound(s.begin(), s.end(), a, [](const idle_stretch& x, timestamp_ns v) {
    return x.start + x.duration <= v;
  });
  range_tally tally(*tl.t);
  for (; it != s.end() && it->start < b; ++it) {
    const auto lo = std::max(a, it->start);
    const auto hi = std::min(b, it->start + it->duration);
    if (hi > lo) tally.add(it->range, hi - lo);
  }
  const auto top = tally.top(1);
  return top.empty() ? diagnosis_none : top.front().range;
}

// `g`: the chunks' sums of tl's operations (chunk_sums, fed by the timeline's walk).
inline void utilization_rule(const timeline& tl, const idle_breakdown& idle, const diagnosis_options& o, rule_result& r,
                             const chunk_grid& g) {
  if (tl.ops.empty() || tl.end <= tl.begin) return finish_rule(r, o.rule_rows, false);
  const std::size_t n = g.used.size();
  auto low = [&](std::size_t i) {
    const auto len = static_cast<double>(g.chunk_end(i) - g.chunk_begin(i));
    return 100.0 * static_cast<double>(g.used[i]) < o.utilization_threshold_percent * len;
  };
  for (std::size_t i = 0; i < n;) {
    if (!low(i)) {
      ++i;
      continue;
    }
    std::size_t j = i;
    std::uint64_t used = 0;
    while (j < n && low(j)) used += g.used[j++];
    rule_row row;
    row.start = g.chunk_begin(i);
    row.duration = g.chunk_end(j - 1) - row.start;
    row.in_use_percent = 100.0 * static_cast<double>(used) / static_cast<double>(row.duration);
    row.range = most_idle_range(tl, idle, row.start, row.start + row.duration);
    r.rows.push_back(row);
    i = j;
  }
  finish_rule(r, o.rule_rows, false);
}

} // namespace diag
} // namespace detail
} // namespace v1
} // namespace nvscope

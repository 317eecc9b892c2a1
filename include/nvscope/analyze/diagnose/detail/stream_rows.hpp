// nvscope-target: nvscope
#pragma once

// HTA's per-stream idle rule (idle_time_breakdown), an operation at a time: the launch
// statistics' queue depths walk each stream's operations in the same order, and within
// `diagnose` they build the rows on that walk (idle.hpp's stream_rows, standalone, walks them
// again). Internal.

#include <nvscope/analyze/detail/inlining.hpp>
#include <nvscope/analyze/diagnose/detail/timeline.hpp>
#include <nvscope/analyze/diagnosis.hpp>

#include <algorithm>
#include <cstdint>

namespace nvscope {
inline namespace v1 {
namespace detail {
namespace diag {

// One stream's row from its operations in start order, `first` the first of them: between two
// consecutive ones, host wait when the next one's launch call began after the previous one
// ended, kernel wait when shorter than `kernel_wait_max_ns`, other otherwise. With no launch
// call known the gap is never host wait (HTA compares a missing runtime as false).
class stream_row_builder {
 public:
  stream_row_builder(const timeline& tl, const gpu_op& first, std::uint64_t kernel_wait_max_ns)
      : first_(first.start), prev_end_(first.start), kernel_wait_max_ns_(kernel_wait_max_ns) {
    row_.device = tl.device_of(first);
    row_.stream = tl.stream_of(first);
  }
  NVSCOPE_DETAIL_INLINE void take(const gpu_op& op) {
    if (op.start > prev_end_) {
      const auto gap = op.start - prev_end_;
      if (op.call_start > prev_end_) row_.host_wait_ns += gap; // call_start 0: unknown, never after
      else if (gap < kernel_wait_max_ns_) row_.kernel_wait_ns += gap;
      else row_.other_ns += gap;
    }
    row_.operations += 1;
    if (op.end > std::max(op.start, prev_end_)) row_.busy_ns += op.end - std::max(op.start, prev_end_);
    prev_end_ = std::max(prev_end_, op.end);
  }
  stream_idle_row finish() const noexcept {
    auto row = row_;
    row.idle_ns = (prev_end_ - first_) - row.busy_ns;
    return row;
  }

 private:
  stream_idle_row row_;
  timestamp_ns first_, prev_end_;
  std::uint64_t kernel_wait_max_ns_;
};

} // namespace diag
} // namespace detail
} // namespace v1
} // namespace nvscope

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
  row.record = op.index();
  row.call = tl.call_name(tl.correlation_of(op));
  row.range = tl.owner_of(op);
  row.thread = op.thread;
  row.stream = tl.stream_of(op);
  row.device = tl.device_of(op);
  return row;
}

// GPU busy time inside any [a, b] in log time: the window (first operation's start to the
// last one's end) less the idle stretches inside, from prefix sums over the stretches.
class busy_index {
 public:
  busy_index(const timeline& tl, const idle_breakdown& idle) : tl_(&tl), stretches_(&idle.stretches) {
    before_.reserve(stretches_->size() + 1);
    before_.push_back(0);
    for (const auto& st : *stretches_) before_.push_back(before_.back() + st.duration);
  }
  std::uint64_t busy(timestamp_ns a, timestamp_ns b) const noexcept { return b > a ? busy_until(b) - busy_until(a) : 0; }

 private:
  std::uint64_t idle_until(timestamp_ns x) const noexcept {
    const auto& s = *stretches_;
    const auto it = std::upper_bound(s.begin(), s.end(), x, [](timestamp_ns v, const idle_stretch& st) { return v < st.start; });
    const auto i = static_cast<std::size_t>(it - s.begin());
    if (i == 0) return 0;
    const auto& st = s[i - 1];
    return before_[i - 1] + (std::min(x, st.start + st.duration) - st.start);
  }
  std::uint64_t busy_until(timestamp_ns x) const noexcept {
    if (tl_->ops.empty() || x <= tl_->begin) return 0;
    x = std::min(x, tl_->end);
    return (x - tl_->begin) - idle_until(x);
  }

  const timeline* tl_;
  const decltype(idle_breakdown::stretches)* stretches_;
  scratch_vector<std::uint64_t> before_; // idle time of stretches[0..i)
};

} // namespace diag
} // namespace detail
} // namespace v1
} // namespace nvscope

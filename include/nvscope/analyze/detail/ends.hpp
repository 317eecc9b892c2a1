// nvscope-target: nvscope
#pragma once

// analyze/detail/ends.hpp: where the engine's passes take a trace and its ranges to end (the
// rule reference/common.hpp's trace_end and range_ends state, for the engine's own use).

#include <nvscope/trace.hpp>

#include <algorithm>
#include <vector>

namespace nvscope {
inline namespace v1 {
namespace detail {

// Where the trace ends: `finish` when set after `begin`, else the latest timestamp of any record.
inline timestamp_ns trace_end_of(const trace& t) noexcept {
  if (t.finish > t.begin && t.finish != 0) return t.finish;
  timestamp_ns m = 0;
  auto upd = [&m](timestamp_ns v) { m = v > m ? v : m; };
  for (const auto& r : t.ranges) { upd(r.start); upd(r.end); }
  for (const auto& k : t.kernels) upd(k.end);
  for (const auto& c : t.copies) upd(c.end);
  for (const auto& s : t.memsets) upd(s.end);
  for (const auto& s : t.syncs) upd(s.end);
  for (const auto& l : t.launches) upd(l.time);
  return m;
}

// A range's end as analysis uses it: unclosed ranges end at the trace end, a range that ends
// before it starts ends at its start.
inline std::vector<timestamp_ns> closed_range_ends(const trace& t, timestamp_ns trace_end) {
  std::vector<timestamp_ns> end(t.ranges.size());
  for (std::size_t i = 0; i < t.ranges.size(); ++i) {
    const auto& r = t.ranges[i];
    end[i] = r.end == 0 ? std::max(trace_end, r.start) : std::max(r.end, r.start);
  }
  return end;
}

} // namespace detail
} // namespace v1
} // namespace nvscope

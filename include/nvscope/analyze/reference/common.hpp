// nvscope-target: nvscope
#pragma once

/// \file analyze/reference/common.hpp
/// The plain definitions every reference table starts from: a record's launch, range ends,
/// nesting, the ranges enclosing a launch, and nsys's statistics. Written for a reader who
/// checks a figure against nsys: std containers, loops and `std::sort`, quadratic where that is
/// clearer. Not included by `analysis.hpp`; `tests/analyze/reference_test.cpp` holds the fast
/// passes equal to these on every build.
///
/// \code
///   #include <nvscope/analyze/reference/common.hpp>
///   auto ends = nvscope::reference::range_ends(t);
///   auto l = nvscope::reference::launch_of(t, t.kernels[0].correlation);
/// \endcode

#include <nvscope/analyze/report.hpp>
#include <nvscope/trace.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

namespace nvscope {
inline namespace v1 {
namespace reference {

/// A GPU record or sync counts only with an end, not before its start (nsys leaves rows
/// without an end out of every report).
inline bool valid(timestamp_ns start, timestamp_ns end) { return end != 0 && end >= start; }

/// Where the trace ends: `finish` when the collector set it after `begin`, else the latest
/// timestamp of any record.
inline timestamp_ns trace_end(const trace& t) {
  if (t.finish != 0 && t.finish > t.begin) return t.finish;
  timestamp_ns last = 0;
  for (const auto& r : t.ranges) last = std::max({last, r.start, r.end});
  for (const auto& k : t.kernels) last = std::max(last, k.end);
  for (const auto& c : t.copies) last = std::max(last, c.end);
  for (const auto& s : t.memsets) last = std::max(last, s.end);
  for (const auto& s : t.syncs) last = std::max(last, s.end);
  for (const auto& l : t.launches) last = std::max(last, l.time);
  return last;
}

/// Each range's end as every report reads it: a range never closed ends at the trace's end
/// (nsys closes it at its last timestamp), one that ends before it starts ends at its start.
inline std::vector<timestamp_ns> range_ends(const trace& t) {
  const timestamp_ns last = trace_end(t);
  std::vector<timestamp_ns> end;
  for (const auto& r : t.ranges) end.push_back(r.end == 0 ? std::max(last, r.start) : std::max(r.end, r.start));
  return end;
}

/// The launch of a GPU record: the first launch record with its correlation id (nsys joins
/// `CUPTI_ACTIVITY_KIND_RUNTIME` to the GPU tables on `correlationId`), or `no_index`.
inline std::uint32_t launch_of(const trace& t, std::uint32_t correlation) {
  for (std::uint32_t l = 0; l < t.launches.size(); ++l)
    if (t.launches[l].correlation == correlation) return l;
  return no_index;
}

/// The order push/pop ranges of one thread nest in: by start, the longer first, then by record.
inline bool nests_before(const trace& t, const std::vector<timestamp_ns>& end, std::uint32_t a, std::uint32_t b) {
  return std::make_tuple(t.ranges[a].start, ~end[a], a) < std::make_tuple(t.ranges[b].start, ~end[b], b);
}

/// The innermost push/pop range of `thread` open at `time` (start <= time <= end), or
/// `no_index`: of all that are, the last in `nests_before` order.
inline std::uint32_t innermost_at(const trace& t, const std::vector<timestamp_ns>& end, std::uint32_t thread, timestamp_ns time) {
  std::uint32_t best = no_index;
  for (std::uint32_t q = 0; q < t.ranges.size(); ++q) {
    const auto& r = t.ranges[q];
    if (r.is_mark || !r.is_push_pop || r.thread != thread || r.start > time || end[q] < time) continue;
    if (best == no_index || nests_before(t, end, best, q)) best = q;
  }
  return best;
}

/// The innermost push/pop range launch `l` is credited to under `rule`: the innermost open on
/// its thread at the launch (`innermost_at`, nsys's rule); under `attribution_rule::process`,
/// when its thread has none, the innermost open then on the one other thread that has any
/// (none when several threads or none have one).
inline std::uint32_t credited_owner(const trace& t, const std::vector<timestamp_ns>& end, std::uint32_t l, attribution_rule rule) {
  const auto& launch = t.launches[l];
  const auto own = innermost_at(t, end, launch.thread, launch.time);
  if (own != no_index || rule == attribution_rule::thread) return own;
  std::uint32_t found = no_index, threads_open = 0;
  std::vector<std::uint32_t> seen;
  for (const auto& r : t.ranges) {
    if (r.is_mark || !r.is_push_pop || r.thread == launch.thread) continue;
    if (std::find(seen.begin(), seen.end(), r.thread) != seen.end()) continue;
    seen.push_back(r.thread);
    const auto inner = innermost_at(t, end, r.thread, launch.time);
    if (inner == no_index) continue;
    ++threads_open;
    found = inner;
  }
  return threads_open == 1 ? found : no_index;
}

/// How ranges nest: per range, its parent (the innermost push/pop range of its thread that
/// contains it and comes before it in `nests_before` order; for a mark, the innermost range
/// open at its time) and its depth (how many ancestors, at most 65,535). Start/end ranges
/// never nest.
struct nesting {
  std::vector<std::uint32_t> parent;
  std::vector<std::uint16_t> depth;
};

inline nesting nest(const trace& t, const std::vector<timestamp_ns>& end) {
  const auto n = static_cast<std::uint32_t>(t.ranges.size());
  nesting out{std::vector<std::uint32_t>(n, no_index), std::vector<std::uint16_t>(n, 0)};
  for (std::uint32_t r = 0; r < n; ++r) {
    const auto& range = t.ranges[r];
    if (range.is_mark) {
      out.parent[r] = innermost_at(t, end, range.thread, range.start);
      continue;
    }
    if (!range.is_push_pop) continue;
    for (std::uint32_t q = 0; q < n; ++q) {
      const auto& up = t.ranges[q];
      if (up.is_mark || !up.is_push_pop || up.thread != range.thread || end[q] < end[r] || !nests_before(t, end, q, r)) continue;
      if (out.parent[r] == no_index || nests_before(t, end, out.parent[r], q)) out.parent[r] = q;
    }
  }
  for (std::uint32_t r = 0; r < n; ++r) {
    std::uint64_t d = 0;
    for (auto up = out.parent[r]; up != no_index; up = out.parent[up]) ++d;
    out.depth[r] = static_cast<std::uint16_t>(std::min<std::uint64_t>(d, 0xffff));
  }
  return out;
}

/// Whether start/end range `r` takes launches of its opening thread under `rule`: nsys keeps
/// only ranges ended on the thread that opened them (`endGlobalTid` empty); an unclosed one
/// is kept.
inline bool takes_launches(const range_record& r, start_end_rule rule) {
  return rule == start_end_rule::opening_thread || r.end == 0 || r.closing_thread() == r.thread;
}

/// The ranges enclosing launch `l` on its thread: the push/pop stack from the innermost range
/// (`credited_owner` under `credit`) outwards, then every start/end range of that thread open at the launch (start <= time <=
/// end) that `takes_launches`, in record order.
inline std::vector<std::uint32_t> enclosing(const trace& t, const std::vector<timestamp_ns>& end, const nesting& n, std::uint32_t l,
                                            start_end_rule rule, attribution_rule credit = attribution_rule::thread) {
  std::vector<std::uint32_t> out;
  const auto& launch = t.launches[l];
  for (auto r = credited_owner(t, end, l, credit); r != no_index; r = n.parent[r]) out.push_back(r);
  for (std::uint32_t r = 0; r < t.ranges.size(); ++r) {
    const auto& range = t.ranges[r];
    if (!range.is_mark && !range.is_push_pop && range.thread == launch.thread && range.start <= launch.time && launch.time <= end[r] &&
        takes_launches(range, rule))
      out.push_back(r);
  }
  return out;
}

/// nsys's statistics of a column (`reports/_sqlfile` helpers of `nsys stats`: `median()` the
/// mean of the two middle values of an even count, `stdev()` the sample deviation, dividing by
/// n - 1, and 0 for one value). The deviations are summed in the values' given order.
inline duration_stats stats(std::vector<std::uint64_t> values) {
  duration_stats s;
  if (values.empty()) return s;
  s.count = values.size();
  for (const auto v : values) s.total += v;
  s.average = static_cast<double>(s.total) / static_cast<double>(s.count);
  double m2 = 0.0;
  for (const auto v : values) m2 += (static_cast<double>(v) - s.average) * (static_cast<double>(v) - s.average);
  s.stddev = s.count > 1 ? std::sqrt(m2 / static_cast<double>(s.count - 1)) : 0.0;
  std::sort(values.begin(), values.end());
  s.min = values.front();
  s.max = values.back();
  const auto n = values.size();
  s.median = n % 2 ? static_cast<double>(values[n / 2]) : (static_cast<double>(values[n / 2 - 1]) + static_cast<double>(values[n / 2])) / 2.0;
  return s;
}

/// The p-quantile by nearest rank (the smallest value with at least p of the values at or
/// below it), as the gap and launch figures take it; 0 for no values.
inline double nearest_rank(std::vector<std::uint64_t> values, double p) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const auto rank = static_cast<std::size_t>(std::ceil(p * static_cast<double>(values.size())));
  return static_cast<double>(values[std::min(std::max<std::size_t>(rank, 1), values.size()) - 1]);
}

/// A row's share of its table's total, in percent (nsys: `100 * total / sum(total)`), 0 when
/// the table's total is 0.
inline double percent(std::uint64_t part, std::uint64_t whole) {
  return whole ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

/// The label nsys prints for a range: `domain:name`, `:name` in the default domain
/// (`reports/nvtx_sum.py`: `coalesce(domain, '') || ':' || text`).
inline std::string label(const trace& t, const range_record& r) {
  return std::string(r.domain ? t.strings[r.domain] : std::string_view{}) + ":" + std::string(t.strings[r.name]);
}

} // namespace reference
} // namespace v1
} // namespace nvscope

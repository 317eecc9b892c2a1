// nvscope-target: nvscope
#pragma once

/// \file analyze/diagnose/launches.hpp
/// Launch statistics per kernel name, as Holistic Trace Analysis defines them
/// (cuda_kernel_launch_stats): the CPU launch-call duration, the launch delay (GPU start minus
/// the end of the launch call), short kernels (GPU time shorter than their launch call),
/// call and delay outliers (HTA's runtime_cutoff 50 and launch_delay_cutoff 100, in
/// microseconds), duration outliers (Tukey), and
/// the queue depth at each launch (operations of the stream launched and not yet ended).
/// Call durations come from the trace's API records; without them each launch record is a
/// call of zero length and the short-kernel test uses `assumed_launch_ns`. Linear: every
/// name's columns filled in one pass over the operations in start order, medians and
/// percentiles read in place by histograms (values_at_ranks); a stream's launches are sorted only
/// where they are out of order. A name's kernel median and duration outliers are read off the
/// samples' sorted durations of that name (the same values, not selected twice; called alone,
/// the samples are taken first); where every name's are, no column of durations is kept.
///
/// \code
///   nvscope::launch_overview l = nvscope::launch_statistics(t, nvscope::attribute(t));
///   for (const auto& k : l.kernels) std::printf("%llu short\n", (unsigned long long)k.short_kernels);
/// \endcode

#include <nvscope/analyze/detail/inlining.hpp>
#include <nvscope/analyze/diagnose/detail/stream_rows.hpp>
#include <nvscope/analyze/diagnose/detail/timeline.hpp>
#include <nvscope/analyze/diagnose/options.hpp>
#include <nvscope/analyze/diagnose/samples.hpp>
#include <nvscope/analyze/diagnosis.hpp>
#include <nvscope/analyze/intervals.hpp>
#include <nvscope/analyze/stats.hpp>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <numeric>
#include <utility>
#include <vector>

namespace nvscope {
inline namespace v1 {
namespace detail {
namespace diag {

// Queue depth at each operation's launch, by op index; unset where the launch time is unknown
// (call_start 0: read only where it is known, so no column per operation filled first). Per
// stream, the launched operations in launch order: read where they lie when the stream
// launched them in start order (as a collector's streams mostly are), else (the first
// launch out of order undone) read into a compact list and sorted. `counts`: the launched
// operations by depth (a depth is at most one more than the stream's last, so the table grows
// a row at a time, never past the operations). Each stream's HTA idle row is made on the same
// walk (stream_row_builder: idle_time_of takes them, not a second walk of every operation
// through the grouping).
struct launch_queues {
  scratch_column<std::uint32_t> depth;
  std::vector<std::uint64_t> counts; // counts[d]: launched operations at depth d
  std::vector<stream_idle_row> streams; // one per stream, in the timeline's stream order
};

// One stream's launches at a time, in launch order: each one's depth found and counted (HTA's
// queue length: launched earlier, not ended yet). Call starts only grow in launch order, so an
// end a launch passed stays passed. The pending ends are two sets: an ascending run in `ends`
// (ends_[done_, n_ends_): an end not before the run's last joins it, and passed ends leave from
// its front) and a min-heap `early_` of the ends that came before the run's last (a stream's
// kernels mostly end in launch order, so it is mostly empty). Each end joins and leaves once:
// linear where ends come in launch order, n log n at worst.
class depth_counter {
 public:
  depth_counter(launch_queues& q, timestamp_ns* ends) : counts_(q.counts), depth_(q.depth.data()), ends_(ends) {}
  void restart() noexcept { // a stream's first launch next
    done_ = n_ends_ = 0;
    early_.clear();
  }
  NVSCOPE_DETAIL_INLINE void place(timestamp_ns call_start, timestamp_ns end, std::uint32_t at) {
    while (done_ < n_ends_ && ends_[done_] <= call_start) ++done_;
    if (!early_.empty()) pass_early(call_start);
    const auto d = static_cast<std::uint32_t>(n_ends_ - done_ + early_.size());
    depth_[at] = d;
    if (d == counts_.size()) counts_.push_back(0);
    ++counts_[d];
    if (done_ == n_ends_ || ends_[n_ends_ - 1] <= end) {
      ends_[n_ends_++] = end;
    } else {
      early_.push_back(end);
      std::push_heap(early_.begin(), early_.end(), std::greater<timestamp_ns>());
    }
  }

 private:
  void pass_early(timestamp_ns call_start) {
    const auto later = std::greater<timestamp_ns>();
    while (!early_.empty() && early_.front() <= call_start) {
      std::pop_heap(early_.begin(), early_.end(), later);
      early_.pop_back();
    }
  }
  std::vector<std::uint64_t>& counts_;
  std::uint32_t* depth_;
  timestamp_ns* ends_;
  std::size_t done_ = 0, n_ends_ = 0;
  std::vector<timestamp_ns> early_;
};

// The launches of one stream's operations [first, last) (in start order) placed while they come
// in launch order; returns the first out of order (last: none). Every operation is taken into
// `row`, past the first out of order too.
NVSCOPE_DETAIL_INLINE const std::uint32_t* place_in_order(const timeline& tl, const std::uint32_t* first, const std::uint32_t* last,
                                                          depth_counter& depths, stream_row_builder& row) {
  const std::uint32_t* out_of_order = last;
  timestamp_ns latest = 0;
  for (auto i = first; i != last; ++i) {
    const gpu_op& op = tl.ops[*i];
    row.take(op);
    if (op.call_start == 0 || out_of_order != last) continue;
    if (op.call_start < latest) {
      out_of_order = i;
      continue;
    }
    latest = op.call_start;
    depths.place(op.call_start, op.end, *i);
  }
  return out_of_order;
}

inline launch_queues queue_depths(const timeline& tl, const diagnosis_options& o) {
  struct launched_op {
    timestamp_ns call_start, end;
    std::uint32_t place; // in tl.ops
  };
  launch_queues q;
  q.depth.resize(tl.ops.size()); // unset: each launched operation's written below
  scratch_vector<launched_op> launched;
  std::size_t longest = 0; // the longest stream's operations: one array, not a doubling series
  for (std::size_t s = 0; s < tl.by_stream.size(); ++s) longest = std::max<std::size_t>(longest, tl.by_stream.end(s) - tl.by_stream.begin(s));
  scratch_column<timestamp_ns> running(longest); // one stream's ascending run of pending ends (each written before it is read)
  depth_counter depths(q, running.data());
  q.streams.reserve(tl.by_stream.size());
  for (std::size_t s = 0; s < tl.by_stream.size(); ++s) {
    const std::uint32_t *const first = tl.by_stream.begin(s), *const last = tl.by_stream.end(s);
    depths.restart();
    stream_row_builder row(tl, tl.ops[*first], o.kernel_wait_max_ns);
    const std::uint32_t* const out_of_order = place_in_order(tl, first, last, depths, row);
    q.streams.push_back(row.finish());
    if (out_of_order == last) continue;
    for (auto j = first; j != out_of_order; ++j) // out of launch order: the stream again, sorted
      if (tl.ops[*j].call_start != 0) --q.counts[q.depth[*j]]; // placed above
    launched.clear();
    launched.reserve(longest); // at the first stream out of order: one array for all of them
    for (auto j = first; j != last; ++j) {
      const gpu_op& op = tl.ops[*j];
      if (op.call_start != 0) launched.push_back({op.call_start, op.end, *j});
    }
    std::stable_sort(launched.begin(), launched.end(), [](const launched_op& x, const launched_op& y) { return x.call_start < y.call_start; });
    depths.restart();
    for (const auto& op : launched) depths.place(op.call_start, op.end, op.place);
  }
  return q;
}

// The median (mean of the two middle values for an even count) and maximum of the values that
// `counts` tallies (counts[v]: how many are v), as figures_of gives them.
template <class Counts>
column_figures figures_of_counts(const Counts* counts, std::size_t values) noexcept {
  column_figures f;
  std::uint64_t n = 0;
  for (std::size_t v = 0; v < values; ++v)
    if (counts[v] != 0) n += counts[v], f.max = v;
  if (n == 0) return f;
  const std::uint64_t low = (n - 1) / 2, high = n / 2; // 0-based ranks of the middle values
  std::uint64_t below = 0;
  double low_value = 0.0;
  for (std::size_t v = 0;; ++v) {
    if (below <= low && low < below + counts[v]) low_value = static_cast<double>(v);
    below += counts[v];
    if (high < below) {
      f.median = (low_value + static_cast<double>(v)) / 2.0;
      return f;
    }
  }
}

// A column's median, nearest-rank quantiles at `ps` and maximum (quantiles_of), read in place.
template <class T>
column_figures figures_of(const T* v, std::size_t n, std::initializer_list<double> ps) {
  return quantiles_of(v, v + n, ps);
}

// figures_of of a column whose extremes are known (quantiles_of finds them again).
inline column_figures figures_of(const std::uint64_t* v, std::size_t n, std::initializer_list<double> ps, const interval&) noexcept {
  return quantiles_of(v, v + n, ps);
}

// The distributions of every name's kernels, each name's values together in each column
// (name p's from offset[p]) with their extremes, filled in one pass over the operations in
// start order. Queue depths: per name a row of counts by depth (`queue_width` of them) where
// that table is no larger than the launched operations (or 64 Ki counts), else a column.
struct launch_columns {
  scratch_vector<std::uint32_t> offset;
  scratch_column<std::uint64_t> calls, delays, durations; // of name p's places, the first with_call, launched[p], launches written (durations: empty where every name's figures are known)
  std::vector<interval> call_span, delay_span, duration_span; // per name: extremes ({~0, 0} for none)
  scratch_column<std::uint32_t> queue;
  scratch_vector<std::uint32_t> launched; // per name, operations with a launch time
  scratch_vector<std::uint32_t> queue_counts;    // name p's depth d: queue_counts[p * queue_width + d]
  std::size_t queue_width = 0;                   // 0: the depths are in `queue`
};

inline std::uint64_t call_ns(const timeline& tl, std::size_t i) noexcept { return tl.call_end(i) - tl.ops[i].call_start; }
inline std::uint64_t delay_ns(const timeline& tl, std::size_t i) noexcept {
  const auto call_end = tl.call_end(i);
  return tl.ops[i].start > call_end ? tl.ops[i].start - call_end : 0;
}

// One pass over the kernels: every row's counts and every name's columns.
// `place`: each kernel name number's row (its name's rank among the names); `durations`:
// whether the durations' column is wanted (not where every name's figures are known).
inline void gather_launches(const timeline& tl, const std::vector<std::uint32_t>& place, const launch_queues& q, const diagnosis_options& o,
                            std::vector<launch_stats_row>& rows, launch_columns& c, bool durations) {
  const auto ng = place.size();
  c.offset.assign(ng + 1, 0);
  for (std::size_t n = 0; n < ng; ++n) c.offset[place[n] + 1] = tl.name_ops[n]; // counted by the timeline
  for (std::size_t p = 0; p < ng; ++p) c.offset[p + 1] += c.offset[p];
  c.delays.resize(c.offset[ng]);
  if (durations) c.durations.resize(c.offset[ng]); // else every name's figures are known: no pages for them
  if (tl.any_call) c.calls.resize(c.offset[ng]); // else no operation has a call's duration: no pages for it
  for (auto* v : {&c.call_span, &c.delay_span, &c.duration_span}) v->assign(ng, {~std::uint64_t{0}, 0});
  const std::size_t width = q.counts.size(); // deepest + 1
  const std::uint64_t launched = std::accumulate(q.counts.begin(), q.counts.end(), std::uint64_t{0});
  if (ng != 0 && width <= std::max<std::uint64_t>(launched, std::uint64_t{1} << 16) / ng) {
    c.queue_width = width;
    c.queue_counts.assign(ng * width, 0);
  } else {
    c.queue_width = 0;
    c.queue.resize(c.offset[ng]);
  }
  c.launched.assign(ng, 0);
  const std::uint32_t *const depth = q.depth.data(), *const name_of = tl.names.data(), *const place_of = place.data(), *const offset = c.offset.data();
  std::uint32_t* const launched_of = c.launched.data();
  std::uint64_t *const duration_col = c.durations.data(), *const call_col = c.calls.data(), *const delay_col = c.delays.data();
  std::uint32_t *const queue_counts = c.queue_counts.data(), *const queue_col = c.queue.data();
  interval *const duration_span = c.duration_span.data(), *const call_span = c.call_span.data(), *const delay_span = c.delay_span.data();
  const std::size_t queue_width = c.queue_width, ops = tl.ops.size();
  const gpu_op* const op_at = tl.ops.data();
  launch_stats_row* const row_of = rows.data();
  for (std::size_t i = 0; i < ops; ++i) {
    const auto n = name_of[i];
    if (n == timeline::no_name) continue;
    const auto p = place_of[n];
    const gpu_op& op = op_at[i];
    auto& row = row_of[p];
    const std::uint64_t dur = op.end - op.start;
    if (durations) {
      duration_col[offset[p] + row.launches] = dur;
      widen(duration_span[p], {dur, dur});
    }
    ++row.launches;
    row.kernel_total_ns += dur;
    if (op.call_start == 0) continue;
    const bool has_call = op.has_call();
    const auto call = has_call ? call_ns(tl, i) : 0, delay = delay_ns(tl, i);
    if (has_call) {
      call_col[offset[p] + row.with_call++] = call;
      widen(call_span[p], {call, call});
    }
    const auto at = offset[p] + launched_of[p]++;
    delay_col[at] = delay;
    widen(delay_span[p], {delay, delay});
    if (queue_width != 0) ++queue_counts[p * queue_width + depth[i]];
    else queue_col[at] = depth[i];
    row.short_kernels += dur < (has_call ? call : o.assumed_launch_ns);
    row.call_outliers += has_call && call > o.call_outlier_ns;
    row.delay_outliers += delay > o.delay_outlier_ns;
  }
}

// A column from row `at`, or null where it holds nothing from there (an empty vector's data()
// is null, and null + at is undefined even when nothing is read: found by tests/fuzz/trace).
template <class Column>
auto column_from(const Column& v, std::size_t at) noexcept -> decltype(v.data()) {
  return at < v.size() ? v.data() + at : nullptr;
}

// Name p's medians, percentiles and outliers, each column read in place (figures_of); the
// durations' median and outliers taken from `known` where the samples sorted the name's run
// (null: a name the samples group with others, or an id past the string table).
inline void finish_row(std::size_t p, const launch_columns& c, launch_stats_row& row, const sorted_duration_figures* known) {
  const auto at = c.offset[p];
  const auto calls = figures_of(row.with_call ? column_from(c.calls, at) : nullptr, static_cast<std::size_t>(row.with_call), {0.9}, c.call_span[p]);
  const auto delays = figures_of(column_from(c.delays, at), c.launched[p], {0.9}, c.delay_span[p]);
  const auto queue = c.queue_width != 0 ? figures_of_counts(c.queue_counts.data() + p * c.queue_width, c.queue_width)
                                        : figures_of(column_from(c.queue, at), c.launched[p], {});
  row.call_median_ns = calls.median;
  row.call_p90_ns = calls.quantiles[0];
  row.delay_median_ns = delays.median;
  row.delay_p90_ns = delays.quantiles[0];
  row.delay_max_ns = delays.max;
  if (known) {
    row.kernel_median_ns = known->median;
    row.duration_outliers = known->above_fence;
  } else {
    const std::uint64_t* durations = column_from(c.durations, at);
    const auto kernel = figures_of(durations, static_cast<std::size_t>(row.launches), {0.25, 0.75}, c.duration_span[p]);
    row.kernel_median_ns = kernel.median;
    const double q1 = kernel.quantiles[0], q3 = kernel.quantiles[1], fence = q3 + 1.5 * (q3 - q1); // Tukey's, as upper_fence
    if (static_cast<double>(c.duration_span[p].second) > fence) // else none lies above it
      for (std::uint64_t i = 0; i < row.launches; ++i) row.duration_outliers += static_cast<double>(durations[i]) > fence;
  }
  row.queue_median = queue.median;
  row.queue_max = queue.max;
}

// `known`: the durations' figures by name id that the samples read off their sorted runs
// (samples_of). `streams`: each stream's HTA idle row, made on the queue depths' walk (for
// idle_time_of).
inline launch_overview launch_statistics_of(const timeline& tl, const diagnosis_options& o, const known_duration_figures& known,
                                            std::vector<stream_idle_row>& streams) {
  launch_overview out;
  auto queue = queue_depths(tl, o);
  streams = std::move(queue.streams);
  out.call_durations_from_api = tl.any_call;
  // Kernels by name, a row per name in name order: the timeline numbered the names as they came
  // and counted each one's operations, so a row is the rank of a number's name (no pass that
  // reads every operation for its name).
  std::vector<std::uint64_t> names(tl.kernel_names.begin(), tl.kernel_names.end());
  const auto place = key_places(names); // names now in order
  out.kernels.resize(names.size());
  std::vector<const sorted_duration_figures*> known_of(names.size(), nullptr); // by row
  bool all_known = true;
  for (std::size_t p = 0; p < names.size(); ++p) {
    const auto it = std::lower_bound(known.begin(), known.end(), names[p], [](const sorted_duration_figures& f, std::uint64_t n) { return f.name < n; });
    if (it != known.end() && it->name == names[p]) known_of[p] = &*it;
    all_known = all_known && known_of[p] != nullptr;
  }
  launch_columns columns;
  gather_launches(tl, place, queue, o, out.kernels, columns, !all_known);
  for (std::size_t p = 0; p < out.kernels.size(); ++p) {
    auto& row = out.kernels[p];
    row.name = static_cast<string_id>(names[p]);
    finish_row(p, columns, row, known_of[p]);
    out.launches += row.launches;
    out.short_kernels += row.short_kernels;
  }
  columns = {};
  std::sort(out.kernels.begin(), out.kernels.end(), [](const launch_stats_row& x, const launch_stats_row& y) {
    return x.launches != y.launches ? x.launches > y.launches : x.name < y.name;
  });
  const auto depths = figures_of_counts(queue.counts.data(), queue.counts.size()); // every launched operation's depth
  out.queue_median = depths.median;
  out.queue_max = depths.max;
  return out;
}

} // namespace diag
} // namespace detail

/// Launch statistics of every kernel name in `t` (see the file comment): as `diagnose` makes
/// them, the kernels' duration figures read off the samples' sorted runs.
inline launch_overview launch_statistics(const trace& t, const attribution& a, const diagnosis_options& o = {}) {
  detail::diag::known_duration_figures durations;
  auto runs = detail::diag::runs_of(t, a, o.window);
  detail::diag::samples_of(t, a, o, durations, runs);
  std::vector<stream_idle_row> streams;
  return detail::diag::launch_statistics_of(detail::diag::build_timeline(t, a, o.window), o, durations, streams);
}

} // namespace v1
} // namespace nvscope

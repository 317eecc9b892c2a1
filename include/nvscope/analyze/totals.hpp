// nvscope-target: nvscope
#pragma once

/// \file analyze/totals.hpp
/// Running totals that merge: what a long run keeps of the records it does not keep raw.
/// Per kernel name and per range group (domain, name and style, as nsys groups `nvtx_sum`'s
/// rows) a `duration_sketch` (count, sum, min and max exact; quantiles within its relative
/// error), one for the step ranges' wall times, and for the run the kernel, copy, memset and
/// sync counts and summed durations and every loss count.
///
/// `fold` adds a trace's records, counted as the summaries count them
/// (a GPU record or sync only with a valid end; a range's end as reference/common.hpp's
/// `range_ends` states it, unclosed ones at the trace's end; marks left out). `merge` combines
/// totals of two windows, processes or ranks into those of their union: keys are names
/// (strings), never a trace's string ids, which differ from trace to trace. Folding a trace
/// in pieces and merging equals folding it whole, bucket for bucket.
///
/// Memory: one sketch a distinct kernel name and range group, plus one: each at most
/// `duration_sketch::max_buckets` buckets of 8 bytes and its key's strings, whatever the count
/// of records folded.
///
/// \code
///   nvscope::totals all;
///   nvscope::fold(window_trace, all);                 // any number of times
///   nvscope::merge(all, other_rank_totals);
///   for (const auto& row : nvscope::kernel_rows(all)) std::printf("%s %llu\n", row.name.c_str(), (unsigned long long)row.time.count);
/// \endcode

#include <nvscope/analyze/detail/ends.hpp>
#include <nvscope/analyze/intervals.hpp>
#include <nvscope/analyze/report.hpp>
#include <nvscope/analyze/sketch.hpp>
#include <nvscope/trace/totals.hpp>
#include <nvscope/trace.hpp>

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <vector>

namespace nvscope {
inline namespace v1 {

/// What `fold` reads besides the trace.
/// \code
///   nvscope::fold_options o;
///   o.steps = nvscope::step_ranges(t, {});   // analyze/step_names.hpp: the step rule
/// \endcode
struct fold_options {
  name_form kernel_names = name_form::demangled;
  /// Per range of the trace, non-zero for a step range (as `step_ranges` returns them); empty:
  /// no steps.
  std::vector<char> steps;
};

namespace detail {

// The sketch of each string id, found once per id (every id past the table is one: they all
// read `<unknown>`): an array over the ids where the table is not much larger than the records
// folded (a whole trace), else a hash table (a small buffer against a large table).
class sketch_by_id {
 public:
  sketch_by_id(std::size_t ids, std::size_t records) : ids_(ids), dense_(ids <= 2 * records + 1024 ? ids + 1 : 0, nullptr) {}
  template <class Find>
  duration_sketch& of(string_id id, Find find) {
    const auto key = std::min<std::size_t>(id, ids_);
    auto& s = dense_.empty() ? sparse_[key] : dense_[key];
    if (!s) s = &find();
    return *s;
  }

 private:
  std::size_t ids_;
  std::vector<duration_sketch*> dense_;
  std::unordered_map<std::size_t, duration_sketch*> sparse_;
};

// Each kernel's duration into its name's sketch.
inline void fold_kernels(const trace& t, totals& into, name_form form) {
  sketch_by_id by_id(t.strings.size(), t.kernels.size());
  for (const auto& k : t.kernels) {
    if (!detail::valid_interval(k.start, k.end)) {
      ++into.run.incomplete_found;
      continue;
    }
    by_id.of(k.name, [&]() -> duration_sketch& { return into.kernels[std::string(kernel_name(t, k.name, form))]; }).add(k.end - k.start);
    ++into.run.kernels;
    into.run.kernel_ns += k.end - k.start;
  }
}

// Each range's host time into its group's sketch, and each step range's into `steps`.
inline void fold_ranges(const trace& t, totals& into, const std::vector<char>& steps) {
  const auto end = detail::closed_range_ends(t, detail::trace_end_of(t));
  std::unordered_map<std::uint64_t, duration_sketch*> by_ids[2]; // per style: (domain, name) ids
  for (std::size_t i = 0; i < t.ranges.size(); ++i) {
    const auto& r = t.ranges[i];
    if (r.is_mark) continue;
    auto& s = by_ids[r.is_push_pop][(std::uint64_t{r.domain} << 32) | r.name];
    if (!s) s = &into.ranges[range_key{std::string(r.domain ? t.strings[r.domain] : std::string_view{}), std::string(t.strings[r.name]), r.is_push_pop}];
    s->add(end[i] - r.start);
    if (i < steps.size() && steps[i]) into.steps.add(end[i] - r.start);
    ++into.run.ranges;
    into.run.unclosed_found += r.end == 0;
  }
}

// Count and summed duration of the valid records of one kind.
template <class Record>
void fold_records(const std::vector<Record>& records, std::uint64_t& count, std::uint64_t& ns, std::uint64_t& incomplete) {
  for (const auto& r : records) {
    if (!detail::valid_interval(r.start, r.end)) {
      ++incomplete;
      continue;
    }
    ++count;
    ns += r.end - r.start;
  }
}

// A row's share of its table's total, in percent; 0 when the total is 0.
inline double share_percent(std::uint64_t part, std::uint64_t whole) noexcept {
  return whole ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

} // namespace detail

/// Adds `t`'s records to `into`.
/// \code
///   nvscope::fold(t, all);
/// \endcode
inline void fold(const trace& t, totals& into, const fold_options& options = {}) {
  detail::fold_kernels(t, into, options.kernel_names);
  detail::fold_ranges(t, into, options.steps);
  auto& run = into.run;
  detail::fold_records(t.copies, run.copies, run.copy_ns, run.incomplete_found);
  detail::fold_records(t.memsets, run.memsets, run.memset_ns, run.incomplete_found);
  detail::fold_records(t.syncs, run.syncs, run.sync_ns, run.incomplete_found);
  add_losses(run.lost, t.lost);
}

/// A sketch's figures as a summary row's: count, total, min, max and average exact, the median
/// the sketch's (within `duration_sketch::relative_error`), no standard deviation (0: totals
/// keep none).
inline duration_stats stats_of(const duration_sketch& s) {
  duration_stats d;
  d.count = s.count();
  d.total = s.sum();
  d.min = s.min();
  d.max = s.max();
  d.average = s.average();
  d.median = s.median();
  return d;
}

/// Rows made from totals: `cuda_gpu_kern_sum`'s and `nvtx_sum`'s, in their order.
struct totals_rows {
  std::vector<kernel_summary_row> kernels;
  std::vector<range_summary_row> ranges;
  bool medians_approximate = true; ///< medians are the sketches', within `median_relative_error`
  double median_relative_error = duration_sketch::relative_error;
  bool stddev_kept = false;        ///< `time.stddev` is 0 in every row
};

/// The kernel rows: total descending, then instances, then name (as `cuda_gpu_kern_sum`).
inline std::vector<kernel_summary_row> kernel_rows(const totals& all) {
  std::vector<kernel_summary_row> rows;
  std::uint64_t whole = 0;
  for (const auto& [name, s] : all.kernels) {
    rows.push_back({0.0, stats_of(s), name});
    whole += rows.back().time.total;
  }
  for (auto& r : rows) r.time_percent = detail::share_percent(r.time.total, whole);
  std::sort(rows.begin(), rows.end(), [](const kernel_summary_row& a, const kernel_summary_row& b) {
    return std::make_tuple(~a.time.total, a.time.count, a.name) < std::make_tuple(~b.time.total, b.time.count, b.name);
  });
  return rows;
}

/// The range rows: total descending, then instances, label, style (as `nvtx_sum`).
inline std::vector<range_summary_row> range_rows(const totals& all) {
  std::vector<range_summary_row> rows;
  std::uint64_t whole = 0;
  for (const auto& [key, s] : all.ranges) {
    rows.push_back({0.0, stats_of(s), key.push_pop ? "PushPop" : "StartEnd", key.domain + ":" + key.name, key.name});
    whole += rows.back().time.total;
  }
  for (auto& r : rows) r.time_percent = detail::share_percent(r.time.total, whole);
  std::sort(rows.begin(), rows.end(), [](const range_summary_row& a, const range_summary_row& b) {
    return std::make_tuple(~a.time.total, a.time.count, a.range, a.style) < std::make_tuple(~b.time.total, b.time.count, b.range, b.style);
  });
  return rows;
}

/// Both tables of `all`, with what is approximate in them.
/// \code
///   auto rows = nvscope::rows_of(all);     // rows.kernels[0].time.median: within 1 %
/// \endcode
inline totals_rows rows_of(const totals& all) { return {kernel_rows(all), range_rows(all)}; }

} // namespace v1
} // namespace nvscope

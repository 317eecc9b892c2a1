// nvscope-target: nvscope
#pragma once

/// \file analyze/diagnose/samples.hpp
/// The durations a saved summary carries so that `nvscope diff` can compare two runs: every
/// kernel instance by demangled name; every range instance by label (`name` in the default
/// domain, `domain:name` otherwise; marks left out) twice, as host time and, for push/pop
/// ranges that launched GPU work, as GPU time (the summed durations of the kernels, copies
/// and memsets launched inside it, nested ranges included: the range's `nvtx_kern_sum` total
/// with copies and memsets, per instance; not the projection's span, whose idle gaps follow
/// the host's launch pace and move between runs as host times do);
/// and every step range, host and GPU, each in one group `steps` (so `step_0`, `step_1`, ...
/// are not groups of one). Beyond `max_samples` in a group, evenly spaced order statistics of
/// the sorted durations are kept (the distribution, hence its median and spread, survives;
/// `count` says how many there were).
///
/// \code
///   nvscope::run_samples s = nvscope::collect_samples(t, nvscope::attribute(t));
///   // s.kernels[i].name, s.kernels[i].ns (sorted), s.kernels[i].count
/// \endcode

#include <nvscope/analyze/kernel_runs.hpp>
#include <nvscope/analyze/grouping.hpp>
#include <nvscope/analyze/index.hpp>
#include <nvscope/analyze/projection.hpp>
#include <nvscope/analyze/stats.hpp>
#include <nvscope/analyze/step_names.hpp>
#include <nvscope/analyze/diagnose/detail/timeline.hpp>
#include <nvscope/analyze/diagnose/options.hpp>
#include <nvscope/analyze/diagnosis.hpp>
#include <nvscope/trace.hpp>

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace nvscope {
inline namespace v1 {
namespace detail {
namespace diag {

// Quantile p of a sorted vector by nearest rank (quantile_place, analyze/stats.hpp); the median
// as nsys computes it (mean of the two middle values).
template <class Values>
double quantile(const Values& sorted, double p) noexcept {
  return sorted.empty() ? 0.0 : static_cast<double>(sorted[quantile_place(sorted.size(), p)]);
}

template <class Values>
double median(const Values& sorted) noexcept {
  const auto n = sorted.size();
  if (n == 0) return 0.0;
  if (n % 2 == 1) return static_cast<double>(sorted[n / 2]);
  return (static_cast<double>(sorted[n / 2 - 1]) + static_cast<double>(sorted[n / 2])) / 2.0;
}

// Tukey's upper fence, Q3 + 1.5 IQR (quartiles by nearest rank).
template <class Values>
double upper_fence(const Values& sorted) noexcept {
  const double q1 = quantile(sorted, 0.25);
  const double q3 = quantile(sorted, 0.75);
  return q3 + 1.5 * (q3 - q1);
}

// The figures of one kernel name's durations that the launch statistics need, read off the
// samples' sorted durations of that name (collect_samples sorts every one): the same values
// the launch statistics' own selection and count find, where the name's string is that name
// id's alone.
struct sorted_duration_figures {
  string_id name = 0;
  double median = 0.0, q1 = 0.0, q3 = 0.0; // median as nsys takes it; quartiles by nearest rank
  std::uint64_t above_fence = 0;           // durations above upper_fence (Tukey's, of these quartiles)
};
using known_duration_figures = std::vector<sorted_duration_figures>; // by name id, ascending

inline sorted_duration_figures figures_of_sorted(string_id name, const std::uint64_t* sorted, std::size_t n) noexcept {
  struct run { // what median and quantile read of a sorted container
    const std::uint64_t* first;
    std::size_t count;
    std::size_t size() const noexcept { return count; }
    bool empty() const noexcept { return count == 0; }
    std::uint64_t operator[](std::size_t i) const noexcept { return first[i]; }
  } const values{sorted, n};
  const double fence = upper_fence(values);
  const auto* first_above = std::partition_point(sorted, sorted + n, [fence](std::uint64_t v) { return !(static_cast<double>(v) > fence); });
  return {name, median(values), quantile(values, 0.25), quantile(values, 0.75), static_cast<std::uint64_t>(sorted + n - first_above)};
}

// Keeps what `keep` allows of sorted [first, last).
inline sample_set thin_sorted(std::string name, const std::uint64_t* first, const std::uint64_t* last, std::uint32_t keep) {
  sample_set s;
  s.name = std::move(name);
  const auto n = static_cast<std::size_t>(last - first);
  s.count = n;
  if (keep == 0 || n <= keep) {
    s.ns.assign(first, last);
    return s;
  }
  s.ns.reserve(keep);
  const double step = static_cast<double>(n) / static_cast<double>(keep);
  for (std::uint32_t i = 0; i < keep; ++i) s.ns.push_back(first[static_cast<std::size_t>((i + 0.5) * step)]);
  return s;
}

// Sorts [first, last) and keeps what `keep` allows of it.
inline sample_set thin(std::string name, std::uint64_t* first, std::uint64_t* last, std::uint32_t keep) {
  sort_values(first, last);
  return thin_sorted(std::move(name), first, last, keep);
}

inline sample_set thin(std::string name, scratch_vector<std::uint64_t> ns, std::uint32_t keep) {
  return thin(std::move(name), ns.data(), ns.data() + ns.size(), keep);
}

inline std::vector<sample_set> thin_all(std::map<std::string, scratch_vector<std::uint64_t>>& groups, std::uint32_t keep) {
  std::vector<sample_set> out;
  out.reserve(groups.size());
  for (auto& [name, ns] : groups) out.push_back(thin(name, std::move(ns), keep));
  return out;
}

inline std::string range_label(const trace& t, const range_record& r) {
  const auto domain = t.strings[r.domain];
  std::string s(domain);
  if (!s.empty()) s.push_back(':');
  s.append(t.strings[r.name].data(), t.strings[r.name].size());
  return s;
}

} // namespace diag
} // namespace detail

namespace detail {
namespace diag {

// Per range: the summed durations of the kernels (summed by kernel_samples, which reads their
// records), copies and memsets launched inside it, nested push/pop ranges included. Work goes
// to its owner, then owners pass their sums to their parents, deepest first (linear in records
// and ranges).
inline void note_gpu_work(const trace& t, const record_indexes& owner, std::size_t i, std::uint64_t start, std::uint64_t end,
                          scratch_vector<std::uint64_t>& work) {
  if (i < owner.size() && owner[i] < t.ranges.size() && end > start) work[owner[i]] += end - start;
}

// The kernels' part summed (kernel_samples), adds the copies and memsets, then the nesting.
inline void finish_gpu_work(const trace& t, const attribution& a, scratch_vector<std::uint64_t>& work) {
  const auto note = [&](const auto& records, const record_indexes& owner) {
    for (std::size_t i = 0; i < records.size(); ++i) note_gpu_work(t, owner, i, records[i].start, records[i].end, work);
  };
  note(t.copies, a.copy_owner);
  note(t.memsets, a.memset_owner);
  if (a.depth.size() != t.ranges.size()) return; // not attribute(t)'s: no nesting to follow
  for (const auto r : deepest_first(t, a)) {
    const auto up = r < a.parent.size() ? a.parent[r] : attribution::none;
    if (work[r] != 0 && up < t.ranges.size()) work[up] += work[r];
  }
}

using sample_groups = std::map<std::string, scratch_vector<std::uint64_t>>; // values of millions of ranges: huge pages where offered

// The runs of `t`'s valid kernels (an end, not before the start) that start inside `w`
// (kernel_runs_of over those), and each range's owned time over every valid kernel, inside
// `w` or not (`a`'s owners): what analyze's kernel_runs gives, for the passes called without
// analyze. Unsorted.
inline kernel_runs runs_of(const trace& t, const attribution& a, const time_window& w) {
  const std::size_t n = t.kernels.size();
  std::vector<char> valid(n), inside(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto& k = t.kernels[i];
    valid[i] = k.end != 0 && k.end >= k.start;
    inside[i] = valid[i] && in_window(w, k.start);
  }
  kernel_runs runs = kernel_runs_of(t, inside.data(), nullptr);
  runs.owned_ns.assign(t.ranges.size(), 0);
  for (std::size_t i = 0; i < n && i < a.kernel_owner.size(); ++i)
    if (valid[i] && a.kernel_owner[i] < t.ranges.size()) runs.owned_ns[a.kernel_owner[i]] += t.kernels[i].end - t.kernels[i].start;
  return runs;
}

// Every kernel's duration by name, sorted and thinned, from `runs` (analyze's, else runs_of;
// made again where they hold a kernel outside the window or no owned time): each name's run
// sorted where it lies. Ids past the string table all read "<unknown>", so runs are put together
// by name string. The runs' owned time is the kernels' part of the per-range GPU work (`work`;
// finish_gpu_work adds the rest). `figures` takes each name id's duration figures read off its
// sorted run, where the id's string is that id's alone (the launch statistics read them).
inline std::vector<sample_set> kernel_samples(const trace& t, const attribution& a, const diagnosis_options& o,
                                              scratch_vector<std::uint64_t>& work, known_duration_figures& figures, kernel_runs& runs) {
  const std::size_t ids = t.strings.size();
  if (runs.ids != ids || runs.owned_ns.size() != t.ranges.size() || !runs.inside(o.window)) runs = runs_of(t, a, o.window);
  if (!runs.sorted) sort_runs(runs);
  work = std::move(runs.owned_ns);
  runs.owned_ns = {};
  auto& grouped = runs.by_name;
  const auto& offset = grouped.offset;
  auto& ns = grouped.values;
  std::map<std::string, std::vector<std::size_t>> slots; // name -> its runs
  for (std::size_t s = 0; s <= ids; ++s)
    if (offset[s + 1] > offset[s]) slots[std::string(s < ids ? t.strings[static_cast<string_id>(s)] : t.strings[no_index])].push_back(s);
  std::vector<sample_set> out;
  out.reserve(slots.size());
  for (auto& [name, held] : slots) {
    auto* first = ns.data() + offset[held.front()];
    if (held.size() == 1) {
      auto* last = ns.data() + offset[held.front() + 1];
      if (held.front() < ids) figures.push_back(figures_of_sorted(static_cast<string_id>(held.front()), first, static_cast<std::size_t>(last - first)));
      out.push_back(thin_sorted(name, first, last, o.max_samples));
      continue;
    }
    scratch_vector<std::uint64_t> all; // a name string held by several ids: rare
    for (const auto s : held) all.insert(all.end(), ns.data() + offset[s], ns.data() + offset[s + 1]);
    out.push_back(thin(name, std::move(all), o.max_samples));
  }
  std::sort(figures.begin(), figures.end(), [](const sorted_duration_figures& x, const sorted_duration_figures& y) { return x.name < y.name; });
  return out;
}

// collect_samples (below); `figures` and `runs` as kernel_samples takes them.
inline run_samples samples_of(const trace& t, const attribution& a, const diagnosis_options& o, known_duration_figures& figures,
                              kernel_runs& runs) {
  detail::diag::sample_groups ranges, steps, ranges_gpu, steps_gpu;
  detail::scratch_vector<std::uint64_t> work; // the runs' owned time (kernel_samples), then the copies' and memsets' (finish_gpu_work)
  run_samples s;
  s.kernels = detail::diag::kernel_samples(t, a, o, work, figures, runs); // first: it sums the kernels' work
  detail::diag::finish_gpu_work(t, a, work);
  analysis_options ao;
  ao.step_range = o.step_range;
  ao.step_pattern = o.step_pattern;
  // Each (domain, name) finds its groups once, by its number (dense by name in the default
  // domain): labels and the step test are strings, and a trace with a range per operator has
  // millions of ranges and few names.
  struct groups_of_name {
    bool step;
    std::string label;
    detail::scratch_vector<std::uint64_t>* host;
    detail::scratch_vector<std::uint64_t>* gpu; // made at its first value: a group without GPU work is not listed
  };
  std::vector<groups_of_name> known;
  detail::key_numbers numbers(t.strings.size());
  const step_matcher is_step(ao); // a step_pattern compiled once
  auto groups_of = [&](const range_record& r) -> groups_of_name& {
    const std::uint32_t n = numbers.of(static_cast<std::uint64_t>(r.domain) << 32 | r.name);
    if (n == known.size()) {
      const bool step = is_step(t.strings[r.name]); // step_0, step_1, ...: one group
      std::string label = step ? "steps" : detail::diag::range_label(t, r);
      auto* host = &(step ? steps : ranges)[label];
      known.push_back({step, std::move(label), host, nullptr});
    }
    return known[n];
  };
  const auto lossy = merge_windows(t.lossy_steps);
  for (std::size_t i = 0; i < t.ranges.size() && i < a.range_end.size(); ++i) {
    const auto& r = t.ranges[i];
    if (r.is_mark || a.range_end[i] < r.start || !detail::in_window(o.window, r.start)) continue;
    auto& g = groups_of(r);
    if (g.step && !lossy.empty() && in_windows(lossy, r.start)) { // a step that lost records: not compared
      ++s.lossy_steps;
      continue;
    }
    g.host->push_back(a.range_end[i] - r.start);
    if (!r.is_push_pop || work[i] == 0) continue;
    if (g.gpu == nullptr) g.gpu = &(g.step ? steps_gpu : ranges_gpu)[g.label];
    g.gpu->push_back(work[i]);
  }
  s.ranges = detail::diag::thin_all(ranges, o.max_samples);
  s.steps = detail::diag::thin_all(steps, o.max_samples);
  s.ranges_gpu = detail::diag::thin_all(ranges_gpu, o.max_samples);
  s.steps_gpu = detail::diag::thin_all(steps_gpu, o.max_samples);
  return s;
}

} // namespace diag
} // namespace detail

/// The samples of `t` (see the file comment).
inline run_samples collect_samples(const trace& t, const attribution& a, const diagnosis_options& o = {}) {
  detail::diag::known_duration_figures figures; // read by the launch statistics, not kept here
  auto runs = detail::diag::runs_of(t, a, o.window);
  return detail::diag::samples_of(t, a, o, figures, runs);
}

} // namespace v1
} // namespace nvscope

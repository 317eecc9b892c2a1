// nvscope-target: nvscope
#pragma once

/// \file analyze/reference/steps.hpp
/// Step outliers and the samples `nvscope diff` compares, defined plainly over the reference
/// timeline (docs/diagnosis.md, "Steps" and "Samples and nvscope diff"). Which names mark a
/// step is `step_matcher`'s rule (analyze/step_names.hpp), the one every step figure shares.
/// Not included by `analysis.hpp`.
///
/// \code
///   #include <nvscope/analyze/reference/steps.hpp>
///   const auto ops = nvscope::reference::timeline(t, {});
///   auto s = nvscope::reference::step_outliers(t, ops, nvscope::reference::idle_time(t, ops, {}), {});
/// \endcode

#include <nvscope/analyze/diagnose/options.hpp>
#include <nvscope/analyze/diagnosis.hpp>
#include <nvscope/analyze/reference/common.hpp>
#include <nvscope/analyze/reference/launches.hpp>
#include <nvscope/analyze/reference/timeline.hpp>
#include <nvscope/analyze/step_names.hpp>

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace nvscope {
inline namespace v1 {
namespace reference {

/// The step matcher of the diagnosis' options.
inline step_matcher steps_of(const diagnosis_options& o) {
  analysis_options ao;
  ao.step_range = o.step_range;
  ao.step_pattern = o.step_pattern;
  return step_matcher(ao);
}

/// True when `start` falls in one of `t.lossy_steps` (a step during which records were lost).
inline bool in_lossy_step(const trace& t, timestamp_ns start) {
  for (const auto& w : t.lossy_steps)
    if (start >= w.begin && start < w.end) return true;
  return false;
}

/// The step ranges: ranges (not marks) whose name marks a step and that start inside the
/// window, in time order (then record order); a step's ordinal is its place here. `lossy`:
/// those that start in `t.lossy_steps` instead, left out of every step figure.
inline std::vector<std::uint32_t> step_ranges(const trace& t, const diagnosis_options& o, bool lossy = false) {
  const auto is_step = steps_of(o);
  std::vector<std::uint32_t> out;
  for (std::uint32_t i = 0; i < t.ranges.size(); ++i)
    if (!t.ranges[i].is_mark && is_step(t.strings[t.ranges[i].name]) && starts_inside(o.window, t.ranges[i].start) &&
        in_lossy_step(t, t.ranges[i].start) == lossy)
      out.push_back(i);
  std::sort(out.begin(), out.end(), [&](std::uint32_t x, std::uint32_t y) { return std::make_pair(t.ranges[x].start, x) < std::make_pair(t.ranges[y].start, y); });
  return out;
}

/// The step holding range `r` (the ordinal of the first step met walking up from `r` itself
/// through its parents, `nest`), or none.
inline std::uint32_t step_holding(const std::vector<std::uint32_t>& steps, const nesting& n, std::uint32_t r) {
  for (; r != no_index && r < n.parent.size(); r = n.parent[r]) {
    const auto it = std::find(steps.begin(), steps.end(), r);
    if (it != steps.end()) return static_cast<std::uint32_t>(it - steps.begin());
  }
  return diagnosis_none;
}

/// What each step holds, per component (kind, kernel name): time per step ordinal. A kernel's,
/// copy's or memset's GPU time goes to its owner's step; an idle stretch's to the step of the
/// range it is charged to (`idle_stretch::range`); a synchronisation's (valid, starting inside
/// the window) to the step of the innermost push/pop range on its thread at its start.
inline std::map<std::pair<component_kind, string_id>, std::vector<std::uint64_t>> step_components(
    const trace& t, const std::vector<gpu_op>& ops, const idle_breakdown& idle, const diagnosis_options& o, const std::vector<std::uint32_t>& steps) {
  const auto ends = range_ends(t);
  const auto n = nest(t, ends);
  std::map<std::pair<component_kind, string_id>, std::vector<std::uint64_t>> out;
  const auto add = [&](component_kind kind, string_id name, std::uint32_t range, std::uint64_t ns) {
    const auto k = step_holding(steps, n, range);
    if (k == diagnosis_none) return;
    auto& per_step = out[{kind, name}];
    per_step.resize(steps.size(), 0);
    per_step[k] += ns;
  };
  for (const auto& op : ops) {
    const auto kind = op.kind == op_kind::kernel ? component_kind::kernel : op.kind == op_kind::copy ? component_kind::copy : component_kind::memset;
    add(kind, op.name, op.owner, op.end - op.start);
  }
  for (const auto& s : idle.stretches) add(component_kind::idle, 0, s.range, s.duration);
  for (const auto& s : t.syncs)
    if (valid(s.start, s.end) && starts_inside(o.window, s.start)) add(component_kind::sync, 0, innermost_at(t, ends, s.thread, s.start), s.end - s.start);
  return out;
}

/// What grew in step `k` (docs/diagnosis.md, Steps): the components whose time in it exceeds
/// their median over all steps (nsys's median, a step without the component counting 0),
/// largest growth first (then by kind, then name), `step_growth_rows` kept.
inline std::vector<step_growth> growth(const std::map<std::pair<component_kind, string_id>, std::vector<std::uint64_t>>& components, std::uint32_t k,
                                       const diagnosis_options& o) {
  std::vector<step_growth> out;
  for (const auto& [key, per_step] : components) {
    step_growth g;
    g.kind = key.first, g.name = key.second, g.median_ns = nsys_median(per_step), g.step_ns = per_step[k];
    if (static_cast<double>(g.step_ns) > g.median_ns) out.push_back(g);
  }
  std::sort(out.begin(), out.end(), [](const step_growth& x, const step_growth& y) {
    const double dx = static_cast<double>(x.step_ns) - x.median_ns, dy = static_cast<double>(y.step_ns) - y.median_ns;
    return dx != dy ? dx > dy : std::make_pair(x.kind, x.name) < std::make_pair(y.kind, y.name);
  });
  if (out.size() > o.step_growth_rows) out.resize(o.step_growth_rows);
  return out;
}

/// Every outlier step, longest first (then by ordinal), before the list is cut to ten: a step
/// whose host time (`range_ends` less its start) lies above max(Q3 + 1.5 IQR, median x (1 +
/// `step_outlier_min_excess`)), quartiles by nearest rank.
inline std::vector<outlier_step> all_outliers(const trace& t, const std::vector<std::uint32_t>& steps, step_analysis& s, const diagnosis_options& o) {
  const auto ends = range_ends(t);
  std::vector<std::uint64_t> durations;
  for (const auto r : steps) durations.push_back(ends[r] - t.ranges[r].start);
  s.steps = steps.size();
  if (steps.empty()) return {};
  s.median_ns = nsys_median(durations);
  s.p90_ns = nearest_rank(durations, 0.9);
  s.max_ns = stats(durations).max;
  const double q1 = nearest_rank(durations, 0.25), q3 = nearest_rank(durations, 0.75);
  s.fence_ns = std::max(q3 + 1.5 * (q3 - q1), s.median_ns * (1.0 + o.step_outlier_min_excess));
  std::vector<outlier_step> out;
  for (std::uint32_t k = 0; k < steps.size(); ++k)
    if (static_cast<double>(durations[k]) > s.fence_ns) out.push_back({steps[k], k, durations[k], {}});
  std::stable_sort(out.begin(), out.end(), [](const outlier_step& x, const outlier_step& y) { return x.duration > y.duration; });
  return out;
}

/// The step analysis: the steps' figures, how many outliers, the ten longest with what grew.
inline step_analysis step_outliers(const trace& t, const std::vector<gpu_op>& ops, const idle_breakdown& idle, const diagnosis_options& o) {
  step_analysis s;
  const auto steps = step_ranges(t, o);
  const auto lossy = step_ranges(t, o, true);
  s.lossy_steps = lossy.size();
  s.lossy_ranges.assign(lossy.begin(), lossy.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(lossy.size(), 10)));
  s.outliers = all_outliers(t, steps, s, o);
  s.outlier_count = s.outliers.size();
  for (const auto& os : s.outliers) s.excess_ns += static_cast<double>(os.duration) > s.median_ns ? static_cast<std::uint64_t>(static_cast<double>(os.duration) - s.median_ns) : 0;
  if (s.outliers.size() > 10) s.outliers.resize(10);
  const auto components = step_components(t, ops, idle, o, steps);
  for (auto& os : s.outliers) os.grew = growth(components, static_cast<std::uint32_t>(os.ordinal), o);
  return s;
}

/// A group's samples (docs/diagnosis.md): its values sorted; beyond `max_samples`, the
/// values at ranks (i + 0.5) n / max_samples, i = 0 .. max_samples - 1.
inline sample_set sample(const std::string& name, std::vector<std::uint64_t> ns, std::uint32_t keep) {
  sample_set s;
  s.name = name;
  s.count = ns.size();
  std::sort(ns.begin(), ns.end());
  if (keep == 0 || ns.size() <= keep) s.ns = ns;
  else
    for (std::uint32_t i = 0; i < keep; ++i) s.ns.push_back(ns[static_cast<std::size_t>((i + 0.5) * (static_cast<double>(ns.size()) / keep))]);
  return s;
}

/// The groups of `values` (by name, in name order) as samples.
inline std::vector<sample_set> samples_of(const std::map<std::string, std::vector<std::uint64_t>>& values, std::uint32_t keep) {
  std::vector<sample_set> out;
  for (const auto& [name, ns] : values) out.push_back(sample(name, ns, keep));
  return out;
}

/// Each range's GPU work: the summed durations (end after start) of every kernel, copy and
/// memset owned by it or by a range nested in it (its parents, `nest`), per instance what
/// `nvtx_kern_sum` totals, copies and memsets added.
inline std::vector<std::uint64_t> gpu_work(const trace& t, attribution_rule credit = attribution_rule::thread) {
  const auto ends = range_ends(t);
  const auto n = nest(t, ends);
  std::vector<std::uint64_t> work(t.ranges.size(), 0);
  const auto note = [&](std::uint32_t correlation, timestamp_ns start, timestamp_ns end) {
    const auto l = launch_of(t, correlation);
    if (l == no_index || end <= start) return;
    for (auto r = credited_owner(t, ends, l, credit); r != no_index; r = n.parent[r]) work[r] += end - start;
  };
  for (const auto& k : t.kernels) note(k.correlation, k.start, k.end);
  for (const auto& c : t.copies) note(c.correlation, c.start, c.end);
  for (const auto& m : t.memsets) note(m.correlation, m.start, m.end);
  return work;
}

/// The samples (docs/diagnosis.md): every kernel of the timeline by demangled name; every
/// range (not a mark) starting inside the window by label (`name`, `domain:name` in a named
/// domain; every step in one group `steps`), its host time; and for push/pop ranges with GPU
/// work (`gpu_work`), that work, in `ranges_gpu` or `steps_gpu`.
inline run_samples collect_samples(const trace& t, const std::vector<gpu_op>& ops, const diagnosis_options& o) {
  const auto ends = range_ends(t);
  const auto work = gpu_work(t, o.attribute);
  const auto is_step = steps_of(o);
  std::map<std::string, std::vector<std::uint64_t>> kernels, ranges, steps, ranges_gpu, steps_gpu;
  std::uint64_t lossy = 0;
  for (const auto& op : ops)
    if (op.kind == op_kind::kernel) kernels[std::string(t.strings[op.name])].push_back(op.end - op.start);
  for (std::uint32_t i = 0; i < t.ranges.size(); ++i) {
    const auto& r = t.ranges[i];
    if (r.is_mark || !starts_inside(o.window, r.start)) continue;
    const bool step = is_step(t.strings[r.name]);
    if (step && in_lossy_step(t, r.start)) { // a step that lost records: left out of the samples
      ++lossy;
      continue;
    }
    const std::string domain(t.strings[r.domain]);
    const std::string name = step ? "steps" : (domain.empty() ? "" : domain + ":") + std::string(t.strings[r.name]);
    (step ? steps : ranges)[name].push_back(ends[i] - r.start);
    if (r.is_push_pop && work[i] != 0) (step ? steps_gpu : ranges_gpu)[name].push_back(work[i]);
  }
  run_samples s;
  s.lossy_steps = lossy;
  s.kernels = samples_of(kernels, o.max_samples);
  s.ranges = samples_of(ranges, o.max_samples);
  s.steps = samples_of(steps, o.max_samples);
  s.ranges_gpu = samples_of(ranges_gpu, o.max_samples);
  s.steps_gpu = samples_of(steps_gpu, o.max_samples);
  return s;
}

} // namespace reference
} // namespace v1
} // namespace nvscope

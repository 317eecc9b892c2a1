// nvscope-target: nvscope
#pragma once

/// \file analyze/diagnose/steps.hpp
/// Step durations (the host time of each step range: `step`, `step_N`, ... or the configured
/// name): median, p90 (nearest rank), max; outlier steps above Tukey's upper fence and at
/// least `step_outlier_min_excess` above the median; for each outlier, what grew against the
/// median step: GPU time per kernel name launched inside it, copy time, memset time, GPU idle
/// time that began inside it, and synchronisation time on its thread. Linear in the records
/// and ranges, plus sorting the steps and each component's values once; memory linear too (a
/// component's time is kept only for the steps it has any in).
///
/// \code
///   nvscope::step_analysis s = nvscope::step_outliers(t, nvscope::attribute(t));
///   for (const auto& o : s.outliers) std::printf("step %llu: %llu ns\n",
///       (unsigned long long)o.ordinal, (unsigned long long)o.duration);
/// \endcode

#include <nvscope/analyze/detail/buckets.hpp>
#include <nvscope/analyze/detail/inlining.hpp>
#include <nvscope/analyze/diagnose/detail/timeline.hpp>
#include <nvscope/analyze/projection.hpp>
#include <nvscope/analyze/step_names.hpp>
#include <nvscope/analyze/diagnose/idle.hpp>
#include <nvscope/analyze/diagnose/options.hpp>
#include <nvscope/analyze/diagnose/samples.hpp>
#include <nvscope/analyze/diagnosis.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

namespace nvscope {
inline namespace v1 {
namespace detail {
namespace diag {

// Step ranges in time order and, per range, its step ordinal (or none); the time of each
// component (a kernel name, or copies, memsets, idle, syncs) in each step where it has any.
// Sparse: a dense column per component would cost components x steps (a step rule that
// matches a range per operator, or thousands of generated kernel names, made that gigabytes).
struct step_set {
  struct cell {
    std::uint32_t step;
    std::uint64_t ns;
  };
  std::vector<std::uint32_t> ranges;
  std::vector<std::uint32_t> lossy;          // step ranges left out: they start in trace::lossy_steps
  scratch_vector<std::uint32_t> ordinal_of; // per trace range (huge pages where offered: a range per operator makes millions)
  std::vector<std::uint64_t> components;   // by component number: (kind << 32) | name
  std::vector<std::vector<cell>> cells;    // by component number: steps with time, by step

  // The component's time in `step` (0 where it has none).
  std::uint64_t ns_in(std::size_t component, std::uint32_t step) const noexcept {
    const auto& c = cells[component];
    const auto it = std::lower_bound(c.begin(), c.end(), step, [](const cell& x, std::uint32_t k) { return x.step < k; });
    return it != c.end() && it->step == step ? it->ns : 0;
  }
};

inline step_set find_steps(const timeline& tl, const diagnosis_options& o) {
  const trace& t = *tl.t;
  const attribution& a = *tl.a;
  step_set s;
  analysis_options ao;
  ao.step_range = o.step_range;
  ao.step_pattern = o.step_pattern;
  const auto is_step = step_ranges(t, ao); // the rule tried once a name, not once a range (nor a pattern compiled each time)
  const auto lossy = merge_windows(t.lossy_steps);
  for (std::uint32_t i = 0; i < t.ranges.size(); ++i) {
    if (!is_step[i] || i >= a.range_end.size() || !tl.inside(t.ranges[i].start)) continue;
    (!lossy.empty() && in_windows(lossy, t.ranges[i].start) ? s.lossy : s.ranges).push_back(i);
  }
  const auto by_start = [&](std::uint32_t x, std::uint32_t y) {
    return t.ranges[x].start != t.ranges[y].start ? t.ranges[x].start < t.ranges[y].start : x < y;
  };
  std::sort(s.ranges.begin(), s.ranges.end(), by_start);
  std::sort(s.lossy.begin(), s.lossy.end(), by_start);
  s.ordinal_of.assign(t.ranges.size(), diagnosis_none);
  for (std::uint32_t k = 0; k < s.ranges.size(); ++k) s.ordinal_of[s.ranges[k]] = k;
  return s;
}

// The step enclosing each range on its thread (the range itself included), or none: ranges
// parents first (deepest_first read backwards; marks after the range around them), each taking
// its parent's step unless it is a step itself (linear). Without attribute(t)'s depths
// (`a.depth`), no nesting is followed.
inline scratch_vector<std::uint32_t> step_of_ranges(const trace& t, const step_set& s, const attribution& a) {
  scratch_vector<std::uint32_t> step(s.ordinal_of);
  step.resize(t.ranges.size(), diagnosis_none);
  if (a.depth.size() != t.ranges.size() || a.parent.size() != t.ranges.size()) return step;
  const auto take_parents = [&](std::uint32_t r) {
    if (step[r] == diagnosis_none && a.parent[r] < step.size()) step[r] = step[a.parent[r]];
  };
  const auto order = deepest_first(t, a);
  for (auto r = order.rbegin(); r != order.rend(); ++r) take_parents(*r);
  return step;
}

// Adds time to a component's cell for a step. Components are numbered once (kernels by name
// through an array, the nameless kinds by kind); a component's time comes in time order, so
// its cell for the step is usually its last one; `finish` sorts the few that are not.
class step_columns {
 public:
  step_columns(step_set& s, const trace& t) : s_(&s), kernels_(t.strings.size(), none) {}
  NVSCOPE_DETAIL_INLINE void add(component_kind kind, string_id name, std::uint32_t step, std::uint64_t ns) {
    const bool kernel = kind == component_kind::kernel;
    std::uint32_t* known = kernel ? (name < kernels_.size() ? &kernels_[name] : nullptr) : &others_[static_cast<std::size_t>(kind) % others_.size()];
    const std::uint32_t n = known && *known != none ? *known : number(kind, name, known);
    auto& c = s_->cells[n];
    if (!c.empty() && c.back().step == step) c.back().ns += ns;
    else open_cell(c, step, ns);
  }
  // Each component's cells by step, one per step.
  void finish() {
    s_->components = std::move(numbers_.keys());
    for (auto& c : s_->cells) {
      const auto by_step = [](const step_set::cell& x, const step_set::cell& y) { return x.step < y.step; };
      if (std::is_sorted(c.begin(), c.end(), by_step)) continue; // nested or concurrent steps only
      std::stable_sort(c.begin(), c.end(), by_step);
      join_equal_neighbours(
          c, [](const step_set::cell& x, const step_set::cell& y) { return x.step == y.step; },
          [](step_set::cell& into, const step_set::cell& from) { into.ns += from.ns; });
    }
  }

 private:
  NVSCOPE_DETAIL_COLD std::uint32_t number(component_kind kind, string_id name, std::uint32_t* known) { // a new component
    const std::uint32_t n = numbers_.of((static_cast<std::uint64_t>(kind) << 32) | name);
    if (n == s_->cells.size()) s_->cells.emplace_back();
    if (known) *known = n;
    return n;
  }
  NVSCOPE_DETAIL_COLD static void open_cell(std::vector<step_set::cell>& c, std::uint32_t step, std::uint64_t ns) { c.push_back({step, ns}); }
  static constexpr std::uint32_t none = 0xffffffffu;
  step_set* s_;
  key_numbers numbers_;
  std::vector<std::uint32_t> kernels_;      // kernel name -> component number
  std::array<std::uint32_t, 8> others_{none, none, none, none, none, none, none, none};
};

// Each component's time in each step, an operation and an idle stretch at a time (handed over
// by the diagnosis' idle walk of the timeline, or read here), then the syncs. The steps and each
// range's step are found first, before the walk; without steps nothing is tallied.
class step_tally {
 public:
  step_tally(const timeline& tl, const diagnosis_options& o) : tl_(&tl), set_(find_steps(tl, o)), columns_(set_, *tl.t) {
    if (!set_.ranges.empty()) step_ = step_of_ranges(*tl.t, set_, *tl.a);
    step_of_ = step_.data();
    steps_ = step_.size();
    kernel_owner_ = tl.a->kernel_owner.data();
    kernel_owners_ = tl.a->kernel_owner.size();
    names_ = tl.names.data();
  }
  step_tally(const step_tally&) = delete; // columns_ points into set_
  step_tally& operator=(const step_tally&) = delete;

  NVSCOPE_DETAIL_INLINE void take_op(std::size_t i, const gpu_op& op) {
    if (steps_ == 0) return;
    if (op.kind() != op_kind::kernel) {
      const auto k = step_at(tl_->owner_of(op));
      if (k != diagnosis_none) columns_.add(op.kind() == op_kind::copy ? component_kind::copy : component_kind::memset, 0, k, op.end - op.start);
      return;
    }
    // A kernel's owner, step and name number read through the columns' places held here, not
    // through the timeline and attribution.
    const auto k = step_at(op.index() < kernel_owners_ ? kernel_owner_[op.index()] : diagnosis_none);
    if (k == diagnosis_none) return;
    if (k != pending_step_) pend(k);
    const auto n = names_[i];
    auto& ns = pending_[n];
    if (ns == 0) touched_.push_back(n); // again after a kernel of no length: added twice, the second time 0
    ns += op.end - op.start;
  }
  void take_stretch(const idle_stretch& st) { take_idle(st.range, st.duration); } // st.range: the range open on st.thread at st.start
  // Idle time `ns` of stretches that began inside `range` (one or a run of them).
  void take_idle(std::uint32_t range, std::uint64_t ns) {
    if (steps_ == 0) return;
    const auto k = step_at(range);
    if (k != diagnosis_none) columns_.add(component_kind::idle, 0, k, ns);
  }
  // The syncs added, each component's cells put in step order: the steps' set, tallied.
  step_set&& finish() && {
    if (!touched_.empty()) pend(diagnosis_none); // the last step's kernels
    if (steps_ != 0)
      for (const auto& sy : tl_->t->syncs) {
        if (sy.end < sy.start || sy.end == 0 || !tl_->inside(sy.start)) continue; // the window's syncs only
        const auto k = step_at(tl_->range_at(sy.thread, sy.start));
        if (k != diagnosis_none) columns_.add(component_kind::sync, 0, k, sy.end - sy.start);
      }
    columns_.finish();
    return std::move(set_);
  }
  const step_set& steps() const noexcept { return set_; }

 private:
  std::uint32_t step_at(std::uint32_t range) const noexcept { return range < steps_ ? step_of_[range] : diagnosis_none; }
  // The pending kernel time goes to the columns; kernels of `step` are pending from here.
  NVSCOPE_DETAIL_COLD void pend(std::uint32_t step) {
    for (const auto n : touched_) {
      columns_.add(component_kind::kernel, tl_->kernel_names[n], pending_step_, pending_[n]);
      pending_[n] = 0;
    }
    touched_.clear();
    if (pending_.empty()) pending_.assign(tl_->kernel_names.size(), 0);
    pending_step_ = step;
  }
  const timeline* tl_;
  step_set set_;
  step_columns columns_;
  scratch_vector<std::uint32_t> step_; // per range: its step, or none (empty without steps)
  const std::uint32_t* step_of_ = nullptr;      // step_'s, and its size
  std::size_t steps_ = 0;
  const std::uint32_t* kernel_owner_ = nullptr; // the attribution's kernel owners, and their count
  std::size_t kernel_owners_ = 0;
  const std::uint32_t* names_ = nullptr;        // the timeline's name number per operation
  // Kernel time of one step by kernel name number, added to the columns when the operations'
  // step changes (a step's kernels come together, but for concurrent steps): an addition an
  // operation, not a column's cell found for each.
  std::uint32_t pending_step_ = diagnosis_none;
  std::vector<std::uint64_t> pending_;     // by kernel name number
  std::vector<std::uint32_t> touched_;     // name numbers with pending time
};

// Each component's median time per step over every step (steps without it count as 0), by
// component number: its cells' values sorted, the zeros in front of them.
inline std::vector<double> medians_of(const step_set& s) {
  std::vector<double> out(s.cells.size());
  std::vector<std::uint64_t> values;
  const std::size_t n = s.ranges.size();
  for (std::size_t c = 0; c < s.cells.size(); ++c) {
    values.clear();
    for (const auto& cell : s.cells[c]) values.push_back(cell.ns);
    std::sort(values.begin(), values.end());
    const std::size_t zeros = n - values.size();
    const auto at = [&](std::size_t place) { return place < zeros ? 0.0 : static_cast<double>(values[place - zeros]); };
    out[c] = n == 0 ? 0.0 : n % 2 ? at(n / 2) : (at(n / 2 - 1) + at(n / 2)) / 2.0;
  }
  return out;
}

inline std::vector<step_growth> growth_of(const step_set& s, const std::vector<double>& medians, std::uint32_t step, std::uint32_t keep) {
  std::vector<step_growth> out;
  for (std::size_t c = 0; c < s.cells.size(); ++c) {
    step_growth g;
    g.kind = static_cast<component_kind>(s.components[c] >> 32);
    g.name = static_cast<string_id>(s.components[c] & 0xffffffffu);
    g.median_ns = medians[c];
    g.step_ns = s.ns_in(c, step);
    if (static_cast<double>(g.step_ns) > g.median_ns) out.push_back(g);
  }
  std::sort(out.begin(), out.end(), [](const step_growth& x, const step_growth& y) {
    const double dx = static_cast<double>(x.step_ns) - x.median_ns, dy = static_cast<double>(y.step_ns) - y.median_ns;
    return dx != dy ? dx > dy : (x.kind != y.kind ? x.kind < y.kind : x.name < y.name);
  });
  if (out.size() > keep) out.resize(keep);
  return out;
}

// `walked`: the tally the idle walk fed.
inline step_analysis step_outliers_of(const timeline& tl, const diagnosis_options& o, step_tally& walked) {
  step_analysis out;
  step_set s = std::move(walked).finish();
  out.steps = s.ranges.size();
  out.lossy_steps = s.lossy.size();
  out.lossy_ranges.assign(s.lossy.begin(), s.lossy.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(s.lossy.size(), 10)));
  if (s.ranges.empty()) return out;
  std::vector<std::uint64_t> durations;
  for (auto r : s.ranges) durations.push_back(tl.a->range_end[r] - std::min(tl.a->range_end[r], tl.t->ranges[r].start));
  std::vector<std::uint64_t> sorted = durations;
  std::sort(sorted.begin(), sorted.end());
  out.median_ns = median(sorted);
  out.p90_ns = quantile(sorted, 0.9);
  out.max_ns = sorted.back();
  out.fence_ns = std::max(upper_fence(sorted), out.median_ns * (1.0 + o.step_outlier_min_excess));
  for (std::uint32_t k = 0; k < durations.size(); ++k) {
    if (static_cast<double>(durations[k]) <= out.fence_ns) continue;
    ++out.outlier_count;
    out.excess_ns += whole_ns(static_cast<double>(durations[k]) - out.median_ns);
    outlier_step os;
    os.range = s.ranges[k];
    os.ordinal = k;
    os.duration = durations[k];
    out.outliers.push_back(os);
  }
  std::stable_sort(out.outliers.begin(), out.outliers.end(),
                   [](const outlier_step& x, const outlier_step& y) { return x.duration > y.duration; });
  if (out.outliers.size() > 10) out.outliers.resize(10);
  const auto medians = medians_of(s);
  for (auto& os : out.outliers) os.grew = growth_of(s, medians, static_cast<std::uint32_t>(os.ordinal), o.step_growth_rows);
  return out;
}

} // namespace diag
} // namespace detail

/// Step durations and outlier steps of `t` (see the file comment).
inline step_analysis step_outliers(const trace& t, const attribution& a, const diagnosis_options& o = {}) {
  const auto tl = detail::diag::build_timeline(t, a, o.window);
  detail::diag::step_tally walked(tl, o);
  detail::diag::read_as_walked(tl, detail::diag::idle_time_of(tl, o), walked);
  return detail::diag::step_outliers_of(tl, o, walked);
}

} // namespace v1
} // namespace nvscope

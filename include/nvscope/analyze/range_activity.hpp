// nvscope-target: nvscope
#pragma once

/// \file analyze/range_activity.hpp
/// Per-range metrics: GPU activity over the projected windows of outermost ranges and step
/// ranges, summed per range name. Each GPU record reaches its interesting ranges through
/// precomputed "nearest interesting ancestor" links, so the pass is linear in the records.
///
/// \code
///   const auto x = nvscope::index_trace(t);
///   auto per_range = nvscope::range_activity(t, x, nvscope::project_ranges(t, x), {});
/// \endcode

#include <nvscope/analyze/activity.hpp>
#include <nvscope/analyze/detail/hot_counts.hpp>
#include <nvscope/analyze/detail/prefetch.hpp>
#include <nvscope/analyze/grouping.hpp>
#include <nvscope/analyze/index.hpp>
#include <nvscope/analyze/projection.hpp>
#include <nvscope/analyze/step_names.hpp>
#include <nvscope/analyze/steps.hpp>

#include <algorithm>
#include <string>
#include <string_view>
#include <unordered_map>
#include <tuple>
#include <utility>
#include <vector>

namespace nvscope {
inline namespace v1 {

/// Per-range metrics and per-step figures.
struct range_activity_result {
  std::vector<range_metrics> per_range; ///< outermost ranges by name, step ranges as one family ("step_N"); most kernel time first
  std::vector<step_metrics> steps;      ///< each step instance that launched GPU work, in time order
};

namespace detail {

// GPU records grouped by interesting range: range r's records are ref[offset[r] .. offset[r + 1]),
// each a record index with its kind in the top two bits (0 kernel, 1 copy, 2 memset): four
// bytes a pair, since there are as many pairs as records times interesting ranges above them.
// A range whose kernels are one run of records with none between (a step launched by one
// thread, usually) has them as that run instead, kernels[run_first[r] .. + run_size[r]), and
// only its copies and memsets in ref.
struct range_ops_index {
  scratch_vector<std::uint32_t> offset;
  scratch_column<std::uint32_t> ref; // every place written once
  scratch_vector<std::uint32_t> run_first, run_size; // per range; run_size 0: its kernels (if any) in ref
  static constexpr std::uint32_t kind_shift = 30, index_mask = (1u << kind_shift) - 1;
  bool empty(std::size_t r) const noexcept { return offset[r] == offset[r + 1] && run_size[r] == 0; }
  std::size_t records(std::size_t r) const noexcept { return offset[r + 1] - offset[r] + run_size[r]; }
};

// Step ranges numbered by family (the name with digits as N): `of_range[r]` for each step range r
// (none for the others), `label[f]` once a family. Each name is stripped once, not each range.
struct step_families {
  std::vector<std::uint32_t> of_range;
  std::vector<std::string> label;
};

inline step_families step_families_of(const trace& t, const std::vector<char>& is_step) {
  constexpr auto none = attribution::none;
  const auto nr = t.ranges.size();
  step_families f;
  f.of_range.assign(nr, none);
  std::vector<std::uint32_t> family_of_name(t.strings.size(), none);
  std::unordered_map<std::string, std::uint32_t> number;
  for (std::size_t r = 0; r < nr; ++r) {
    if (!is_step[r]) continue;
    const auto name = t.ranges[r].name;
    if (name < family_of_name.size() && family_of_name[name] != none) {
      f.of_range[r] = family_of_name[name];
      continue;
    }
    auto label = strip_numbers(t.strings[name]);
    const auto it = number.emplace(label, static_cast<std::uint32_t>(f.label.size())).first;
    if (it->second == f.label.size()) f.label.push_back(std::move(label));
    f.of_range[r] = it->second;
    if (name < family_of_name.size()) family_of_name[name] = it->second;
  }
  return f;
}

// Clears the step mark of every step range that a step of its own family encloses: it is part
// of that step, not a step of its own here (as `nvscope run` counts steps). A "step" pushed
// every iteration and never popped nests n deep, and each level would hold the records of every
// level below it: n^2 / 2 (record, step) pairs, quadratic in time and memory. Steps of
// other families nested in a step (an optimizer_step in a train_step) stay. One depth-first
// walk of the nesting, a count of open steps per family; first, one pass down `order`
// (deepest_first's, read backwards) finds whether any step lies inside another: in the usual
// trace none does, and nothing more is done.
inline void drop_steps_in_own_family(const trace& t, const trace_index& x, const step_families& families,
                                     const scratch_vector<std::uint32_t>& order, std::vector<char>& is_step) {
  constexpr auto none = attribution::none;
  const auto nr = t.ranges.size();
  const auto& family = families.of_range;
  if (families.label.empty()) return;
  std::vector<char> below_step(nr, 0);
  bool nested = false;
  for (auto it = order.rbegin(); it != order.rend() && !nested; ++it) { // parents first
    const auto r = *it, up = x.links.parent[r];
    if (up == none) continue;
    below_step[r] = below_step[up] || family[up] != none;
    nested = below_step[r] && family[r] != none;
  }
  if (!nested) return;
  const buckets children(nr, nr, [&](std::size_t r) -> std::size_t { return x.links.parent[r]; }); // roots left out
  std::vector<std::uint32_t> open(families.label.size(), 0);
  std::vector<std::pair<std::uint32_t, bool>> stack; // (range, its children done)
  for (std::uint32_t root = 0; root < nr; ++root) {
    if (x.links.parent[root] < nr) continue;
    stack.emplace_back(root, false);
    while (!stack.empty()) {
      const auto [r, leaving] = stack.back();
      stack.pop_back();
      if (leaving) {
        if (family[r] != none) --open[family[r]];
        continue;
      }
      if (family[r] != none) {
        if (open[family[r]] > 0) is_step[r] = 0;
        ++open[family[r]];
      }
      stack.emplace_back(r, true);
      for (auto c = children.offset[r]; c != children.offset[r + 1]; ++c) stack.emplace_back(children.order[c], false);
    }
  }
}

// Per range, the nearest interesting ancestor-or-self (outermost ranges and steps that
// launched GPU work), so that each record reaches them in as many steps as there are. A range's
// kind is read through its group (marks have none; a group's ranges share a style), not from
// its 64-byte record.
inline std::vector<std::uint32_t> interesting_links(const trace& t, const trace_index& x, const range_projection& p,
                                                    const std::vector<char>& is_step, const scratch_vector<std::uint32_t>& order) {
  const auto nr = t.ranges.size();
  std::vector<char> push_pop(x.group_first.size());
  for (std::size_t g = 0; g < push_pop.size(); ++g) push_pop[g] = t.ranges[x.group_first[g]].is_push_pop;
  std::vector<char> interesting(nr, 0);
  for (std::size_t i = 0; i < nr; ++i)
    interesting[i] = x.group_of[i] != attribution::none && p.ops[i] && (x.links.depth[i] == 0 || is_step[i]);
  std::vector<std::uint32_t> up(nr, attribution::none);
  for (auto it = order.rbegin(); it != order.rend(); ++it) { // parents first
    const auto r = *it, parent = x.links.parent[r];
    up[r] = interesting[r] ? r : parent == attribution::none ? attribution::none : up[parent];
  }
  for (std::size_t i = 0; i < nr; ++i)
    if (interesting[i] && !push_pop[x.group_of[i]]) up[i] = static_cast<std::uint32_t>(i);
  return up;
}

// Calls f(range) for every interesting range enclosing launch l.
template <class F>
void for_interesting(const trace_index& x, const std::vector<std::uint32_t>& up, std::uint32_t l, F&& f) {
  for (auto r = x.launch_owner[l] == attribution::none ? attribution::none : up[x.launch_owner[l]]; r != attribution::none;) {
    f(r);
    const auto parent = x.links.parent[r];
    r = parent == attribution::none ? attribution::none : up[parent];
  }
  for (auto s = x.start_end_offset[l]; s < x.start_end_offset[l + 1]; ++s)
    if (up[x.start_end_ranges[s]] != attribution::none) f(x.start_end_ranges[s]);
}

// Calls emit(launch, ref) for every valid record of `kind` (0 kernel, 1 copy, 2 memset) that
// was launched, in record order; ref: its index with the kind in the top bits.
template <class Emit>
void each_launched(const trace& t, const trace_index& x, std::uint32_t kind, Emit&& emit) {
  auto each = [&](std::size_t n, const record_indexes& launch, auto valid) {
    for (std::uint32_t i = 0; i < n; ++i)
      if (launch[i] != attribution::none && valid(i)) emit(launch[i], kind << range_ops_index::kind_shift | i);
  };
  const auto valid_record = [](const auto& records) { return [&records](std::uint32_t i) { return valid_interval(records[i].start, records[i].end); }; };
  if (kind == 0) each(t.kernels.size(), x.links.kernel_launch, [&](std::uint32_t i) { return x.kernel_ok[i] != 0; }); // a byte a kernel, not its 32-byte record
  if (kind == 1) each(t.copies.size(), x.links.copy_launch, valid_record(t.copies));
  if (kind == 2) each(t.memsets.size(), x.links.memset_launch, valid_record(t.memsets));
}

// Per range, the kernels launched under it, their count and the first and last of them: an
// owner's, of the launches it owns; a start/end range's, of those open in it.
struct kernel_spans {
  scratch_vector<std::uint32_t> count, first, last;
  explicit kernel_spans(std::size_t nr) : count(nr, 0), first(nr, attribution::none), last(nr, 0) {}
  void widen(std::uint32_t r, std::uint32_t f, std::uint32_t l) noexcept {
    first[r] = f < first[r] ? f : first[r];
    last[r] = l > last[r] ? l : last[r];
  }
};

// The kernels' spans (`in_range`: the start/end ranges' counts), in one read of them. Kernels
// come in record order: an owner's span is taken a run of its kernels at a time, a start/end
// range's first kernel is set once and its last at each of its kernels.
inline void count_kernels(const trace& t, const trace_index& x, const std::vector<std::uint32_t>& up, kernel_spans& spans,
                          scratch_vector<std::uint32_t>& in_range) {
  constexpr auto none = attribution::none;
  hot_counts by_owner(spans.count.data()), by_range(in_range.data()); // a range's records come together
  std::uint32_t run_owner = none, run_first = 0, run_last = 0; // the owner of the kernels just read, and their span
  const std::uint32_t *const launch_of = x.links.kernel_launch.data(), *const owner = x.launch_owner.data(),
                      *const se_offset = x.start_end_offset.data(), *const se_ranges = x.start_end_ranges.data(), *const up_of = up.data();
  const char* const ok = x.kernel_ok.data();
  std::uint32_t *const first = spans.first.data(), *const last = spans.last.data();
  for (std::uint32_t i = 0, n = static_cast<std::uint32_t>(t.kernels.size()); i < n; ++i) { // each_launched's kernels, in record order
    const auto l = launch_of[i];
    if (l == none || !ok[i]) continue;
    if (const auto o = owner[l]; o != none) {
      by_owner.add(o);
      if (o != run_owner) {
        if (run_owner != none) spans.widen(run_owner, run_first, run_last);
        run_owner = o, run_first = i;
      }
      run_last = i;
    }
    for (auto s = se_offset[l]; s < se_offset[l + 1]; ++s)
      if (const auto r = se_ranges[s]; up_of[r] != none) {
        by_range.add(r);
        if (first[r] == none) first[r] = i;
        last[r] = i;
      }
  }
  if (run_owner != none) spans.widen(run_owner, run_first, run_last);
}

// Every (interesting range, GPU record) pair, grouped by range: counted, then placed. The count
// walks no chain per record: the records are counted by the push/pop range that owns their
// launch, and each owner's count then goes up its chain once (a range owns thousands of them).
// The kernels are counted with their first and last: a range whose count spans from its first
// to its last is one run of records, and its kernels are not placed (where every range's are
// runs, the place pass reads no kernel).
inline range_ops_index range_ops(const trace& t, const trace_index& x, const std::vector<std::uint32_t>& up) {
  constexpr auto none = attribution::none;
  range_ops_index ops;
  const auto nr = t.ranges.size();
  ops.offset.assign(nr + 1, 0);
  kernel_spans spans(nr); // the owners' own, then the interesting ranges' once gone up the chains
  scratch_vector<std::uint32_t> owned(nr, 0), in_range(nr, 0); // per owner: its transfers; per interesting range: its kernels
  count_kernels(t, x, up, spans, in_range);
  {
    hot_counts by_owner(owned.data()), by_range(ops.offset.data() + 1);
    for (const std::uint32_t kind : {1u, 2u})
      each_launched(t, x, kind, [&](std::uint32_t l, std::uint32_t) {
        if (const auto o = x.launch_owner[l]; o != none) by_owner.add(o);
        for (auto s = x.start_end_offset[l]; s < x.start_end_offset[l + 1]; ++s)
          if (up[x.start_end_ranges[s]] != none) by_range.add(x.start_end_ranges[s]);
      });
  }
  for (std::uint32_t o = 0; o < nr; ++o)
    if ((owned[o] | spans.count[o]) != 0)
      for (auto r = up[o]; r != none; r = x.links.parent[r] == none ? none : up[x.links.parent[r]])
        ops.offset[r + 1] += owned[o], in_range[r] += spans.count[o], spans.widen(r, spans.first[o], spans.last[o]);
  bool every_run = true; // every range's kernels one run: none placed
  for (std::size_t r = 0; r < nr; ++r) {
    if (in_range[r] == 0) continue;
    const bool run = spans.last[r] - spans.first[r] + 1 == in_range[r];
    every_run = every_run && run;
    if (!run) ops.offset[r + 1] += in_range[r], in_range[r] = 0;
  }
  ops.run_first = std::move(spans.first); // read where run_size is not 0
  ops.run_size = std::move(in_range);
  for (std::size_t r = 1; r < ops.offset.size(); ++r) ops.offset[r] += ops.offset[r - 1];
  ops.ref.resize(ops.offset.back());
  auto cursor = ops.offset;
  hot_counts place(cursor.data());
  std::uint32_t* const refs = ops.ref.data();
  const std::uint32_t* const run_size = ops.run_size.data();
  if (!every_run)
    each_launched(t, x, 0, [&](std::uint32_t l, std::uint32_t ref) { for_interesting(x, up, l, [&](std::uint32_t r) { if (run_size[r] == 0) refs[place.add(r)] = ref; }); });
  for (const std::uint32_t kind : {1u, 2u})
    each_launched(t, x, kind, [&](std::uint32_t l, std::uint32_t ref) { for_interesting(x, up, l, [&](std::uint32_t r) { refs[place.add(r)] = ref; }); });
  place.flush();
  return ops;
}

// Sums one instance's window figures into its name's row.
inline void add_instance(range_metrics& m, const activity_metrics& a) {
  auto& s = m.activity;
  s.window_begin = m.instances ? std::min(s.window_begin, a.window_begin) : a.window_begin;
  s.window_end = std::max(s.window_end, a.window_end);
  ++m.instances;
  m.kernels += a.kernels;
  s.kernels += a.kernels;
  s.copies += a.copies;
  s.memsets += a.memsets;
  s.window_ns += a.window_ns;
  s.busy_ns += a.busy_ns;
  s.kernel_ns += a.kernel_ns;
  s.copy_ns += a.copy_ns;
  s.overlap_ns += a.overlap_ns;
  s.sync_ns += a.sync_ns;
}

// A row's kernel durations: grown by each instance and written in place (no zero fill first).
using duration_column = scratch_column<std::uint64_t>;

// One instance's kernels: the run of records run[0 .. n), or (run null) each through its ref
// refs[0 .. n). Their durations appended to `kernel_ns`, fed to `sink` while they come in
// start order. False where one does not (the sink then fed only in part; the durations all
// appended).
inline bool read_instance_kernels(const trace& t, const kernel_record* run, const std::uint32_t* refs, std::size_t n, kernel_union_sink& sink,
                                  duration_column& kernel_ns) {
  const auto done = kernel_ns.size();
  kernel_ns.resize(done + n);
  std::uint64_t* const out = kernel_ns.data() + done;
  const kernel_record* const records = t.kernels.data();
  const auto read = [&](std::size_t j) -> const kernel_record& {
    if (!run && j + prefetch_ahead < n) prefetch(&records[refs[j + prefetch_ahead] & range_ops_index::index_mask]); // a range's kernels lie far apart
    const kernel_record* const k = run ? run + j : &records[refs[j] & range_ops_index::index_mask];
    const std::uint64_t d = k->end - k->start;
    out[j] = d;
    return *k;
  };
  const auto in_order = sink.add_each(n, [&](std::size_t j, interval& x) {
    const auto& k = read(j);
    x = {k.start, k.end};
    return true; // empty: no time (the sink skips it)
  });
  for (auto j = in_order + 1; j < n; ++j) read(j); // the first out of order was read
  return in_order == n;
}

// Ratios of the summed figures; gap and kernel medians over every instance's values.
inline void finish_metrics(range_metrics& m, const value_list& gaps, const duration_column& kernel_ns) {
  auto& a = m.activity;
  m.kernels_per_instance = m.instances ? static_cast<double>(m.kernels) / static_cast<double>(m.instances) : 0.0;
  if (a.window_ns) {
    a.gpu_busy_percent = 100.0 * static_cast<double>(a.busy_ns) / static_cast<double>(a.window_ns);
    a.sync_percent = 100.0 * static_cast<double>(a.sync_ns) / static_cast<double>(a.window_ns);
  }
  if (a.copy_ns) a.copy_compute_overlap_percent = 100.0 * static_cast<double>(a.overlap_ns) / static_cast<double>(a.copy_ns);
  a.gap_count = gaps.size();
  gap_figures(gaps.data(), gaps.data() + gaps.size(), a);
  a.kernel_median_ns = quantiles_of(kernel_ns.data(), kernel_ns.data() + kernel_ns.size(), {}).median;
}

// The activity of range instance r (its records in `ops`) and the merged syncs; appends its gaps
// to `gaps` and its kernel durations to `kernel_ns`. The refs come
// kernels first, then copies, then memsets (range_ops places them in that order).
// The transfers and syncs are taken first, so that the kernels, read in start order (the usual
// case), feed the busy union, kernel time and copy overlap as they are read, never listed;
// from the first one out of order, the whole list is copied, merged and fed again.
inline activity_metrics instance_activity(const trace& t, const range_ops_index& ops, std::uint32_t r, timestamp_ns lo, timestamp_ns hi,
                                          const interval_list& syncs, gpu_intervals& g, value_list& gaps, duration_column& kernel_ns) {
  const std::uint32_t *first = ops.ref.data() + ops.offset[r], *const last = ops.ref.data() + ops.offset[r + 1], *const kernels = first;
  const kernel_record* const run = ops.run_size[r] != 0 ? t.kernels.data() + ops.run_first[r] : nullptr;
  if (!run) first = std::partition_point(first, last, [](std::uint32_t o) { return o >> range_ops_index::kind_shift == 0; }); // kinds ascend
  const std::size_t n = run ? ops.run_size[r] : static_cast<std::size_t>(first - kernels);
  auto copy_intervals = [](const auto& records, const std::uint32_t* from, const std::uint32_t* to, interval_list& into) {
    into.resize(static_cast<std::size_t>(to - from));
    for (std::size_t j = 0; j < into.size(); ++j) {
      const auto& rec = records[from[j] & range_ops_index::index_mask];
      into[j] = {rec.start, rec.end};
    }
  };
  auto take = [&](const auto& records, std::uint32_t kind, interval_list& into) {
    const auto* end = std::find_if(first, last, [&](std::uint32_t o) { return o >> range_ops_index::kind_shift != kind; });
    copy_intervals(records, first, end, into);
    first = end;
  };
  take(t.copies, 1, g.copies);
  take(t.memsets, 2, g.memsets);
  g.syncs.clear();
  auto y = std::upper_bound(syncs.begin(), syncs.end(), lo, [](timestamp_ns v, const interval& s) { return v < s.second; });
  for (; y != syncs.end() && y->first < hi; ++y) g.syncs.push_back(*y);
  activity_metrics m;
  m.kernels = n;
  m.copies = g.copies.size();
  m.memsets = g.memsets.size();
  for (auto* v : {&g.copies, &g.memsets}) merge_intervals(*v); // the syncs: merged already
  const auto transfers = union_of(g.copies, g.memsets);
  const auto at = gaps.size();
  kernel_union_sink sink(transfers, g.copies, lo, hi, gaps);
  if (read_instance_kernels(t, run, kernels, n, sink, kernel_ns)) {
    sink.finish(m);
  } else {
    gaps.resize(at);
    g.kernels.resize(n);
    for (std::size_t j = 0; j < n; ++j) {
      const auto& k = run ? run[j] : t.kernels[kernels[j] & range_ops_index::index_mask];
      g.kernels[j] = {k.start, k.end};
    }
    merge_intervals(g.kernels);
    kernel_union_sink again(transfers, g.copies, lo, hi, gaps);
    again.add_each(g.kernels.size(), [&](std::size_t j, interval& x) { // merged: in order
      x = g.kernels[j];
      return true;
    });
    again.finish(m);
  }
  window_figures(g, lo, hi, gaps, at, m);
  return m;
}

// Rows of the per-range metrics: one per range group, one per step family.
struct range_rows {
  std::vector<range_metrics> rows;
  std::vector<value_list> gaps;
  std::vector<duration_column> kernel_ns;
  std::vector<std::uint32_t> row_of_group, row_of_family;

  std::uint32_t row(const trace& t, const trace_index& x, const step_families& families, std::uint32_t r, bool step) {
    auto fresh = [&](std::string label) {
      rows.emplace_back();
      rows.back().range = std::move(label);
      gaps.emplace_back();
      kernel_ns.emplace_back();
      return static_cast<std::uint32_t>(rows.size() - 1);
    };
    auto& slot = step ? row_of_family[families.of_range[r]] : row_of_group[x.group_of[r]];
    if (slot == attribution::none) slot = fresh(step ? families.label[families.of_range[r]] : std::string(t.strings[t.ranges[r].name]));
    return slot;
  }
};

} // namespace detail

/// Per-range metrics: outermost ranges and step ranges that launched GPU work, over their
/// projected windows, summed per range name (step ranges as one family); and per step.
/// \code
///   auto a = nvscope::range_activity(t, x, nvscope::project_ranges(t, x), options);
///   for (const auto& s : a.steps) std::printf("%s %.1f%%\n", s.name.c_str(), s.activity.gpu_busy_percent);
/// \endcode
inline range_activity_result range_activity(const trace& t, const trace_index& x, const range_projection& p, const analysis_options& options) {
  auto is_step = detail::step_ranges(t, x, options);
  const auto families = detail::step_families_of(t, is_step);
  const auto order = detail::deepest_first(t, x);
  detail::drop_steps_in_own_family(t, x, families, order, is_step);
  range_activity_result out;
  const auto too_many = detail::range_ops_index::index_mask;
  if (t.kernels.size() > too_many || t.copies.size() > too_many || t.memsets.size() > too_many) return out; // over 10^9 of one kind
  const auto ops = detail::range_ops(t, x, detail::interesting_links(t, x, p, is_step, order));
  detail::interval_list syncs;
  detail::take_intervals(t.syncs, syncs);
  detail::merge_intervals(syncs);
  detail::range_rows rows;
  rows.row_of_group.assign(x.group_first.size(), attribution::none);
  rows.row_of_family.assign(families.label.size(), attribution::none);
  std::vector<std::uint32_t> row_of(t.ranges.size(), attribution::none);
  std::vector<std::size_t> records; // per row: what its kernel durations and gaps may reach
  for (std::uint32_t r = 0; r < t.ranges.size(); ++r) {
    if (ops.empty(r)) continue;
    row_of[r] = rows.row(t, x, families, r, is_step[r]);
    records.resize(rows.rows.size(), 0);
    records[row_of[r]] += ops.records(r);
  }
  for (std::size_t q = 0; q < records.size(); ++q) rows.kernel_ns[q].reserve(records[q]), rows.gaps[q].reserve(records[q]);
  detail::gpu_intervals g;
  for (std::uint32_t r = 0; r < t.ranges.size(); ++r) {
    if (ops.empty(r)) continue;
    const auto row = row_of[r];
    const auto a = detail::instance_activity(t, ops, r, p.first[r], p.last[r], syncs, g, rows.gaps[row], rows.kernel_ns[row]);
    detail::add_instance(rows.rows[row], a);
    if (is_step[r]) out.steps.push_back({r, std::string(t.strings[t.ranges[r].name]), a.kernels, a});
  }
  for (std::size_t q = 0; q < rows.rows.size(); ++q) detail::finish_metrics(rows.rows[q], rows.gaps[q], rows.kernel_ns[q]);
  detail::order_rows(rows.rows, [](const range_metrics& m) { return std::make_tuple(detail::descending(m.activity.kernel_ns), std::string_view(m.range)); });
  detail::order_rows(out.steps, [&](const step_metrics& s) { return std::make_tuple(t.ranges[s.range].start, s.range); });
  out.per_range = std::move(rows.rows);
  return out;
}

} // namespace v1
} // namespace nvscope

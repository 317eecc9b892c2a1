// nvscope-target: nvscope
#pragma once

/// \file analyze/range_kernels.hpp
/// `nvtx_kern_sum`: kernels grouped by every range enclosing their launch, by thread and by
/// kernel name, as nsys groups them. A kernel under n nested ranges of one name counts once in
/// "Kern Inst" and n times in the time figures (nsys's rule). Kernels are first gathered per
/// (innermost range, kernel name) pair; each pair then walks the nesting once, in runs of
/// same-named ranges, so a deep stack of one name costs one step, not one per level.
///
/// \code
///   const auto x = nvscope::index_trace(t);
///   for (const auto& row : nvscope::range_kernel_summary(t, x)) std::puts(row.kernel.c_str());
/// \endcode

#include <nvscope/analyze/detail/buckets.hpp>
#include <nvscope/analyze/detail/inlining.hpp>
#include <nvscope/analyze/detail/prefetch.hpp>
#include <nvscope/analyze/grouping.hpp>
#include <nvscope/analyze/index.hpp>
#include <nvscope/analyze/kern_sum_joins.hpp>
#include <nvscope/analyze/names.hpp>
#include <nvscope/analyze/projection.hpp>
#include <nvscope/analyze/report.hpp>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

namespace nvscope {
inline namespace v1 {
namespace detail {

// Kernels gathered per (range, kernel name) pair; pair p's durations are
// durations[offset[p] .. offset[p + 1]).
struct kernel_pairs {
  scratch_column<std::uint32_t> range, name; // every place written once
  scratch_vector<std::uint32_t> offset{0};
  scratch_column<std::uint64_t> durations;
};

// Numbers (range, kernel name) pairs as they first come. A name met again under the range it
// was last met under (the usual run of kernels) costs an array read. Otherwise the range's own
// pairs are searched, newest first, while it has few (a list through the pairs, headed per
// range: memory read in the order the ranges come); a range with many names is looked up in
// key_numbers. A trace with a range per operator (PyTorch's) makes a pair of almost every
// kernel, found on its range's short list.
class pair_numbers {
 public:
  pair_numbers(std::size_t names, std::size_t ranges) : last_range_(names, no_index), last_pair_(names, 0), head_(ranges, no_index), length_(ranges, 0) {}
  std::uint32_t of(std::uint32_t range, std::uint32_t name) {
    if (last_range_[name] == range) return last_pair_[name];
    last_range_[name] = range;
    return last_pair_[name] = find_or_add(range, name);
  }
  void reserve(std::size_t pairs) { // reserved, not touched: no cost beyond what is used
    range_.reserve(pairs);
    name_.reserve(pairs);
    next_.reserve(pairs);
  }
  std::size_t size() const noexcept { return range_.size(); }
  std::uint32_t range(std::uint32_t p) const noexcept { return range_[p]; }
  std::uint32_t name(std::uint32_t p) const noexcept { return name_[p]; }

 private:
  static constexpr std::uint8_t short_list = 16; // pairs a range has before its pairs go to the table
  std::uint32_t find_or_add(std::uint32_t range, std::uint32_t name) {
    if (range < head_.size() && length_[range] < short_list) {
      for (auto p = head_[range]; p != no_index; p = next_[p])
        if (name_[p] == name) return p;
      const auto p = add(range, name);
      next_.back() = head_[range];
      head_[range] = p;
      if (++length_[range] == short_list) // from now on by the table: every pair of the range goes in
        for (auto q = p; q != no_index; q = next_[q]) index(q);
      return p;
    }
    const auto n = wide_.of(static_cast<std::uint64_t>(range) << 32 | name);
    if (n == pair_of_wide_.size()) pair_of_wide_.push_back(add(range, name));
    return pair_of_wide_[n];
  }
  std::uint32_t add(std::uint32_t range, std::uint32_t name) {
    range_.push_back(range);
    name_.push_back(name);
    next_.push_back(no_index);
    return static_cast<std::uint32_t>(range_.size() - 1);
  }
  void index(std::uint32_t p) {
    wide_.of(static_cast<std::uint64_t>(range_[p]) << 32 | name_[p]);
    pair_of_wide_.push_back(p);
  }

  scratch_vector<std::uint32_t> last_range_, last_pair_; // per name
  scratch_vector<std::uint32_t> head_;                   // per range: its newest pair
  scratch_vector<std::uint8_t> length_;                  // per range: its pairs, up to short_list
  scratch_vector<std::uint32_t> range_, name_, next_;    // per pair; next_: the range's pair before it
  key_numbers wide_;                                  // pairs of ranges with many: number in it
  scratch_vector<std::uint32_t> pair_of_wide_;           // -> pair
};

// (range, kernel) entries gathered into pairs: `add` takes them in kernel order, `finish`
// numbers the pairs by range, then by first appearance under it, and places their durations
// by one counting sort. `finish` frees the entries before it returns, so that the next
// pairing's finish reuses their pages.
class pairing {
 public:
  pairing(std::size_t names, std::size_t ranges, std::size_t entries) : numbers_(names, ranges), ranges_(ranges) {
    numbers_.reserve(entries); // reserved, not touched: no cost beyond what is used
    pair_of_.reserve(entries);
    duration_of_.reserve(entries);
  }
  void add(std::uint32_t range, std::uint32_t name, std::uint64_t duration) {
    pair_of_.push_back(numbers_.of(range, name));
    duration_of_.push_back(duration);
  }
  kernel_pairs finish() {
    kernel_pairs kp;
    {
      // Pairs by range, first appearance within one (a counting sort: a range per operator
      // makes a pair of almost every kernel, millions to order).
      const buckets ranked(numbers_.size(), ranges_, [&](std::size_t p) { return numbers_.range(static_cast<std::uint32_t>(p)); });
      const auto& by_range = ranked.order;
      scratch_vector<std::uint32_t> rank(numbers_.size());
      kp.range.resize(by_range.size());
      kp.name.resize(by_range.size());
      for (std::uint32_t i = 0; i < by_range.size(); ++i) {
        rank[by_range[i]] = i;
        kp.range[i] = numbers_.range(by_range[i]);
        kp.name[i] = numbers_.name(by_range[i]);
      }
      numbers_ = pair_numbers(0, 0);
      kp.offset.assign(kp.range.size() + 1, 0);
      for (auto& p : pair_of_) ++kp.offset[(p = rank[p]) + 1]; // entries now name their pair by its place, counted
    }
    for (std::size_t p = 1; p < kp.offset.size(); ++p) kp.offset[p] += kp.offset[p - 1];
    auto cursor = kp.offset;
    kp.durations.resize(pair_of_.size());
    for (std::size_t e = 0; e < pair_of_.size(); ++e) kp.durations[cursor[pair_of_[e]]++] = duration_of_[e];
    pair_of_ = {};
    duration_of_ = {};
    return kp;
  }

 private:
  pair_numbers numbers_;
  std::size_t ranges_;
  scratch_vector<std::uint32_t> pair_of_;
  scratch_vector<std::uint64_t> duration_of_;
};

// Rows of nvtx_kern_sum under construction: (group, thread, kernel name) -> row, numbered as
// they first come; each row takes pairs with a weight. A pair weighs into the row of every
// group on its range's stack, and a trace with a range per operator makes a pair of almost
// every kernel: rows are found by array reads where they can be. Each group remembers its last
// thread and that (group, thread)'s number; a (group, thread) numbered while the table allows
// has a slice of `names` slots, one per kernel name number; the others, and names past `names`,
// go through key_numbers.
struct kern_rows {
  struct key {
    std::uint32_t group, thread, name;
    bool operator==(const key& o) const noexcept { return group == o.group && thread == o.thread && name == o.name; }
  };
  struct contribution { // 16 bytes: there are several per kernel on a trace with a range per operator
    std::uint32_t row, source, pair, weight; // pair `pair` of sources[source]
  };
  const kernel_pairs* sources[2]{}; // push/pop, start/end
  std::vector<key> keys;
  scratch_vector<std::uint64_t> instances;
  scratch_vector<contribution> parts;

  // `groups`, `names`: the range groups and kernel name numbers there are; `most_slots`: the slots
  // the table may take (memory: 4 bytes each).
  kern_rows(std::size_t groups, std::size_t names, std::size_t most_slots)
      : thread_of_group_(groups, 0), number_of_group_(groups, no_index), names_(names), most_slots_(most_slots) {}

  NVSCOPE_DETAIL_INLINE std::uint32_t row(std::uint32_t group, std::uint32_t thread, std::uint32_t name) {
    if (!keys.empty() && last_ == key{group, thread, name}) return last_row_; // runs of one row are the rule
    last_ = key{group, thread, name};
    const auto gt = number_of(group, thread);
    if (gt < sliced_ && name < names_) {
      auto& r = slots_[static_cast<std::size_t>(gt) * names_ + name];
      if (r == no_index) r = add(group, thread, name);
      return last_row_ = r;
    }
    return last_row_ = wide_row(gt, group, thread, name);
  }
  // The rows of (group, thread) by name number, where it has a slice of the table (rows not made
  // yet read no_index), else null: row() read in place, for many names of one group and thread.
  const std::uint32_t* slice(std::uint32_t group, std::uint32_t thread) {
    const auto gt = number_of(group, thread);
    return gt < sliced_ ? slots_.data() + static_cast<std::size_t>(gt) * names_ : nullptr;
  }
  std::size_t names() const noexcept { return names_; }

 private:
  // The number of (group, thread): read from the group's arrays while its thread stays the same.
  NVSCOPE_DETAIL_INLINE std::uint32_t number_of(std::uint32_t group, std::uint32_t thread) {
    const bool known = group < thread_of_group_.size() && number_of_group_[group] != no_index && thread_of_group_[group] == thread;
    return known ? number_of_group_[group] : group_thread(group, thread);
  }
  // The number of (group, thread) where the group's last thread was another (or none yet); while
  // the group's thread stays the same, row() reads it from number_of_group_ (any thread value may come).
  NVSCOPE_DETAIL_COLD std::uint32_t group_thread(std::uint32_t group, std::uint32_t thread) {
    const bool known = group < thread_of_group_.size();
    const auto gt = group_threads_.of(static_cast<std::uint64_t>(group) << 32 | thread);
    if (gt == sliced_ && slots_.size() + names_ <= most_slots_) { // new, and room for its slice
      slots_.resize(slots_.size() + names_, no_index);
      ++sliced_;
    }
    if (known) {
      thread_of_group_[group] = thread;
      number_of_group_[group] = gt;
    }
    return gt;
  }
  NVSCOPE_DETAIL_COLD std::uint32_t wide_row(std::uint32_t gt, std::uint32_t group, std::uint32_t thread, std::uint32_t name) { // past the slots
    const auto n = wide_.of(static_cast<std::uint64_t>(gt) << 32 | name);
    if (n == row_of_wide_.size()) row_of_wide_.push_back(add(group, thread, name));
    return row_of_wide_[n];
  }
  NVSCOPE_DETAIL_COLD std::uint32_t add(std::uint32_t group, std::uint32_t thread, std::uint32_t name) {
    keys.push_back({group, thread, name});
    instances.push_back(0);
    return static_cast<std::uint32_t>(keys.size() - 1);
  }

  std::vector<std::uint32_t> thread_of_group_, number_of_group_; // per group: its last thread, that (group, thread)'s number (no_index: none yet)
  std::size_t names_, most_slots_;
  std::uint32_t sliced_ = 0;          // (group, thread) numbers below it have a slice of slots_
  scratch_vector<std::uint32_t> slots_; // per sliced (group, thread), per name: its row; no_index: none yet
  key_numbers group_threads_, wide_;  // (group, thread) -> number; (that number, name) -> number in row_of_wide_
  std::vector<std::uint32_t> row_of_wide_;
  key last_{};
  std::uint32_t last_row_ = 0;
};

// Per push/pop range: the nearest ancestor of another group, and how many ranges of its own
// group lead up to it (itself included). `order`: deepest_first's.
inline void same_group_runs(const trace& t, const trace_index& x, const scratch_vector<std::uint32_t>& order, scratch_vector<std::uint32_t>& up,
                            scratch_vector<std::uint32_t>& len) {
  up.assign(t.ranges.size(), attribution::none);
  len.assign(t.ranges.size(), 1);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const auto r = *it, p = x.links.parent[r];
    if (p == attribution::none) continue;
    const bool same = x.group_of[p] == x.group_of[r];
    up[r] = same ? up[p] : p;
    len[r] = same ? len[p] + 1 : 1;
  }
}

// Push/pop range instances: a range counts once in the row of (its group, its thread, a kernel
// name) for each name held in it or below. The names go up the nesting once a (range, name): each
// range, children first (`order`, deepest_first's), takes the names of its own pairs and those its
// children passed up, each once (a stamp a name), counts them and passes them to its parent. The
// ranges are read in their order; a walk up the parents from each pair, name by name, read
// them far apart (memory-bound on a trace with a range per operator). Rows exist already
// (add_push_pop made them).
inline void count_instances(const trace& t, const trace_index& x, const kernel_pairs& kp, std::size_t names,
                            const scratch_vector<std::uint32_t>& order, kern_rows& rows) {
  struct held { // a name on a range's list
    std::uint32_t name, next;
  };
  scratch_vector<std::uint32_t> head(t.ranges.size(), no_index); // per range: its list's newest entry
  scratch_vector<held> lists;
  lists.reserve(2 * kp.name.size()); // reserved, touched only as far as used
  std::uint32_t spare = no_index; // entries of ranges counted already, taken again before new ones
  const auto hold = [&](std::uint32_t r, std::uint32_t name) {
    auto e = spare;
    if (e != no_index) {
      spare = lists[e].next;
      lists[e] = {name, head[r]};
    } else {
      e = static_cast<std::uint32_t>(lists.size());
      lists.push_back({name, head[r]});
    }
    head[r] = e;
  };
  for (std::uint32_t p = 0; p < kp.name.size(); ++p) hold(kp.range[p], kp.name[p]);
  std::vector<std::uint32_t> stamp(names, no_index); // per name: the range it was last counted for
  for (const auto r : order) {
    if (head[r] == no_index) continue;
    const auto group = x.group_of[r], thread = t.ranges[r].thread, up = x.links.parent[r];
    const std::uint32_t* slice = rows.slice(group, thread); // this range's rows by name, read in place
    auto e = head[r];
    for (;; e = lists[e].next) { // indexes: hold() may move the entries
      const auto name = lists[e].name;
      if (stamp[name] != r) {
        stamp[name] = r;
        auto row = slice && name < rows.names() ? slice[name] : no_index;
        if (row == no_index) { // past the table's slices (or a row not made yet: row() makes it, and the table may move)
          row = rows.row(group, thread, name);
          slice = rows.slice(group, thread);
        }
        ++rows.instances[row];
        if (up != attribution::none) hold(up, name);
      }
      if (lists[e].next == no_index) break;
    }
    lists[e].next = spare; // the list's entries spare again: memory stays linear in what is held
    spare = head[r];
    head[r] = no_index;
  }
}

// Push/pop part: each pair weighs into the row of every group on its range's stack.
inline void add_push_pop(const trace& t, const trace_index& x, kernel_pairs& kp, std::size_t names, kern_rows& rows) {
  rows.sources[0] = &kp;
  rows.parts.reserve(2 * kp.range.size()); // reserved, touched only as far as used
  const auto order = deepest_first(t, x);
  scratch_vector<std::uint32_t> up, len;
  same_group_runs(t, x, order, up, len);
  using run = std::pair<std::uint32_t, std::uint32_t>; // (group, weight)
  std::vector<run> runs;
  for (std::uint32_t p = 0; p + 1 < kp.offset.size(); ++p) {
    const auto r0 = kp.range[p], name = kp.name[p], thread = t.ranges[r0].thread;
    const bool same_range = p > 0 && kp.range[p - 1] == r0; // pairs come by range: its runs are known
    if (!same_range) { // the stack's runs: counted, then written in place
      std::size_t n = 0;
      for (auto r = r0; r != attribution::none; r = up[r]) ++n;
      runs.resize(n);
      n = 0;
      for (auto r = r0; r != attribution::none; r = up[r]) runs[n++] = {x.group_of[r], len[r]};
      if (n > 1) { // groups met twice on the stack joined: sorted (up to 8 by insertion)
        if (n <= 8)
          for (std::size_t i = 1; i < n; ++i)
            for (auto j = i; j > 0 && runs[j] < runs[j - 1]; --j) std::swap(runs[j], runs[j - 1]);
        else
          std::sort(runs.begin(), runs.end());
        join_equal_neighbours(runs, [](const run& x, const run& y) { return x.first == y.first; }, [](run& into, const run& from) { into.second += from.second; });
      }
    }
    for (const auto& [g, w] : runs) rows.parts.push_back({rows.row(g, thread, name), 0, p, w});
  }
  count_instances(t, x, kp, names, order, rows);
}

// Start/end part: each (range, name) pair is one range instance with weight 1.
inline void add_start_end(const trace& t, const trace_index& x, kernel_pairs& kp, kern_rows& rows) {
  rows.sources[1] = &kp;
  for (std::uint32_t p = 0; p + 1 < kp.offset.size(); ++p) {
    const auto r = kp.range[p];
    const auto row = rows.row(x.group_of[r], t.ranges[r].thread, kp.name[p]);
    rows.parts.push_back({row, 1, p, 1});
    ++rows.instances[row];
  }
}

// A contribution once its row is known (rows.parts put in row order): 8 bytes, not 16.
struct row_part {
  static constexpr unsigned source_shift = 31;
  std::uint32_t pair; // pair | source << source_shift
  std::uint32_t weight;
};

// The statistics of one row from its contributions: unweighted (the usual case), from a
// contiguous copy of its durations (gathered once through the pairs; the statistics then read
// it several times in order, not through the pairs each time), or where one pair makes the row
// (a start/end range's, a range per operator's), from that pair's durations in place;
// weighted, from a sorted copy.
inline duration_stats row_stats(const kern_rows& rows, const row_part* first, const row_part* last, const row_part* stop,
                                scratch_column<std::uint64_t>& values, scratch_vector<weighted_value>& scratch) {
  auto slice = [&](const row_part& c) {
    const auto& kp = *rows.sources[c.pair >> row_part::source_shift];
    const auto pair = c.pair & ~(1u << row_part::source_shift);
    auto* d = kp.durations.data();
    return std::make_pair(d + kp.offset[pair], d + kp.offset[pair + 1]);
  };
  bool weighted = false;
  for (auto c = first; c != last; ++c) weighted = weighted || c->weight != 1;
  if (!weighted && last - first == 1) { // one pair's durations: read where they lie, not copied first
    const auto [d, e] = slice(*first);
    return stats_of(d, e);
  }
  if (!weighted) {
    std::size_t used = 0; // values written; the column grown (unset) where a pair's would pass its end
    for (auto c = first; c != last; ++c) {
      if (stop - c > static_cast<std::ptrdiff_t>(prefetch_ahead)) { // a pair's dozen durations span two cache lines: both asked for
        const auto [d, e] = slice(c[prefetch_ahead]);
        prefetch(d);
        if (e != d) prefetch(e - 1);
      }
      const auto [d, e] = slice(*c);
      const auto n = static_cast<std::size_t>(e - d);
      if (values.size() - used < n) { // cut to what this row wrote first: a move reads nothing unwritten
        values.resize(used);
        values.resize(std::max(2 * used, used + n));
      }
      std::copy(d, e, values.data() + used);
      used += n;
    }
    return stats_of(values.data(), values.data() + used);
  }
  scratch.clear();
  for (auto c = first; c != last; ++c)
    for (auto [d, e] = slice(*c); d != e; ++d) scratch.push_back({*d, c->weight});
  return weighted_stats_of(scratch.data(), scratch.data() + scratch.size());
}

// Each row's statistics, in row order. The contributions are copied in row order first,
// without their row (several a kernel on PyTorch's shape). The contributions are let go once
// copied (16 bytes each: their pages serve the statistics), and the copy is gone before the
// caller's next array.
inline scratch_column<duration_stats> kern_row_stats(kern_rows& rows) {
  const buckets by_row(rows.parts.size(), rows.keys.size(), [&](std::size_t i) { return rows.parts[i].row; });
  scratch_column<row_part> parts(rows.parts.size()); // every place written once
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const auto& c = rows.parts[by_row.order[i]];
    parts[i] = {c.pair | c.source << row_part::source_shift, c.weight};
  }
  decltype(rows.parts)().swap(rows.parts);
  scratch_vector<weighted_value> scratch;
  scratch_column<std::uint64_t> values; // a row's unweighted durations gathered (reused row after row)
  scratch_column<duration_stats> stats(rows.keys.size()); // every row written below
  for (std::size_t r = 0; r < stats.size(); ++r)
    stats[r] = row_stats(rows, parts.data() + by_row.offset[r], parts.data() + by_row.offset[r + 1], parts.data() + parts.size(), values, scratch);
  return stats;
}

// The rows, statistics and labels filled in, in nsys's order: (range label, pid, tid, largest
// total first, style, kernel name). Labels and kernel names are ranked once, a label per
// range group and a name per kernel name (a PyTorch-shaped trace has 270 K rows and few of
// either), and the rows' order found from compact keys, each beside its row's number (the sort
// reads them in place, not through the number; the same comparisons, so the same order as
// sorting the numbers). The rows are then made in that order, each string written once where
// it stays, not moved along the permutation's cycles. pid is the trace's for every row; a
// group's ranges share one style.
inline std::vector<range_kernel_row> kern_rows_out(const trace& t, const trace_index& x, kern_rows& rows, const key_numbers& kernel_names) {
  const auto stats = kern_row_stats(rows);
  // The groups and kernel names the rows hold, each numbered once (through tables as large as
  // their ids reach, not hashed); their labels, ranked.
  std::uint32_t most_name = 0;
  for (const auto& k : rows.keys) most_name = std::max(most_name, k.name);
  key_numbers group_numbers(x.group_first.size()), name_numbers(rows.keys.empty() ? 0 : std::size_t{most_name} + 1);
  std::vector<std::uint32_t> group_of_row(rows.keys.size()), name_of_row(rows.keys.size());
  std::vector<std::string> labels;
  std::vector<std::string_view> names;
  for (std::size_t r = 0; r < rows.keys.size(); ++r) {
    const auto& k = rows.keys[r];
    group_of_row[r] = group_numbers.of(k.group);
    if (group_of_row[r] == labels.size()) labels.push_back(range_label(t, t.ranges[x.group_first[k.group]]));
    name_of_row[r] = name_numbers.of(k.name);
    if (name_of_row[r] == names.size()) names.push_back(t.strings[static_cast<string_id>(kernel_names.key(k.name))]);
  }
  const auto label_rank = string_ranks(labels), name_rank = string_ranks(names);
  const auto tid_of = [&](std::uint32_t thread) { return os_thread_id(t, thread); };
  // By label first, a counting sort (labels are few beside the rows: each step range of a trace
  // makes its own, with a few rows), then each label's rows by the rest of the key, read in
  // place beside the row's number; rows alike in every key (only rows of one label, thread id,
  // total, style and kernel name string could be) by row number, their first appearance.
  struct keyed {
    std::tuple<std::uint64_t, std::uint64_t, bool, std::uint32_t> key; // "PushPop" < "StartEnd"
    std::uint32_t row;
  };
  const buckets by_label(rows.keys.size(), labels.size(), [&](std::size_t r) { return label_rank[group_of_row[r]]; });
  scratch_column<keyed> order(rows.keys.size()); // every place written below
  for (std::uint32_t i = 0; i < order.size(); ++i) {
    const auto r = by_label.order[i];
    order[i] = {{tid_of(rows.keys[r].thread), descending(stats[r].total), !t.ranges[x.group_first[rows.keys[r].group]].is_push_pop,
                 name_rank[name_of_row[r]]},
                r};
  }
  for (std::size_t b = 0; b < by_label.count(); ++b)
    std::sort(order.begin() + by_label.offset[b], order.begin() + by_label.offset[b + 1],
              [](const keyed& x, const keyed& y) { return x.key != y.key ? x.key < y.key : x.row < y.row; });
  std::vector<range_kernel_row> out(order.size());
  for (std::size_t i = 0; i < out.size(); ++i) {
    const auto r = order[i].row;
    const auto& k = rows.keys[r];
    const auto& first = t.ranges[x.group_first[k.group]];
    auto& row = out[i];
    row.range = labels[group_of_row[r]];
    row.style = style_name(first);
    row.pid = t.process_id;
    row.tid = tid_of(k.thread);
    row.range_instances = rows.instances[r];
    row.time = stats[r];
    row.kernel = std::string(names[name_of_row[r]]);
    row.name = std::string(t.strings[first.name]);
  }
  return out;
}

} // namespace detail

/// `nvtx_kern_sum` (docs/analysis.md says which ranges count and where nvscope differs), with
/// the rows of kernels no range encloses and Kern Inst as nsys counts it (kern_sum_joins.hpp).
/// \code
///   auto rows = nvscope::range_kernel_summary(t, nvscope::index_trace(t));
/// \endcode
inline std::vector<range_kernel_row> range_kernel_summary(const trace& t, const trace_index& x, name_form form = name_form::demangled) {
  // Kernel names numbered densely as they first come by the id they are grouped under in `form`,
  // so that the row table's slot per (group, thread) and name is sized by the kernel names, not
  // by the string table (which also holds every range name). Every id past the string table
  // shares the last number, which prints `<unknown>` as in cuda_gpu_kern_sum.
  const auto ids = detail::kernel_name_ids(t, form);
  detail::key_numbers names(ids.size() + 1);
  const auto name_of = [&ids, &names](string_id n) {
    const string_id id = n < ids.size() ? ids[n] : n;
    return names.of(id < ids.size() ? id : ids.size());
  };
  // One pass over the kernels left in, with their launch: each enters the pair of its
  // innermost push/pop range and of every start/end range open at its launch.
  detail::pairing pp(ids.size() + 1, t.ranges.size(), t.kernels.size()), se(ids.size() + 1, t.ranges.size(), x.start_end_ranges.size());
  for (std::uint32_t i = 0; i < t.kernels.size(); ++i) {
    const auto l = x.links.kernel_launch[i];
    if (!x.kernel_ok[i] || l == attribution::none) continue;
    const auto& kernel = t.kernels[i];
    const std::uint32_t name = name_of(kernel.name);
    const std::uint64_t duration = kernel.end - kernel.start;
    if (x.launch_owner[l] != attribution::none) pp.add(x.launch_owner[l], name, duration);
    for (auto s = x.start_end_offset[l]; s < x.start_end_offset[l + 1]; ++s) se.add(x.start_end_ranges[s], name, duration);
  }
  auto push_pop = pp.finish(); // each finish frees its pairing's entries: the second reuses the first's pages
  auto start_end = se.finish();
  for (const auto* kp : {&push_pop, &start_end})
    if (kp->range.size() >> detail::row_part::source_shift) throw std::length_error("nvscope: nvtx_kern_sum: more than 2^31 (range, kernel name) pairs");
  // The row table's slots: at most two per pair, and a few to start (memory linear in the pairs).
  detail::kern_rows rows(x.group_first.size(), names.size(), 2 * (push_pop.range.size() + start_end.range.size()) + 4096);
  detail::add_push_pop(t, x, push_pop, names.size(), rows);
  detail::add_start_end(t, x, start_end, rows);
  auto out = detail::kern_rows_out(t, x, rows, names);
  detail::count_start_end_kernels_once(t, x, form, out);
  auto outside = detail::unranged_kernel_rows(t, x, form); // empty range: first in the table's order
  out.insert(out.begin(), std::make_move_iterator(outside.begin()), std::make_move_iterator(outside.end()));
  return out;
}

} // namespace v1
} // namespace nvscope

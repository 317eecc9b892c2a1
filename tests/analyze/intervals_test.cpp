// Interval arithmetic (analyze/intervals.hpp): merge_intervals, union_of of two and three
// merged lists, and covered_union's length and gaps of two, against the reference of every
// interval in one list, merged; on fresh random lists of many sizes (empty ones, one long
// beside short ones, as kernels beside copies), with touching, nested and equal-start intervals;
// and overall_activity and range_activity, kernels read in place or copied, against activity_of
// on random traces and against each other on a synthetic one with the kernels shuffled; and
// project_ranges against per-launch windows summed into ranges.

#include <nvscope/analyze/activity.hpp>
#include <nvscope/analyze/intervals.hpp>
#include <nvscope/analyze/projection.hpp>
#include <nvscope/analyze/range_activity.hpp>
#include "synthetic_trace.hpp"

#include <doctest/doctest.h>
#include "test_seed.hpp"

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

namespace {

using nvscope::detail::interval;
using nvscope::detail::interval_list;

// A merged list of about n intervals in [0, span): random starts and lengths, merged.
interval_list random_merged(std::mt19937_64& rng, std::size_t n, std::uint64_t span, std::uint64_t longest) {
  interval_list v;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t start = rng() % span;
    v.emplace_back(start, start + rng() % longest); // some empty: merge drops them
  }
  nvscope::detail::merge_intervals(v);
  return v;
}

// Every figure of two activity_metrics equal.
bool same_activity(const nvscope::activity_metrics& x, const nvscope::activity_metrics& y) {
  return x.window_begin == y.window_begin && x.window_end == y.window_end && x.window_ns == y.window_ns && x.busy_ns == y.busy_ns &&
         x.kernel_ns == y.kernel_ns && x.copy_ns == y.copy_ns && x.overlap_ns == y.overlap_ns && x.sync_ns == y.sync_ns &&
         x.gpu_busy_percent == y.gpu_busy_percent && x.copy_compute_overlap_percent == y.copy_compute_overlap_percent &&
         x.sync_percent == y.sync_percent && x.gap_count == y.gap_count && x.gap_median_ns == y.gap_median_ns &&
         x.gap_p90_ns == y.gap_p90_ns && x.kernels == y.kernels && x.copies == y.copies && x.memsets == y.memsets &&
         x.kernel_median_ns == y.kernel_median_ns;
}

// Swaps about a quarter of the neighbouring records: out of start order by a little.
template <class Records>
void swap_neighbours(Records& v, std::mt19937_64& rng) {
  for (std::size_t i = 0; i + 1 < v.size(); ++i)
    if (rng() % 4 == 0) std::swap(v[i], v[i + 1]), ++i;
}

bool is_merged(const interval_list& v) {
  for (std::size_t i = 0; i < v.size(); ++i)
    if (v[i].second <= v[i].first || (i > 0 && v[i].first <= v[i - 1].second)) return false;
  return true;
}

interval_list reference_union(std::initializer_list<const interval_list*> lists) {
  interval_list all;
  for (const auto* l : lists) all.insert(all.end(), l->begin(), l->end());
  nvscope::detail::merge_intervals(all);
  return all;
}

} // namespace

TEST_CASE("merge_intervals leaves sorted, disjoint, non-touching intervals covering what the input covered") {
  const interval_list v0{{5, 9}, {0, 3}, {3, 4}, {8, 12}, {20, 20}, {15, 16}};
  interval_list v = v0;
  nvscope::detail::merge_intervals(v);
  CHECK(v == interval_list{{0, 4}, {5, 12}, {15, 16}});
}

TEST_CASE("union_of two and three merged lists equals merging them all at once") {
  NVSCOPE_SEEDED_RNG(std::mt19937_64, rng);
  const std::size_t sizes[] = {0, 1, 2, 5, 100, 3000};
  std::size_t cases = 0, wrong = 0;
  for (const auto na : sizes)
    for (const auto nb : sizes)
      for (const auto nc : {std::size_t{0}, std::size_t{1}, std::size_t{40}}) {
        const std::uint64_t span = 1 + rng() % 100000, longest = 1 + rng() % 400;
        const auto a = random_merged(rng, na, span, longest), b = random_merged(rng, nb, span, longest * 10),
                   c = random_merged(rng, nc, span, longest);
        const auto two = nvscope::detail::union_of(a, b), three = nvscope::detail::union_of(a, b, c);
        wrong += !(two == reference_union({&a, &b})) || !is_merged(two);
        wrong += !(three == reference_union({&a, &b, &c})) || !is_merged(three);
        wrong += !(nvscope::detail::union_of(c, b, a) == three);
        ++cases;
      }
  CHECK(cases == 108);
  CHECK(wrong == 0);
  // One long interval of one list covering several of the other's: the rest is joined, not copied.
  const interval_list longer{{0, 100}}, shorter{{10, 20}, {30, 40}, {100, 110}, {120, 130}};
  CHECK(nvscope::detail::union_of(longer, shorter) == interval_list{{0, 110}, {120, 130}});
  CHECK(nvscope::detail::union_of(shorter, longer) == interval_list{{0, 110}, {120, 130}});
}

TEST_CASE("covered_union gives the clipped length and the gaps of the union of two merged lists, without writing it") {
  NVSCOPE_SEEDED_RNG(std::mt19937_64, rng);
  const std::size_t sizes[] = {0, 1, 2, 5, 100, 3000};
  std::size_t cases = 0, wrong = 0;
  for (const auto na : sizes)
    for (const auto nb : sizes) {
      const std::uint64_t span = 1 + rng() % 100000, longest = 1 + rng() % 400;
      const auto a = random_merged(rng, na, span, longest), b = random_merged(rng, nb, span, longest * 10);
      const auto all = reference_union({&a, &b});
      const std::uint64_t lo = rng() % (span / 2 + 1), hi = lo + rng() % (span + 1); // windows inside, across and past the lists
      nvscope::detail::value_list gaps{7}, expected_gaps{7}; // appended after what the list held
      nvscope::detail::append_gaps(all, expected_gaps);
      wrong += nvscope::detail::covered_union(a, b, lo, hi, gaps) != nvscope::detail::covered(all, lo, hi);
      wrong += !(gaps == expected_gaps);
      gaps.resize(1);
      wrong += nvscope::detail::covered_union(b, a, lo, hi, gaps) != nvscope::detail::covered(all, lo, hi) || !(gaps == expected_gaps);
      ++cases;
    }
  CHECK(cases == 36);
  CHECK(wrong == 0);
  nvscope::detail::value_list gaps;
  CHECK(nvscope::detail::covered_union({{0, 10}, {20, 30}}, {{10, 12}, {40, 50}}, 5, 45, gaps) == 5 + 2 + 10 + 5); // touching joins
  CHECK(gaps == nvscope::detail::value_list{8, 10});
}

// The gaps union_walk appends through the place it holds (its list sized to its room while it
// walks, grown past it, cut at the end): each one in order after what the list held, with or
// without room reserved.
TEST_CASE("union_walk appends each gap after what its list held, growing it") {
  NVSCOPE_SEEDED_RNG(std::mt19937_64, rng);
  std::size_t cases = 0, wrong = 0;
  for (const std::size_t n : {0, 1, 2, 3, 10, 500, 4000}) {
    for (int round = 0; round < 8; ++round) {
      const std::uint64_t span = 1 + rng() % 200000;
      const auto list = random_merged(rng, n, span, 1 + rng() % 300);
      nvscope::detail::value_list gaps{rng() % 5, ~std::uint64_t{0} >> (rng() % 2)}; // values before the walk's: not its own
      if (round % 2) gaps.reserve(gaps.size() + rng() % (n + 1)); // room for some, all or none of the gaps: the walk grows its list
      const auto before = gaps.size();
      const nvscope::detail::value_list held(gaps.begin(), gaps.end());
      nvscope::detail::union_walk walk(rng() % (span + 1), span, gaps);
      for (const auto& x : list) walk.add(x);
      walk.finish();
      nvscope::detail::value_list expected_gaps(held);
      nvscope::detail::append_gaps(list, expected_gaps);
      wrong += !(gaps == expected_gaps); // what the list held, then each gap in order
      wrong += gaps.size() - before != (list.empty() ? 0 : list.size() - 1);
      ++cases;
    }
  }
  CHECK(cases == 56);
  CHECK(wrong == 0);
}

// overall_activity reads the kernels in place when they come in start order (their union
// merged as it is read, never copied) and copies, sorts and merges them otherwise: both must
// give every figure of activity_of over every record's interval. Random traces: overlapping,
// touching, nested, empty and unended kernels, copies overlapping them, memsets, syncs, windows
// inside, across and past the records; each in start order, with neighbours swapped and shuffled.
TEST_CASE("overall_activity in place equals activity_of over copied intervals, kernels in start order or not") {
  using namespace nvscope;
  NVSCOPE_SEEDED_RNG(std::mt19937_64, rng);
  std::size_t cases = 0, wrong = 0, busy = 0;
  for (const std::size_t n : {0, 1, 2, 7, 100, 5000}) {
    for (int round = 0; round < 8; ++round) {
      trace t;
      const std::uint64_t span = 1 + rng() % 200000, longest = 1 + rng() % 300;
      auto when = [&](std::uint64_t most) {
        const std::uint64_t start = 1 + rng() % span, length = rng() % most;
        return std::make_pair(start, rng() % 40 == 0 ? 0 : start + length); // some never ended
      };
      for (std::size_t i = 0; i < n; ++i) {
        const auto [s, e] = when(longest);
        t.kernels.push_back({});
        t.kernels.back().start = s, t.kernels.back().end = e;
      }
      for (std::size_t i = 0; i < n / 10 + round % 2; ++i) {
        const auto [s, e] = when(longest * 5);
        t.copies.push_back({}), t.copies.back().start = s, t.copies.back().end = e;
        const auto [ms, me] = when(longest);
        t.memsets.push_back({}), t.memsets.back().start = ms, t.memsets.back().end = me;
        const auto [ys, ye] = when(longest * 3);
        t.syncs.push_back({}), t.syncs.back().start = ys, t.syncs.back().end = ye;
      }
      const std::uint64_t lo = rng() % (span / 2 + 1), hi = round % 3 == 0 ? 0 : lo + rng() % (span + 1);
      for (const int order : {0, 1, 2}) { // in start order; neighbours swapped (out of order by little); shuffled
        std::sort(t.kernels.begin(), t.kernels.end(), [](const kernel_record& a, const kernel_record& b) { return a.start < b.start; });
        if (order == 1) swap_neighbours(t.kernels, rng);
        if (order == 2) std::shuffle(t.kernels.begin(), t.kernels.end(), rng);
        auto g = detail::intervals_of(t);
        detail::value_list gaps;
        const auto expected = detail::activity_of(g, lo, hi, gaps, detail::sorted_kernel_runs_of(t));
        wrong += !same_activity(overall_activity(t, {lo, hi}), expected);
        busy += expected.busy_ns > 0;
        ++cases;
      }
    }
  }
  CHECK(cases == 144);
  CHECK(busy > 36); // traces with GPU time inside their windows: 54-84 of 144 (36-56 of 96 over 300 runs; none without kernels, none in an empty window)
  CHECK(wrong == 0);
}

// range_activity reads each instance's kernels in place while they come in start order and
// copies, merges and walks them again otherwise: on the synthetic trace (steps, outermost
// ranges, copies, memsets, syncs) with random kernels stretched over their neighbours or made
// empty, every row and step must read the same with the kernels in start order, with neighbours
// swapped and shuffled.
TEST_CASE("range_activity gives the same rows and steps with the kernels in start order, out of it by a little or shuffled") {
  using namespace nvscope;
  NVSCOPE_SEEDED_RNG(std::mt19937_64, rng);
  auto in_order = synthetic::make_trace(30000);
  for (auto& k : in_order.kernels) {
    const auto what = rng() % 10;
    if (what == 0) k.end = k.start; // empty
    else if (what == 1) k.end += rng() % 20000; // over the next kernels, and past gaps
  }
  std::stable_sort(in_order.kernels.begin(), in_order.kernels.end(), [](const kernel_record& a, const kernel_record& b) { return a.start < b.start; });
  auto swapped = in_order, shuffled = in_order;
  swap_neighbours(swapped.kernels, rng);
  std::shuffle(shuffled.kernels.begin(), shuffled.kernels.end(), rng);
  const analysis_options o;
  auto activity = [&](const trace& t) { return range_activity(t, index_trace(t), project_ranges(t, index_trace(t)), o); };
  const auto a = activity(in_order);
  for (const auto* other : {&swapped, &shuffled}) {
    const auto b = activity(*other);
    REQUIRE(a.per_range.size() == b.per_range.size());
    REQUIRE(a.steps.size() == b.steps.size());
    CHECK(a.per_range.size() >= 3); // epoch, leak, the step family
    CHECK(a.steps.size() >= 10);
    std::size_t wrong = 0, gaps = 0;
    for (std::size_t i = 0; i < a.per_range.size(); ++i) {
      const auto &x = a.per_range[i], &y = b.per_range[i];
      wrong += x.range != y.range || x.instances != y.instances || x.kernels != y.kernels || !same_activity(x.activity, y.activity);
      gaps += x.activity.gap_count;
    }
    for (std::size_t i = 0; i < a.steps.size(); ++i)
      wrong += a.steps[i].range != b.steps[i].range || a.steps[i].kernels != b.steps[i].kernels || !same_activity(a.steps[i].activity, b.steps[i].activity);
    CHECK(gaps > 1000);
    CHECK(wrong == 0);
  }
}

// range_ops hands an instance whose kernels are one run of records over as that run, and one
// whose kernels lie apart through its refs: with one thread's kernel records reversed (a run,
// out of start order), two threads' interleaved (apart) and the rest left, the trace holds
// ranges of both kinds, and every row and step must read as with every record in start order.
TEST_CASE("range_activity reads instances whose kernels are one run of records and those whose kernels lie apart alike") {
  using namespace nvscope;
  const auto in_order = synthetic::make_trace(30000);
  auto mixed = in_order;
  const auto thread_of = [](const kernel_record& k) { return k.stream >= 100 ? k.stream - 100 : k.stream - 7; };
  std::vector<kernel_record> kept, reversed, first, second;
  for (const auto& k : mixed.kernels)
    (thread_of(k) == 3 ? reversed : thread_of(k) == 5 ? first : thread_of(k) == 6 ? second : kept).push_back(k);
  std::reverse(reversed.begin(), reversed.end());
  mixed.kernels = kept;
  mixed.kernels.insert(mixed.kernels.end(), reversed.begin(), reversed.end());
  for (std::size_t i = 0; i < std::max(first.size(), second.size()); ++i) {
    if (i < first.size()) mixed.kernels.push_back(first[i]);
    if (i < second.size()) mixed.kernels.push_back(second[i]);
  }
  const auto x = index_trace(mixed);
  const auto p = project_ranges(mixed, x);
  {
    const auto is_step = detail::step_ranges(mixed, x, {});
    const auto ops = detail::range_ops(mixed, x, detail::interesting_links(mixed, x, p, is_step, detail::deepest_first(mixed, x)));
    std::size_t runs = 0, apart = 0;
    for (std::size_t r = 0; r < mixed.ranges.size(); ++r) {
      runs += ops.run_size[r] != 0;
      apart += ops.offset[r + 1] - ops.offset[r] > 2 && ops.ref[ops.offset[r]] >> detail::range_ops_index::kind_shift == 0; // kernels through refs
    }
    CHECK(runs > 10);
    CHECK(apart > 10);
  }
  const analysis_options o;
  const auto a = range_activity(in_order, index_trace(in_order), project_ranges(in_order, index_trace(in_order)), o);
  const auto b = range_activity(mixed, x, p, o);
  REQUIRE(a.per_range.size() == b.per_range.size());
  REQUIRE(a.steps.size() == b.steps.size());
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < a.per_range.size(); ++i) {
    const auto &u = a.per_range[i], &v = b.per_range[i];
    wrong += u.range != v.range || u.instances != v.instances || u.kernels != v.kernels || !same_activity(u.activity, v.activity);
  }
  for (std::size_t i = 0; i < a.steps.size(); ++i)
    wrong += a.steps[i].range != b.steps[i].range || a.steps[i].kernels != b.steps[i].kernels || !same_activity(a.steps[i].activity, b.steps[i].activity);
  CHECK(a.steps.size() >= 10);
  CHECK(wrong == 0);
}

// An instance whose kernels come out of start order is merged again from a copy, and every one
// of its kernels' durations must still reach the row's median, those after the first out of
// order too: one outermost range of 7 kernels of distinct lengths, random record orders (the
// median of 7 distinct values moves with any one of them left out).
TEST_CASE("range_activity's kernel median counts every kernel of an instance whose kernels come out of start order") {
  using namespace nvscope;
  NVSCOPE_SEEDED_RNG(std::mt19937_64, rng);
  std::size_t out_of_order = 0, wrong = 0;
  for (int round = 0; round < 40; ++round) {
    trace t;
    range_record r;
    r.name = t.strings.intern("outer");
    r.start = 1;
    r.end = 1000000;
    t.ranges.push_back(r);
    const auto name = t.strings.intern("k");
    std::vector<std::uint64_t> lengths;
    for (std::uint32_t i = 0; i < 7; ++i) {
      t.launches.push_back({10 + i, i + 1, 0});
      kernel_record k;
      k.name = name;
      k.correlation = i + 1;
      k.start = 1000 + 100000 * i;
      k.end = k.start + 1000 + 997 * i + rng() % 500; // distinct: 997 apart, less than 500 added
      lengths.push_back(k.end - k.start);
      t.kernels.push_back(k);
    }
    std::shuffle(t.kernels.begin(), t.kernels.end(), rng);
    out_of_order += !std::is_sorted(t.kernels.begin(), t.kernels.end(), [](const kernel_record& a, const kernel_record& b) { return a.start < b.start; });
    std::sort(lengths.begin(), lengths.end());
    const auto x = index_trace(t);
    const auto a = range_activity(t, x, project_ranges(t, x), analysis_options{});
    REQUIRE(a.per_range.size() == 1);
    wrong += a.per_range[0].activity.kernels != 7 || a.per_range[0].activity.kernel_median_ns != static_cast<double>(lengths[3]);
  }
  CHECK(out_of_order >= 35); // 1 in 5,040 orders is the start order
  CHECK(wrong == 0);
}

// project_ranges widens each range's window by every valid GPU record of a launch it holds and
// counts a launch once (not a window per launch first): on the synthetic trace (8-kernel graph
// launches, copies, memsets, start/end and nested ranges) with random kernels made invalid and
// the kernels shuffled (a launch's kernels far apart), every range's first start, last end and
// launch count must equal the per-launch reference: each launch's window from its valid
// records, added to its innermost push/pop range and its open start/end ranges, summed upwards.
TEST_CASE("project_ranges equals the per-launch windows summed into ranges, a graph launch's kernels apart") {
  using namespace nvscope;
  NVSCOPE_SEEDED_RNG(std::mt19937_64, rng);
  auto t = synthetic::make_trace(30000);
  for (auto& k : t.kernels)
    if (rng() % 16 == 0) k.end = 0; // incomplete: no window, and a launch of such kernels alone counts nothing
  std::shuffle(t.kernels.begin(), t.kernels.end(), rng);
  const auto x = index_trace(t);
  const auto p = project_ranges(t, x);
  const auto nl = t.launches.size(), nr = t.ranges.size();
  std::vector<timestamp_ns> lf(nl, ~timestamp_ns{0}), ll(nl, 0);
  std::vector<std::uint32_t> records(nl, 0);
  auto note = [&](const auto& list, const record_indexes& launch) {
    for (std::size_t i = 0; i < list.size(); ++i)
      if (launch[i] != attribution::none && list[i].end != 0 && list[i].end >= list[i].start) {
        lf[launch[i]] = std::min(lf[launch[i]], list[i].start);
        ll[launch[i]] = std::max(ll[launch[i]], list[i].end);
        ++records[launch[i]];
      }
  };
  note(t.kernels, x.links.kernel_launch);
  note(t.copies, x.links.copy_launch);
  note(t.memsets, x.links.memset_launch);
  std::vector<timestamp_ns> first(nr, ~timestamp_ns{0}), last(nr, 0);
  std::vector<std::uint32_t> ops(nr, 0);
  auto add = [&](std::uint32_t r, timestamp_ns f, timestamp_ns l, std::uint32_t n) {
    first[r] = std::min(first[r], f), last[r] = std::max(last[r], l), ops[r] += n;
  };
  std::size_t graphs = 0;
  for (std::size_t l = 0; l < nl; ++l) {
    if (ll[l] == 0) continue;
    graphs += records[l] > 1;
    if (x.launch_owner[l] != attribution::none) add(x.launch_owner[l], lf[l], ll[l], 1);
    for (auto s = x.start_end_offset[l]; s < x.start_end_offset[l + 1]; ++s) add(x.start_end_ranges[s], lf[l], ll[l], 1);
  }
  for (const auto r : detail::deepest_first(t, x))
    if (x.links.parent[r] != attribution::none && ops[r]) add(x.links.parent[r], first[r], last[r], ops[r]);
  REQUIRE(p.ops.size() == nr);
  std::size_t wrong = 0, projected = 0, start_end = 0;
  for (std::size_t r = 0; r < nr; ++r) {
    wrong += p.ops[r] != ops[r] || (ops[r] && (p.first[r] != first[r] || p.last[r] != last[r]));
    projected += ops[r] > 0;
    start_end += ops[r] > 0 && !t.ranges[r].is_push_pop;
  }
  CHECK(graphs > 30);     // launches of several valid kernels, shuffled apart (64 at 30 k kernels)
  CHECK(projected > 100); // ranges that launched work
  CHECK(start_end > 0);   // start/end ranges among them
  CHECK(wrong == 0);
}

TEST_CASE("deepest_first puts every range once, each before its parent; last to first where parents come first") {
  NVSCOPE_SEEDED_RNG(std::mt19937_64, rng);
  int reversed = 0, listed = 0;
  for (int round = 0; round < 300; ++round) {
    const auto nr = static_cast<std::uint32_t>(rng() % 200);
    nvscope::trace t;
    t.ranges.resize(nr);
    nvscope::attribution a;
    const int shape = round % 3; // 0: parents first; 1: parents anywhere (acyclic); 2: as 0 or 1 with a short parent list
    std::vector<std::uint32_t> rank(nr); // a parent has a lower rank than its children: no cycle
    for (std::uint32_t r = 0; r < nr; ++r) rank[r] = r;
    if (shape == 1) std::shuffle(rank.begin(), rank.end(), rng);
    std::vector<std::uint32_t> of_rank(nr);
    for (std::uint32_t r = 0; r < nr; ++r) of_rank[rank[r]] = r;
    a.parent.assign(nr, nvscope::attribution::none);
    for (std::uint32_t r = 0; r < nr; ++r) {
      const auto pick = rng() % 8;
      if (pick == 0) a.parent[r] = nr + static_cast<std::uint32_t>(rng() % 5); // past the ranges: none
      else if (pick > 2 && rank[r] > 0) a.parent[r] = of_rank[rng() % rank[r]];
    }
    if (shape == 2 && nr > 0) a.parent.resize(rng() % nr); // the rest: none
    auto parent_of = [&](std::uint32_t r) { return r < a.parent.size() && a.parent[r] < nr ? a.parent[r] : nvscope::attribution::none; };
    bool parents_first = true;
    for (std::uint32_t r = 0; r < nr; ++r) parents_first = parents_first && (parent_of(r) == nvscope::attribution::none || parent_of(r) < r);
    const auto order = nvscope::detail::deepest_first(t, a);
    REQUIRE(order.size() == nr);
    std::vector<std::uint32_t> place(nr, nvscope::attribution::none);
    for (std::uint32_t i = 0; i < nr; ++i) {
      REQUIRE(order[i] < nr);
      CHECK(place[order[i]] == nvscope::attribution::none); // once
      place[order[i]] = i;
    }
    for (std::uint32_t r = 0; r < nr; ++r)
      if (parent_of(r) != nvscope::attribution::none) CHECK(place[r] < place[parent_of(r)]);
    if (parents_first) {
      ++reversed;
      for (std::uint32_t i = 0; i < nr; ++i) CHECK(order[i] == nr - 1 - i);
    } else {
      ++listed;
    }
  }
  CHECK(reversed > 50);
  CHECK(listed > 50);
  // attribute() makes the order once, with the nesting: the same rule, read by deepest_first.
  for (const bool shuffled : {false, true}) {
    auto t = synthetic::make_trace(3000);
    if (shuffled) std::shuffle(t.ranges.begin(), t.ranges.end(), rng); // parents after children too
    const auto x = nvscope::index_trace(t);
    const auto& a = x.links;
    const auto nr = static_cast<std::uint32_t>(t.ranges.size());
    REQUIRE(x.children_first.size() == nr);
    std::vector<std::uint32_t> place(nr, nvscope::attribution::none);
    for (std::uint32_t i = 0; i < nr; ++i) {
      REQUIRE(x.children_first[i] < nr);
      CHECK(place[x.children_first[i]] == nvscope::attribution::none);
      place[x.children_first[i]] = i;
    }
    std::size_t nested = 0;
    for (std::uint32_t r = 0; r < nr; ++r) {
      if (a.parent[r] >= nr) continue;
      CHECK(place[r] < place[a.parent[r]]);
      ++nested;
    }
    CHECK(nested > 100);
    const auto order = nvscope::detail::deepest_first(t, x), made = nvscope::detail::deepest_first(t, a);
    CHECK(std::equal(order.begin(), order.end(), x.children_first.begin(), x.children_first.end()));
    CHECK(std::equal(made.begin(), made.end(), x.children_first.begin(), x.children_first.end())); // made again from the parents alone
  }
}

// The diagnosis' building blocks against plain reference versions on fresh random input: order
// statistics read in place against a full sort, the correlation table (dense and sparse ids)
// against a map, grouping by counting against a stable sort, the operations' merge of sorted
// runs, each operation's packed record, kind and call against its records, each range's step
// (outermost first) against the walk up its parents, the range and sync open on a thread
// against that thread's records alone (and the idle walk's range cursor against that lookup),
// and the GPU busy share of each wait and the utilization chunks' sums against the operations
// themselves.

#include <nvscope/analyze/diagnose/idle.hpp>
#include <nvscope/analyze/diagnose/diagnose.hpp>
#include <nvscope/analyze/diagnose/launches.hpp>
#include <nvscope/analyze/diagnose/rules.hpp>
#include <nvscope/analyze/diagnose/steps.hpp>

#include <doctest/doctest.h>
#include "test_seed.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <numeric>
#include <string>
#include <random>
#include <tuple>
#include <utility>
#include <vector>

namespace {

using namespace nvscope;
using namespace nvscope::detail::diag;
using nvscope::detail::scratch_vector;

using nvscope_test::fresh_seed;

} // namespace

TEST_CASE("figures_of reads the median, quantiles and maximum a full sort gives, of 64-bit and 32-bit columns") {
  const auto seed = fresh_seed();
  INFO("seed " << seed); // a failure names the input
  std::mt19937_64 g(seed);
  for (int round = 0; round < 400; ++round) {
    const std::size_t n = round < 300 ? g() % 300 : 1000 + g() % 20000; // the copy alone, then histogram levels
    const std::uint64_t spread = round % 3 == 0 ? 4 : round % 3 == 1 ? 1000000 : 4000000000ull; // many ties, then few
    std::vector<std::uint64_t> v(n);
    std::vector<std::uint32_t> w(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = g() % spread, w[i] = static_cast<std::uint32_t>(v[i]);
    const auto original = v;
    std::vector<std::uint64_t> sorted(v), sorted32(w.begin(), w.end());
    std::sort(sorted.begin(), sorted.end());
    std::sort(sorted32.begin(), sorted32.end());
    CAPTURE(n);
    const auto f = figures_of(v.data(), n, {0.25, 0.75});
    CHECK(f.median == median(sorted));
    CHECK(f.quantiles[0] == quantile(sorted, 0.25));
    CHECK(f.quantiles[1] == quantile(sorted, 0.75));
    CHECK(f.quantiles[1] + 1.5 * (f.quantiles[1] - f.quantiles[0]) == upper_fence(sorted));
    CHECK(f.max == (n ? sorted.back() : 0));
    CHECK(v == original); // read in place, never moved
    const auto f32 = figures_of(w.data(), n, {0.9});
    CHECK(f32.median == median(sorted32));
    CHECK(f32.quantiles[0] == quantile(sorted32, 0.9));
    CHECK(f32.max == (n ? sorted32.back() : 0));
  }
}

TEST_CASE("the correlation table keeps the runtime call over the driver call it wraps, dense ids or sparse") {
  const auto seed = fresh_seed();
  INFO("seed " << seed); // a failure names the input
  std::mt19937_64 g(seed);
  for (const bool sparse : {false, true}) {
    std::vector<api_record> calls;
    for (std::uint32_t i = 0; i < 3000; ++i) {
      api_record c;
      c.correlation = sparse ? static_cast<std::uint32_t>(g() % 50 + 1) * 40000000u : static_cast<std::uint32_t>(g() % 1500);
      c.start = 1000 + g() % 100;
      c.end = g() % 20 == 0 ? c.start - 1 : c.start + g() % 50; // some with an end before their start
      c.is_driver = g() % 2 == 0;
      c.name = static_cast<string_id>(i);
      calls.push_back(c);
    }
    std::map<std::uint32_t, std::size_t> expected; // the rule written out plainly
    for (std::size_t i = 0; i < calls.size(); ++i) {
      const auto& c = calls[i];
      if (c.correlation == 0 || c.end < c.start) continue;
      const auto it = expected.find(c.correlation);
      if (it == expected.end()) expected[c.correlation] = i;
      else if (!c.is_driver && c.start <= calls[it->second].start) it->second = i;
    }
    call_table table;
    table.build(calls);
    CHECK(table.empty() == expected.empty());
    for (std::uint32_t id = 0; id < 1500; ++id) {
      const auto want = sparse ? std::uint32_t{id + 1} * 40000000u : id;
      const auto it = expected.find(want);
      const api_record* got = table.find(want);
      CAPTURE(want);
      if (it == expected.end()) CHECK(got == nullptr);
      else CHECK(got == &calls[it->second]);
      if (sparse) CHECK(table.find(want + 1) == nullptr);
    }
  }
}

TEST_CASE("operations come out by (start, end), grouped by stream as a stable sort groups them, their kernel names numbered as they first come") {
  const auto seed = fresh_seed();
  INFO("seed " << seed); // a failure names the input
  std::mt19937_64 g(seed);
  trace t;
  for (int i = 0; i < 7; ++i) t.strings.intern("kernel_" + std::to_string(i));
  for (std::uint32_t i = 0; i < 5000; ++i) {
    kernel_record k;
    k.start = g() % 100000; // out of order, with ties
    k.end = k.start + g() % 500;
    k.name = static_cast<string_id>(g() % 10 ? 1 + g() % 7 : 5000 + g() % 3); // a few past the string table: numbered by hash
    k.stream = static_cast<std::uint32_t>(g() % 2 ? g() % 4 : 3000000000u + g() % 3);
    kernel_config c;
    c.device = static_cast<std::uint16_t>(g() % 2);
    k.config = t.kernel_configs.intern(c);
    t.kernels.push_back(k);
  }
  for (std::uint32_t i = 0; i < 800; ++i) {
    copy_record c;
    c.start = 50 * i; // already in order: left as it is and merged
    c.end = c.start + 30;
    c.stream = 9;
    t.copies.push_back(c);
  }
  for (std::uint32_t i = 0; i < 600; ++i) { // each at a kernel's or a copy's (start, end): ties of every kind
    memset_record m;
    const auto& k = t.kernels[g() % t.kernels.size()];
    const auto& c = t.copies[g() % t.copies.size()];
    std::tie(m.start, m.end) = g() % 2 ? std::make_pair(k.start, k.end) : std::make_pair(c.start, c.end);
    m.stream = 9;
    t.memsets.push_back(m);
  }
  for (int i = 0; i < 200; ++i) t.copies[g() % t.copies.size()].end = 0; // left out: no end
  const auto a = attribute(t);
  const timeline tl = build_timeline(t, a);
  // Every complete record once, by (start, end), ties in kind order (kernels, copies, memsets),
  // then in record order: a stable sort of the three kinds' records put one after another.
  struct taken {
    timestamp_ns start, end;
    op_kind kind;
    std::uint32_t index;
  };
  std::vector<taken> want;
  auto take_all = [&](const auto& records, op_kind kind) {
    for (std::uint32_t i = 0; i < records.size(); ++i)
      if (records[i].end != 0 && records[i].end >= records[i].start) want.push_back({records[i].start, records[i].end, kind, i});
  };
  take_all(t.kernels, op_kind::kernel);
  take_all(t.copies, op_kind::copy);
  take_all(t.memsets, op_kind::memset);
  std::stable_sort(want.begin(), want.end(), [](const taken& x, const taken& y) { return std::tie(x.start, x.end) < std::tie(y.start, y.end); });
  REQUIRE(tl.ops.size() == want.size());
  std::vector<std::uint32_t> transfers;
  timestamp_ns last_end = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    CAPTURE(i);
    CHECK(tl.ops[i].kind() == want[i].kind);
    CHECK(tl.ops[i].index() == want[i].index);
    CHECK(tl.ops[i].start == want[i].start);
    CHECK(tl.ops[i].end == want[i].end);
    if (want[i].kind != op_kind::kernel) transfers.push_back(static_cast<std::uint32_t>(i));
    last_end = std::max(last_end, want[i].end);
  }
  CHECK(tl.transfers == transfers);
  CHECK(tl.end == last_end);
  CHECK(tl.begin == want.front().start);
  auto check_groups = [&](const op_groups& groups, auto key_of) {
    std::vector<std::uint32_t> expected(tl.ops.size());
    std::iota(expected.begin(), expected.end(), 0u);
    std::stable_sort(expected.begin(), expected.end(),
                     [&](std::uint32_t x, std::uint32_t y) { return key_of(tl.ops[x]) < key_of(tl.ops[y]); });
    CHECK(std::vector<std::uint32_t>(groups.order.begin(), groups.order.end()) == expected);
    for (std::size_t s = 0; s < groups.size(); ++s)
      for (auto i = groups.begin(s); i != groups.end(s); ++i) CHECK(key_of(tl.ops[*i]) == groups.keys[s]);
  };
  check_groups(tl.by_stream, [&](const gpu_op& op) { return (std::uint64_t{tl.device_of(op)} << 32) | tl.stream_of(op); });
  // Each kernel operation's name number names its kernel's name; numbers come in the order the
  // names first come, each with its count of operations; copies and memsets have none.
  REQUIRE(tl.names.size() == tl.ops.size());
  REQUIRE(tl.name_ops.size() == tl.kernel_names.size());
  std::vector<std::uint32_t> seen(tl.kernel_names.size(), 0);
  std::uint32_t next_new = 0;
  for (std::size_t i = 0; i < tl.ops.size(); ++i) {
    const auto n = tl.names[i];
    if (tl.ops[i].kind() != op_kind::kernel) {
      CHECK(n == timeline::no_name);
      continue;
    }
    REQUIRE(n < tl.kernel_names.size());
    CHECK(tl.kernel_names[n] == t.kernels[tl.ops[i].index()].name);
    if (seen[n]++ == 0) CHECK(n == next_new++);
  }
  CHECK(next_new == tl.kernel_names.size());
  CHECK(std::vector<std::uint32_t>(seen.begin(), seen.end()) == tl.name_ops);
  std::vector<string_id> names(tl.kernel_names);
  std::sort(names.begin(), names.end());
  CHECK(std::unique(names.begin(), names.end()) == names.end()); // each name once
}

TEST_CASE("each operation gives back its record, kind, launch thread and call (API record or launch) on random traces") {
  const auto seed = fresh_seed();
  INFO("seed " << seed); // a failure names the input
  std::mt19937_64 g(seed);
  for (int round = 0; round < 40; ++round) {
    trace t;
    const bool calls = round % 4 != 0; // a quarter with no API record: no call column at all
    std::uint32_t correlation = 1;
    for (std::uint32_t i = 0; i < 600; ++i) {
      const int kind = static_cast<int>(g() % 3);
      const timestamp_ns start = 1000 + g() % 100000, end = start + g() % 900;
      const std::uint32_t stream = static_cast<std::uint32_t>(g() % 2 ? g() % 4 : 4000000000u + g() % 3);
      const std::uint16_t device = static_cast<std::uint16_t>(g() % 3);
      if (g() % 5) t.launches.push_back({start - 1 - g() % 500, correlation, static_cast<std::uint32_t>(g() % 6)});
      if (calls && g() % 3) t.api_calls.push_back({start - 600 + g() % 100, start - 600 + 100 + g() % 100, 0, correlation, 0, g() % 2 == 0});
      if (kind == 0) {
        kernel_record k;
        k.start = start, k.end = end, k.stream = stream, k.correlation = correlation;
        kernel_config c;
        c.device = device;
        k.config = t.kernel_configs.intern(c);
        t.kernels.push_back(k);
      } else if (kind == 1) {
        copy_record c;
        c.start = start, c.end = end, c.stream = stream, c.correlation = correlation, c.device = device;
        t.copies.push_back(c);
      } else {
        memset_record m;
        m.start = start, m.end = end, m.stream = stream, m.correlation = correlation, m.device = device;
        t.memsets.push_back(m);
      }
      ++correlation;
    }
    const auto a = attribute(t);
    const timeline tl = build_timeline(t, a);
    REQUIRE(tl.ops.size() == t.kernels.size() + t.copies.size() + t.memsets.size());
    CHECK(tl.call_ends.size() == (tl.any_call ? tl.ops.size() : 0));
    std::map<std::uint32_t, const launch_record*> launch_of;
    for (const auto& l : t.launches) launch_of[l.correlation] = &l;
    std::map<std::uint32_t, const api_record*> call_of; // the runtime call where there are both
    for (const auto& c : t.api_calls)
      if (!call_of.count(c.correlation) || (call_of[c.correlation]->is_driver && !c.is_driver)) call_of[c.correlation] = &c;
    for (std::size_t i = 0; i < tl.ops.size(); ++i) {
      const gpu_op& op = tl.ops[i];
      const auto check = [&](const auto& r, op_kind kind) {
        CHECK(op.kind() == kind);
        CHECK(op.start == r.start);
        CHECK(op.end == r.end);
        CHECK(tl.stream_of(op) == r.stream);
        CHECK(tl.device_of(op) == device_of(t, r));
        const auto* l = launch_of.count(r.correlation) ? launch_of[r.correlation] : nullptr;
        const auto* c = call_of.count(r.correlation) ? call_of[r.correlation] : nullptr;
        CHECK(op.thread == (l ? l->thread : diagnosis_none));
        CHECK(op.has_call() == (c != nullptr));
        CHECK(op.call_start == (c ? c->start : l ? l->time : 0));
        CHECK(tl.call_end(i) == (c ? c->end : l ? l->time : 0));
      };
      const auto k = op.kind();
      if (k == op_kind::kernel) check(t.kernels.at(op.index()), k);
      else if (k == op_kind::copy) check(t.copies.at(op.index()), k);
      else check(t.memsets.at(op.index()), k);
    }
  }
}

TEST_CASE("the idle charges (per cause, the ranges holding most, the longest) are what the stretches add up to, on random traces") {
  const auto seed = fresh_seed();
  INFO("seed " << seed); // a failure names the input
  std::mt19937_64 g(seed);
  int with_stretches = 0;
  for (int round = 0; round < 60; ++round) {
    trace t;
    t.threads.resize(3);
    // The empty name (id 0) in the default domain: a tally's key 0, what an empty tally holds.
    const string_id names[] = {t.strings.intern("a"), t.strings.intern("b"), t.strings.intern("c"), t.strings.intern("d"), t.strings.intern("")};
    const string_id domains[] = {0, t.strings.intern("dom")};
    for (std::uint32_t r = 0; r < 200; ++r) { // random intervals: attribute() nests them by containment
      range_record x;
      x.thread = static_cast<std::uint32_t>(g() % 4); // 3: outside the thread table
      x.start = g() % 100000;
      x.end = x.start + g() % 8000;
      x.name = names[g() % 5];
      x.domain = domains[g() % 2];
      x.is_push_pop = true;
      t.ranges.push_back(x);
    }
    std::uint32_t correlation = 1;
    for (std::uint32_t i = 0; i < 800; ++i) {
      kernel_record k;
      k.start = g() % 110000;
      k.end = k.start + 1 + g() % (g() % 3 ? 100 : 3000); // gaps of every length, ties of length
      k.correlation = correlation;
      k.stream = static_cast<std::uint32_t>(g() % 3);
      t.kernels.push_back(k);
      if (g() % 6) t.launches.push_back({k.start - g() % 2000, correlation, static_cast<std::uint32_t>(g() % 4)});
      ++correlation;
    }
    for (int i = 0; i < 30; ++i) {
      const timestamp_ns at = g() % 100000;
      sync_record y;
      y.start = at, y.end = at + g() % 3000, y.thread = static_cast<std::uint32_t>(g() % 3), y.kind = sync_kind::stream;
      t.syncs.push_back(y);
    }
    const auto a = attribute(t);
    const timeline tl = build_timeline(t, a);
    diagnosis_options o;
    o.top_idle = static_cast<std::uint32_t>(g() % 9); // 0 .. 8, sometimes more than there are stretches
    const idle_breakdown b = idle_time_of(tl, o);
    with_stretches += !b.stretches.empty(); // a trace whose GPU work leaves no gap has none (about 1 in 2,000): the checks below still hold
    // Per cause: time and count.
    std::uint64_t ns[idle_cause_count] = {}, count[idle_cause_count] = {};
    for (const auto& x : b.stretches) ns[static_cast<int>(x.cause)] += x.duration, ++count[static_cast<int>(x.cause)];
    for (int c = 0; c < idle_cause_count; ++c) {
      CHECK(b.cause_ns[c] == ns[c]);
      CHECK(b.cause_count[c] == count[c]);
    }
    // The longest: a partial sort of every stretch.
    std::vector<idle_stretch> longest(b.stretches.begin(), b.stretches.end());
    std::sort(longest.begin(), longest.end(), [](const idle_stretch& x, const idle_stretch& y) {
      return x.duration != y.duration ? x.duration > y.duration : x.start < y.start;
    });
    longest.resize(std::min<std::size_t>(o.top_idle, longest.size()));
    REQUIRE(b.longest.size() == longest.size());
    for (std::size_t i = 0; i < longest.size(); ++i) {
      CHECK(b.longest[i].start == longest[i].start);
      CHECK(b.longest[i].duration == longest[i].duration);
      CHECK(b.longest[i].range == longest[i].range);
      CHECK(b.longest[i].next_owner == longest[i].next_owner);
    }
    // Per cause, the three (domain, name)s holding most time, each with its longest single
    // stretch's range (the later one on a tie); no range: one entry of its own.
    for (int c = 0; c < idle_cause_count; ++c) {
      struct tally {
        range_time row;
        std::uint64_t best = 0; // the longest single stretch so far
      };
      std::map<std::uint64_t, tally> by_name;
      for (const auto& x : b.stretches) {
        if (static_cast<int>(x.cause) != c) continue;
        const bool known = x.range < t.ranges.size();
        const std::uint64_t key = known ? (std::uint64_t{t.ranges[x.range].domain} << 32) | t.ranges[x.range].name : ~std::uint64_t{0};
        auto& e = by_name[key];
        e.row.ns += x.duration;
        e.row.count += 1;
        if (known && x.duration >= e.best) {
          e.best = x.duration;
          e.row.range = x.range;
          e.row.domain = t.ranges[x.range].domain;
          e.row.name = t.ranges[x.range].name;
        }
      }
      std::vector<range_time> want;
      for (const auto& [key, e] : by_name) want.push_back(e.row);
      std::sort(want.begin(), want.end(), [](const range_time& x, const range_time& y) { return x.ns != y.ns ? x.ns > y.ns : x.range < y.range; });
      if (want.size() > 3) want.resize(3);
      REQUIRE(b.cause_ranges[c].size() == want.size());
      for (std::size_t i = 0; i < want.size(); ++i) {
        CHECK(b.cause_ranges[c][i].range == want[i].range);
        CHECK(b.cause_ranges[c][i].ns == want[i].ns);
        CHECK(b.cause_ranges[c][i].count == want[i].count);
        CHECK(b.cause_ranges[c][i].name == want[i].name);
      }
    }
  }
  CHECK(with_stretches >= 50); // the rounds checked something
}

TEST_CASE("each range's step is the one its walk up the parents meets first, on random nested ranges") {
  const auto seed = fresh_seed();
  INFO("seed " << seed); // a failure names the input
  std::mt19937_64 g(seed);
  for (int round = 0; round < 50; ++round) {
    trace t;
    t.threads.resize(3);
    const std::uint32_t n = 1 + static_cast<std::uint32_t>(g() % 600);
    for (std::uint32_t r = 0; r < n; ++r) { // random intervals: attribute() nests them by containment
      range_record x;
      x.thread = static_cast<std::uint32_t>(g() % 4); // 3: outside the thread table
      x.start = g() % 10000;
      x.end = g() % 12 == 0 ? 0 : x.start + g() % (g() % 4 == 0 ? 5000 : 200); // some never closed
      x.is_mark = g() % 10 == 0;
      x.is_push_pop = g() % 5 != 0;
      t.ranges.push_back(x);
    }
    const auto a = attribute(t);
    step_set s;
    s.ordinal_of.assign(n, diagnosis_none);
    for (std::uint32_t r = 0; r < n; ++r)
      if (!t.ranges[r].is_mark && g() % 8 == 0) s.ordinal_of[r] = static_cast<std::uint32_t>(g() % 100);
    const auto step = step_of_ranges(t, s, a);
    REQUIRE(step.size() == n);
    for (std::uint32_t r = 0; r < n; ++r) {
      std::uint32_t want = diagnosis_none;
      for (std::uint32_t x = r; x < n; x = a.parent[x]) { // attribute()'s parents form no cycle
        if (s.ordinal_of[x] != diagnosis_none) {
          want = s.ordinal_of[x];
          break;
        }
      }
      CAPTURE(r);
      CHECK(step[r] == want);
    }
    attribution bare; // not attribute()'s: no nesting, each range its own step only
    bare.parent = a.parent;
    CHECK(step_of_ranges(t, s, bare) == s.ordinal_of);
  }
}

namespace {

// A trace of 1 to `most` random ranges on the thread indexes `ids` (the trace's thread table has
// two threads), starting in [0, 10,000), up to `longest` ns long, one in 12 never ended, one in
// 5 a start/end range.
template <std::size_t n>
trace random_ranges(std::mt19937_64& g, const std::uint32_t (&ids)[n], std::uint64_t most, std::uint64_t longest) {
  trace t;
  t.threads.resize(2);
  for (std::uint64_t r = 0, count = 1 + g() % most; r < count; ++r) {
    range_record x;
    x.thread = ids[g() % n];
    x.start = g() % 10000;
    x.end = g() % 12 == 0 ? 0 : x.start + g() % longest;
    x.is_push_pop = g() % 5 != 0;
    t.ranges.push_back(x);
  }
  return t;
}

} // namespace

TEST_CASE("each thread index has its own ranges and syncs, foreign indexes included, hinted or not, on random traces") {
  const auto seed = fresh_seed();
  INFO("seed " << seed); // a failure names the input
  std::mt19937_64 g(seed);
  const std::uint32_t ids[] = {0, 1, 7, 10'000'000, 0xfffffff0u, 0xffffffffu}; // 2 in the thread table
  for (int round = 0; round < 40; ++round) {
    trace t = random_ranges(g, ids, 400, 300);
    for (const auto id : ids) // each thread's syncs one after another, never overlapping
      for (timestamp_ns at = g() % 300; at < 10000; at += 1 + g() % 400) {
        const timestamp_ns len = g() % 200;
        t.syncs.push_back(sync_record{at, at + len, 0, 0, 0, id, sync_kind::stream});
        at += len;
      }
    std::shuffle(t.syncs.begin(), t.syncs.end(), g);
    const auto a = attribute(t);
    const timeline tl = build_timeline(t, a);
    lookup_hints hints(tl.threads); // the hinted lookups must find the same
    std::vector<timestamp_ns> times(300);
    for (auto& x : times) x = g() % 10500;
    if (round % 2) std::sort(times.begin(), times.end()); // growing times: walked forward; else searched
    for (const auto time : times) {
      const auto thread = ids[g() % 6];
      const timestamp_ns from = time > 500 ? time - g() % 500 : 0;
      // The same lookups on this thread's records alone.
      std::vector<std::uint32_t> mine;
      for (std::uint32_t r = 0; r < t.ranges.size(); ++r)
        if (t.ranges[r].thread == thread && t.ranges[r].is_push_pop && t.ranges[r].start <= time) mine.push_back(r);
      std::uint32_t range = diagnosis_none;
      if (!mine.empty()) {
        range = *std::max_element(mine.begin(), mine.end(), [&](std::uint32_t x, std::uint32_t y) {
          return t.ranges[x].start != t.ranges[y].start ? t.ranges[x].start < t.ranges[y].start : x < y;
        });
        while (range != diagnosis_none && a.range_end[range] < time) range = a.parent[range];
      }
      timestamp_ns last_start = 0, sync_end = 0;
      for (const auto& s : t.syncs)
        if (s.thread == thread && s.start <= time && s.start >= last_start) last_start = s.start, sync_end = s.end >= from ? s.end : 0;
      CAPTURE(thread);
      CAPTURE(time);
      CHECK(tl.range_at(thread, time) == range);
      CHECK(tl.last_sync_end(thread, from, time) == sync_end);
      CHECK(tl.range_at(thread, time, &hints) == range);
      CHECK(tl.last_sync_end(thread, from, time, &hints) == sync_end);
    }
    CHECK(tl.range_at(12345, 5000) == diagnosis_none); // an index no record carries
    CHECK(tl.last_sync_end(12345, 0, 10000) == 0);
  }
}

// range_cursor (the idle walk's lookups) against range_at: runs of lookups on one thread whose
// times mostly grow in small steps (a range started or ended between two of them, or none),
// some repeated, some going back, the thread changing between runs.
TEST_CASE("range_cursor finds what range_at finds, on runs of lookups of one thread with growing times, on random traces") {
  const auto seed = fresh_seed();
  INFO("seed " << seed);
  std::mt19937_64 g(seed);
  const std::uint32_t ids[] = {0, 1, 7, 0xfffffff0u, 0xffffffffu}; // 2 in the thread table
  std::uint64_t lookups = 0;
  for (int round = 0; round < 40; ++round) {
    const trace t = random_ranges(g, ids, 300, 400);
    const auto a = attribute(t);
    const timeline tl = build_timeline(t, a);
    lookup_hints hints(tl.threads);
    range_cursor cursor(tl, hints);
    timestamp_ns time = g() % 100;
    for (int run = 0; run < 60; ++run) {
      const auto thread = ids[g() % 5];
      for (int i = 0, n = 1 + static_cast<int>(g() % 30); i < n; ++i) {
        const auto step = g() % 10;
        time = step == 0 && time > 200 ? time - g() % 200 : step == 1 ? time : time + g() % 60; // back, the same, forward
        CAPTURE(thread);
        CAPTURE(time);
        const auto expected = tl.range_at(thread, time);
        CHECK(cursor.at(thread, time) == expected);
        ++lookups;
      }
      if (time > 10500) time = g() % 100;
    }
  }
  CHECK(lookups > 0);
}

static std::uint64_t union_inside(std::vector<std::pair<timestamp_ns, timestamp_ns>> ops, timestamp_ns a, timestamp_ns b);

TEST_CASE("launch statistics (every row's counts, medians, quantiles, outliers and queue depths) are what sorting each name's values gives, alone and with the durations' figures read off the samples, and each stream's idle row made on their walk is HTA's, on random traces") {
  NVSCOPE_SEEDED_RNG(std::mt19937_64, g);
  for (int round = 0; round < 60; ++round) {
    trace t;
    const bool calls = round % 4 != 0;         // a quarter with no API record: calls assumed
    const bool deep = round % 5 == 1;          // bursts launched at once: queues hundreds deep
    const bool many_names = round % 7 == 3;    // thousands of names: more rows than a depth table holds
    const std::uint32_t names = many_names ? 3000 : 1 + static_cast<std::uint32_t>(g() % 6);
    std::vector<string_id> name_ids;
    for (std::uint32_t n = 0; n < names; ++n) name_ids.push_back(t.strings.intern("k" + std::to_string(n)));
    if (round % 3 == 2) { // names the samples group apart from their ids: ids past the table, and a name spelt as they read
      name_ids.push_back(0xfffffff0u);
      name_ids.push_back(0xfffffff1u);
      name_ids.push_back(t.strings.intern(t.strings[0xfffffff0u]));
    }
    const auto name_count = static_cast<std::uint32_t>(name_ids.size());
    std::uint32_t correlation = 1;
    timestamp_ns gpu[4] = {5000, 5000, 5000, 5000}; // per stream: operations run one after another
    const std::uint32_t count = many_names ? 6000 : 200 + static_cast<std::uint32_t>(g() % 800);
    for (std::uint32_t i = 0; i < count; ++i) {
      const std::uint32_t stream = static_cast<std::uint32_t>(g() % 4);
      const timestamp_ns launch = deep ? 1000 + g() % 50 : gpu[stream] - 1 - g() % 3000;
      const timestamp_ns start = std::max(gpu[stream], launch + g() % 400), end = start + g() % (g() % 8 == 0 ? 200000 : 2000);
      gpu[stream] = end + g() % 300;
      if (g() % 6) t.launches.push_back({launch, correlation, static_cast<std::uint32_t>(g() % 3)});
      if (calls && g() % 3) t.api_calls.push_back({launch, launch + g() % 90000, 0, correlation, 0, g() % 2 == 0});
      if (g() % 8 == 0) {
        memset_record m;
        m.start = start, m.end = end, m.stream = stream, m.correlation = correlation;
        t.memsets.push_back(m);
      } else {
        kernel_record k;
        k.start = start, k.end = end, k.stream = stream, k.correlation = correlation;
        k.name = name_ids[g() % name_count];
        if (g() % 50 == 0) k.end = 0; // incomplete: in no figure
        t.kernels.push_back(k);
      }
      ++correlation;
    }
    diagnosis_options o;
    o.call_outlier_ns = 40000;
    o.delay_outlier_ns = 1000 + g() % 20000;
    o.kernel_wait_max_ns = 50 + g() % 300; // gaps of 0-300 ns between a stream's operations: kernel waits and others
    if (round % 4 == 3 && !deep && !many_names) o.window = {5000 + g() % 50000, 5000 + 100000 + g() % 400000}; // what starts inside
    const auto a = attribute(t);
    const timeline tl = build_timeline(t, a, o.window);
    known_duration_figures known; // as diagnose reads them: off the samples' sorted runs
    auto runs = runs_of(t, a, o.window);
    samples_of(t, a, o, known, runs);
    std::vector<stream_idle_row> walked; // HTA's rows made on the queue depths' walk, as diagnose has them made
    const launch_overview l = launch_statistics_of(tl, o, known, walked);
    CHECK(known.size() + (round % 3 == 2 ? 3 : 0) >= l.kernels.size()); // every name but those the samples group apart
    CAPTURE(round);
    // Each stream's row by HTA's definition (every operation of the stream in start order), alone
    // (idle_time_of) and made on the walk; the walk's queue depths as without the rows.
    std::map<std::uint64_t, std::vector<std::size_t>> ops_of_stream;
    for (std::size_t i = 0; i < tl.ops.size(); ++i) ops_of_stream[std::uint64_t{tl.device_of(tl.ops[i])} << 32 | tl.stream_of(tl.ops[i])].push_back(i);
    const auto alone = idle_time_of(tl, o).streams;
    REQUIRE(walked.size() == ops_of_stream.size());
    REQUIRE(alone.size() == ops_of_stream.size());
    std::size_t row_at = 0;
    for (const auto& [key, v] : ops_of_stream) {
      stream_idle_row want;
      want.device = static_cast<std::uint16_t>(key >> 32);
      want.stream = static_cast<std::uint32_t>(key);
      want.operations = v.size();
      timestamp_ns covered_to = tl.ops[v[0]].start;
      for (const auto i : v) {
        const gpu_op& op = tl.ops[i];
        if (op.start > covered_to) {
          const auto gap = op.start - covered_to;
          if (op.call_start != 0 && op.call_start > covered_to) want.host_wait_ns += gap; // no launch known: never host wait
          else (gap < o.kernel_wait_max_ns ? want.kernel_wait_ns : want.other_ns) += gap;
        }
        covered_to = std::max(covered_to, op.end);
      }
      std::vector<std::pair<timestamp_ns, timestamp_ns>> spans;
      for (const auto i : v) spans.emplace_back(tl.ops[i].start, tl.ops[i].end);
      want.busy_ns = union_inside(spans, tl.ops[v[0]].start, covered_to);
      want.idle_ns = (covered_to - tl.ops[v[0]].start) - want.busy_ns;
      const stream_idle_row* both[] = {&walked[row_at], &alone[row_at]};
      for (const auto* got : both) {
        CHECK(got->device == want.device);
        CHECK(got->stream == want.stream);
        CHECK(got->operations == want.operations);
        CHECK(got->busy_ns == want.busy_ns);
        CHECK(got->idle_ns == want.idle_ns);
        CHECK(got->host_wait_ns == want.host_wait_ns);
        CHECK(got->kernel_wait_ns == want.kernel_wait_ns);
        CHECK(got->other_ns == want.other_ns);
      }
      ++row_at;
    }
    // Each stream's launched operations in launch order (a stable sort of start order); the depth
    // at a launch: the earlier launches not ended by it (HTA's queue length).
    std::map<std::uint64_t, std::vector<std::size_t>> by_stream;
    for (std::size_t i = 0; i < tl.ops.size(); ++i)
      if (tl.ops[i].call_start != 0) by_stream[std::uint64_t{tl.device_of(tl.ops[i])} << 32 | tl.stream_of(tl.ops[i])].push_back(i);
    std::vector<std::uint64_t> depth(tl.ops.size(), 0), all_depths;
    for (auto& [key, v] : by_stream) {
      std::stable_sort(v.begin(), v.end(), [&](std::size_t x, std::size_t y) { return tl.ops[x].call_start < tl.ops[y].call_start; });
      for (std::size_t k = 0; k < v.size(); ++k) {
        for (std::size_t j = 0; j < k; ++j) depth[v[k]] += tl.ops[v[j]].end > tl.ops[v[k]].call_start;
        all_depths.push_back(depth[v[k]]);
      }
    }
    std::sort(all_depths.begin(), all_depths.end());
    CHECK(l.queue_median == median(all_depths));
    CHECK(l.queue_max == (all_depths.empty() ? 0 : all_depths.back()));
    if (deep) CHECK(l.queue_max >= 40); // the bursts did queue
    if (many_names) CHECK(l.kernels.size() > 1500);
    struct columns {
      std::vector<std::uint64_t> calls, delays, durations, queue;
      std::uint64_t short_kernels = 0, call_outliers = 0, delay_outliers = 0;
    };
    std::map<string_id, columns> by_name;
    for (std::size_t i = 0; i < tl.ops.size(); ++i) {
      const gpu_op& op = tl.ops[i];
      if (op.kind() != op_kind::kernel) continue;
      auto& c = by_name[t.kernels[op.index()].name];
      const std::uint64_t duration = op.end - op.start;
      c.durations.push_back(duration);
      if (op.call_start == 0) continue;
      const std::uint64_t call = op.has_call() ? tl.call_end(i) - op.call_start : 0;
      const std::uint64_t delay = op.start > tl.call_end(i) ? op.start - tl.call_end(i) : 0;
      if (op.has_call()) c.calls.push_back(call);
      c.delays.push_back(delay);
      c.queue.push_back(depth[i]);
      c.short_kernels += duration < (op.has_call() ? call : o.assumed_launch_ns);
      c.call_outliers += op.has_call() && call > o.call_outlier_ns;
      c.delay_outliers += delay > o.delay_outlier_ns;
    }
    REQUIRE(l.kernels.size() == by_name.size());
    std::uint64_t launches = 0, short_kernels = 0;
    for (std::size_t r = 0; r < l.kernels.size(); ++r) {
      const launch_stats_row& row = l.kernels[r];
      if (r > 0) CHECK(std::make_pair(~l.kernels[r - 1].launches, l.kernels[r - 1].name) < std::make_pair(~row.launches, row.name));
      REQUIRE(by_name.count(row.name));
      auto c = by_name[row.name];
      CAPTURE(row.name);
      for (auto* v : {&c.calls, &c.delays, &c.durations, &c.queue}) std::sort(v->begin(), v->end());
      const double fence = upper_fence(c.durations);
      CHECK(row.launches == c.durations.size());
      CHECK(row.with_call == c.calls.size());
      CHECK(row.kernel_total_ns == std::accumulate(c.durations.begin(), c.durations.end(), std::uint64_t{0}));
      CHECK(row.call_median_ns == median(c.calls));
      CHECK(row.call_p90_ns == quantile(c.calls, 0.9));
      CHECK(row.delay_median_ns == median(c.delays));
      CHECK(row.delay_p90_ns == quantile(c.delays, 0.9));
      CHECK(row.delay_max_ns == (c.delays.empty() ? 0 : c.delays.back()));
      CHECK(row.kernel_median_ns == median(c.durations));
      const auto outliers = static_cast<std::uint64_t>(std::count_if(c.durations.begin(), c.durations.end(), [&](std::uint64_t d) { return static_cast<double>(d) > fence; }));
      CHECK(row.duration_outliers == outliers);
      CHECK(row.queue_median == median(c.queue));
      CHECK(row.queue_max == (c.queue.empty() ? 0 : c.queue.back()));
      CHECK(row.short_kernels == c.short_kernels);
      CHECK(row.call_outliers == c.call_outliers);
      CHECK(row.delay_outliers == c.delay_outliers);
      launches += row.launches;
      short_kernels += row.short_kernels;
    }
    CHECK(l.launches == launches);
    CHECK(l.short_kernels == short_kernels);
    CHECK(l.call_durations_from_api == tl.any_call);
  }
}

// GPU busy time inside [a, b): the length of the operations' union there (plain reference).
static std::uint64_t union_inside(std::vector<std::pair<timestamp_ns, timestamp_ns>> ops, timestamp_ns a, timestamp_ns b) {
  std::sort(ops.begin(), ops.end());
  std::uint64_t busy = 0;
  timestamp_ns cover = a;
  for (const auto& [s, e] : ops) {
    const timestamp_ns from = std::max(s, cover), to = std::min(e, b);
    if (to > from) busy += to - from;
    cover = std::max(cover, std::min(e, b));
  }
  return busy;
}

TEST_CASE("the sync rule's GPU busy share is the operations' union inside each wait, and the utilization chunks hold each operation's overlap, on random traces") {
  NVSCOPE_SEEDED_RNG(std::mt19937_64, g);
  int rows_checked = 0, crossing = 0;
  for (int round = 0; round < 60; ++round) {
    trace t;
    t.threads.resize(2);
    std::uint32_t correlation = 1;
    const std::uint32_t kernels = round % 10 == 0 ? 0 : 50 + static_cast<std::uint32_t>(g() % 600); // some with no GPU work
    for (std::uint32_t i = 0; i < kernels; ++i) {
      kernel_record k;
      k.start = 20000 + g() % 100000;
      k.end = k.start + (g() % 9 == 0 ? 0 : 1 + g() % (g() % 3 ? 200 : 9000)); // empty ones, and ones across chunks
      k.correlation = correlation;
      k.stream = static_cast<std::uint32_t>(g() % 3);
      t.kernels.push_back(k);
      t.launches.push_back({k.start - g() % 500, correlation++, static_cast<std::uint32_t>(g() % 2)});
    }
    for (int i = 0; i < 40; ++i) { // waits before, across and after the GPU's window, some of no length
      sync_record y;
      y.start = 1 + g() % 140000;
      y.end = y.start + (i % 7 == 0 ? 0 : g() % 20000);
      y.thread = static_cast<std::uint32_t>(g() % 2);
      y.kind = sync_kind::stream;
      t.syncs.push_back(y);
    }
    const auto a = attribute(t);
    const timeline tl = build_timeline(t, a);
    diagnosis_options o;
    o.rule_rows = 1000;
    o.utilization_chunks = 1 + static_cast<std::uint32_t>(g() % 40);
    o.utilization_threshold_percent = 100.0; // every chunk below full use is a row: all are compared
    const idle_breakdown b = idle_time_of(tl, o);
    rule_readers walked(tl, o);
    read_as_walked(tl, b, walked);
    const auto rules = expert_rules_of(tl, b, o, walked);
    std::vector<std::pair<timestamp_ns, timestamp_ns>> ops;
    for (const auto& op : tl.ops) ops.emplace_back(op.start, op.end);
    const auto& syncs = rules[static_cast<int>(rule_id::sync_call)];
    REQUIRE(syncs.rows.size() == 40);
    for (const auto& row : syncs.rows) {
      const double want = row.duration == 0 ? 0.0 : 100.0 * static_cast<double>(union_inside(ops, row.start, row.start + row.duration)) / static_cast<double>(row.duration);
      CHECK(row.gpu_busy_percent == want);
      ++rows_checked;
    }
    if (tl.ops.empty()) continue;
    chunk_sums sums(tl, o.utilization_chunks);
    for (const auto& op : tl.ops) sums.take(op);
    const chunk_grid grid = std::move(sums).grid();
    for (std::size_t c = 0; c < grid.used.size(); ++c) {
      std::uint64_t want = 0;
      for (const auto& [s, e] : ops) {
        const timestamp_ns from = std::max(s, grid.chunk_begin(c)), to = std::min(e, grid.chunk_end(c));
        if (to > from) want += to - from;
        crossing += c > 0 && s < grid.chunk_begin(c) && e > grid.chunk_begin(c);
      }
      CHECK(grid.used[c] == want);
    }
  }
  CHECK(rows_checked == 40 * 60);
  CHECK(crossing > 0); // operations across chunk bounds were met
}

TEST_CASE("diagnose's one walk of the timeline (idle, chunks, gaps, step components) gives what the rules and step outliers give alone, on random traces") {
  NVSCOPE_SEEDED_RNG(std::mt19937_64, g);
  int with_outliers = 0, with_gaps = 0;
  for (int round = 0; round < 40; ++round) {
    trace t;
    t.threads.resize(2);
    const string_id kernel_names[] = {t.strings.intern("k0"), t.strings.intern("k1"), t.strings.intern("k2")};
    const string_id inner = t.strings.intern("fwd");
    const bool steps = round % 5 != 0; // some with no step range
    timestamp_ns at = 1000;
    std::uint32_t correlation = 1;
    for (std::uint32_t n = 0; n < 30; ++n) { // steps one after another, some much longer, each with an inner range
      const timestamp_ns length = 2000 + g() % 2000 + (g() % 6 == 0 ? 20000 : 0);
      range_record step;
      step.thread = 0, step.start = at, step.end = at + length, step.is_push_pop = true;
      step.name = t.strings.intern(steps ? "step_" + std::to_string(n) : "iteration");
      t.ranges.push_back(step);
      range_record in = step;
      in.start = at + 100, in.end = at + length / 2, in.name = inner;
      t.ranges.push_back(in);
      for (timestamp_ns k = at + 150; k + 300 < at + length; k += 200 + g() % 600) {
        kernel_record r;
        r.start = k + 400 + g() % 300, r.end = r.start + 1 + g() % 500;
        r.name = kernel_names[g() % 3], r.correlation = correlation, r.stream = static_cast<std::uint32_t>(g() % 2);
        t.kernels.push_back(r);
        t.launches.push_back({k, correlation++, 0});
      }
      if (g() % 3 == 0) {
        sync_record y;
        y.start = at + length / 3, y.end = y.start + g() % 3000, y.thread = 0, y.kind = sync_kind::stream;
        t.syncs.push_back(y);
      }
      at += length;
    }
    const auto a = attribute(t);
    diagnosis_options o;
    o.gpu_gap_min_ns = 300 + g() % 3000; // long gaps listed
    o.utilization_chunks = 1 + static_cast<std::uint32_t>(g() % 40);
    o.utilization_threshold_percent = static_cast<double>(g() % 101);
    const diagnosis d = diagnose(t, a, o);
    const auto rules = expert_rules(t, a, d.idle, o);
    const auto alone = step_outliers(t, a, o);
    REQUIRE(d.rules.size() == rules.size());
    for (std::size_t r = 0; r < rules.size(); ++r) {
      INFO("rule " << r);
      CHECK(d.rules[r].matches == rules[r].matches);
      CHECK(d.rules[r].total_ns == rules[r].total_ns);
      REQUIRE(d.rules[r].rows.size() == rules[r].rows.size());
      for (std::size_t i = 0; i < rules[r].rows.size(); ++i) {
        const auto &x = d.rules[r].rows[i], &y = rules[r].rows[i];
        CHECK((x.start == y.start && x.duration == y.duration && x.range == y.range && x.thread == y.thread));
        CHECK((x.in_use_percent == y.in_use_percent && x.gpu_busy_percent == y.gpu_busy_percent));
      }
    }
    with_gaps += d.rules[static_cast<int>(rule_id::gpu_gap)].matches > 0;
    CHECK(d.steps.steps == alone.steps);
    CHECK(d.steps.steps == (steps ? 30u : 0u));
    CHECK((d.steps.median_ns == alone.median_ns && d.steps.p90_ns == alone.p90_ns && d.steps.max_ns == alone.max_ns));
    CHECK((d.steps.fence_ns == alone.fence_ns && d.steps.outlier_count == alone.outlier_count));
    REQUIRE(d.steps.outliers.size() == alone.outliers.size());
    with_outliers += !alone.outliers.empty();
    for (std::size_t i = 0; i < alone.outliers.size(); ++i) {
      const auto &x = d.steps.outliers[i], &y = alone.outliers[i];
      CHECK((x.range == y.range && x.ordinal == y.ordinal && x.duration == y.duration));
      REQUIRE(x.grew.size() == y.grew.size());
      for (std::size_t k = 0; k < y.grew.size(); ++k)
        CHECK((x.grew[k].kind == y.grew[k].kind && x.grew[k].name == y.grew[k].name && x.grew[k].median_ns == y.grew[k].median_ns &&
               x.grew[k].step_ns == y.grew[k].step_ns));
    }
  }
  CHECK(with_outliers > 0); // outlier steps, and what grew in them, were compared
  CHECK(with_gaps > 0);
}

TEST_CASE("each step's time per kernel name, against its definition, with the steps of two threads running at once") {
  NVSCOPE_SEEDED_RNG(std::mt19937_64, g);
  int interleaved = 0, empty_kernels = 0;
  for (int round = 0; round < 30; ++round) {
    trace t;
    t.threads.resize(2);
    const string_id names[] = {t.strings.intern("k0"), t.strings.intern("k1"), t.strings.intern("k2"), t.strings.intern("k3")};
    std::map<std::pair<std::uint32_t, string_id>, std::uint64_t> want; // (step range, kernel name) -> time
    std::uint32_t correlation = 1;
    timestamp_ns gpu = 500;
    std::vector<timestamp_ns> at = {1000, 1000 + g() % 3000}; // each thread's clock: their steps overlap
    std::vector<std::uint32_t> open_step = {0, 0};
    std::vector<std::uint32_t> owner_step(2, ~0u);
    for (int n = 0; n < 200; ++n) {
      const std::uint32_t th = static_cast<std::uint32_t>(g() % 2); // kernels of both threads' steps interleave on the GPU
      if (owner_step[th] == ~0u || g() % 12 == 0) { // a new step on this thread (the last one closed)
        if (owner_step[th] != ~0u) t.ranges[owner_step[th]].end = at[th]++;
        range_record step;
        step.thread = th, step.start = at[th]++, step.is_push_pop = true;
        step.name = t.strings.intern("step_" + std::to_string(open_step[th]++ * 2 + th));
        owner_step[th] = static_cast<std::uint32_t>(t.ranges.size());
        t.ranges.push_back(step);
      }
      kernel_record k;
      k.start = gpu, k.end = gpu + (g() % 5 == 0 ? 0 : 1 + g() % 900); // some of no length
      k.name = names[g() % 4], k.correlation = correlation, k.stream = th;
      gpu = k.end + g() % 50;
      t.kernels.push_back(k);
      t.launches.push_back({at[th]++, correlation++, th});
      want[{owner_step[th], k.name}] += k.end - k.start;
      empty_kernels += k.end == k.start;
      interleaved += n > 0 && t.launches[n - 1].thread != th;
    }
    for (std::uint32_t th = 0; th < 2; ++th) t.ranges[owner_step[th]].end = at[th]++;
    const auto a = attribute(t);
    const diagnosis_options o;
    const timeline tl = build_timeline(t, a);
    step_tally tally(tl, o);
    for (std::size_t i = 0; i < tl.ops.size(); ++i) tally.take_op(i, tl.ops[i]);
    const step_set s = std::move(tally).finish();
    std::map<std::pair<std::uint32_t, string_id>, std::uint64_t> got;
    std::size_t cells = 0;
    for (std::size_t c = 0; c < s.components.size(); ++c) {
      REQUIRE(static_cast<component_kind>(s.components[c] >> 32) == component_kind::kernel);
      for (std::size_t k = 0; k < s.cells[c].size(); ++k) {
        const auto& cell = s.cells[c][k];
        if (k > 0) CHECK(s.cells[c][k - 1].step < cell.step); // one cell a step, in step order
        got[{s.ranges[cell.step], static_cast<string_id>(s.components[c] & 0xffffffffu)}] = cell.ns;
        CHECK(s.ns_in(c, cell.step) == cell.ns);
        ++cells;
      }
    }
    CHECK(cells == got.size());
    CHECK(got == want);
  }
  CHECK(interleaved > 1000); // the two threads' kernels alternated often
  CHECK(empty_kernels > 100);
}

TEST_CASE("the records a timeline takes, in (start, end) order: in place where all are taken in order, else listed and sorted, on random records") {
  NVSCOPE_SEEDED_RNG(std::mt19937_64, g);
  int listed = 0, in_place = 0;
  for (int round = 0; round < 200; ++round) {
    std::vector<kernel_record> records(g() % 300);
    timestamp_ns at = 1;
    for (auto& r : records) { // in order, but for what each round's shape breaks
      at += g() % 50;
      r.start = at;
      r.end = at + g() % 40;
    }
    const int shape = round % 4; // 0: all in order; 1: some incomplete; 2: some out of order; 3: a window
    if (!records.empty() && shape == 1)
      for (int k = 0; k < 3; ++k) records[g() % records.size()].end = g() % 2 ? 0 : 1; // no end, or one before the start
    if (!records.empty() && shape == 2)
      for (int k = 0; k < 3; ++k) std::swap(records[g() % records.size()], records[g() % records.size()]);
    trace t;
    t.kernels = records;
    const auto a = attribute(t);
    timeline tl;
    tl.t = &t;
    tl.a = &a;
    if (shape == 3) tl.window = {at / 3, 2 * at / 3 + 1};
    const op_order order = ops_in_order(tl, t.kernels);
    std::vector<std::uint32_t> want;
    for (std::uint32_t i = 0; i < records.size(); ++i)
      if (records[i].end != 0 && records[i].end >= records[i].start && tl.inside(records[i].start)) want.push_back(i);
    std::stable_sort(want.begin(), want.end(), [&](std::uint32_t x, std::uint32_t y) {
      return std::make_pair(records[x].start, records[x].end) < std::make_pair(records[y].start, records[y].end);
    });
    std::vector<std::uint32_t> got;
    for (std::size_t i = 0; i < order.size(); ++i) got.push_back(order[i]);
    CHECK(got == want);
    CHECK(order.all == (want.size() == records.size() && std::is_sorted(want.begin(), want.end())));
    (order.all ? in_place : listed) += 1;
  }
  CHECK(in_place > 0);
  CHECK(listed > 0);
}

// range_tally::add_run stands for its adds in a row of one range (the idle walk charges each
// run of stretches of one range and cause once): on random traces' ranges, adds in runs of
// random length over a few ranges, some of them none or past the trace, the tally of the runs
// must equal the tally of the single adds in every slot's time, count and named range.
TEST_CASE("range_tally's add_run equals its adds one by one") {
  using namespace nvscope;
  std::mt19937_64 rng(nvscope_test::fresh_seed());
  trace t;
  const string_id names[] = {t.strings.intern("a"), t.strings.intern("b"), t.strings.intern("c")};
  for (int i = 0; i < 12; ++i) {
    range_record r;
    r.name = names[rng() % 3]; // ranges of one name share a slot
    t.ranges.push_back(r);
  }
  std::size_t runs = 0, wrong = 0;
  for (int round = 0; round < 200; ++round) {
    detail::diag::range_tally single(t), batched(t);
    for (int run = 0; run < 40; ++run, ++runs) {
      const auto pick = rng() % 16;
      const std::uint32_t range = pick < 12 ? static_cast<std::uint32_t>(pick) : pick < 14 ? diagnosis_none : 1000; // none, past the trace
      std::uint64_t ns = 0, count = 0, longest = 0;
      for (auto n = 1 + rng() % 6; n > 0; --n) {
        const std::uint64_t d = rng() % 4 == 0 ? 50 : rng() % 100; // ties with the longest kept
        single.add(range, d);
        ns += d, ++count, longest = std::max(longest, d);
      }
      batched.add_run(range, ns, count, longest);
    }
    const auto x = single.top(10), y = batched.top(10);
    wrong += x.size() != y.size();
    for (std::size_t i = 0; i < std::min(x.size(), y.size()); ++i)
      wrong += x[i].ns != y[i].ns || x[i].count != y[i].count || x[i].range != y[i].range || x[i].name != y[i].name;
  }
  CHECK(runs == 8000);
  CHECK(wrong == 0);
}

// Summaries and metrics on traces built by hand; every expected number is worked out here.
#include <doctest/doctest.h>
#include "test_seed.hpp"
#include "random_trace.hpp"
#include "synthetic_trace.hpp"
#include <nvscope/analysis.hpp>
#include <nvscope/analyze/analyze.hpp> // the engine's passes, called alone
#include <nvscope/export/summary_json.hpp>
#include <nvscope/export/table.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace {

struct builder {
  nvscope::trace t;
  std::uint32_t next_corr = 1;

  builder() { t.threads.push_back({1234, 0}); t.threads.push_back({5678, 0}); t.process_id = 42; }

  std::uint32_t range(const char* name, std::uint64_t start, std::uint64_t end, std::uint32_t thread = 0, bool push_pop = true,
                      const char* domain = nullptr) {
    nvscope::range_record r;
    r.start = start;
    r.end = end;
    r.name = t.strings.intern(name);
    r.domain = domain ? t.strings.intern(domain) : 0;
    r.thread = thread;
    r.is_push_pop = push_pop;
    t.ranges.push_back(r);
    return static_cast<std::uint32_t>(t.ranges.size() - 1);
  }
  std::uint32_t launch(std::uint64_t time, std::uint32_t thread = 0) {
    t.launches.push_back({time, next_corr, thread});
    return next_corr++;
  }
  void kernel(const char* name, std::uint64_t start, std::uint64_t end, std::uint32_t corr, std::uint32_t stream = 7) {
    nvscope::kernel_record k;
    k.start = start;
    k.end = end;
    k.name = t.strings.intern(name);
    k.correlation = corr;
    k.stream = stream;
    t.kernels.push_back(k);
  }
  void copy(nvscope::copy_kind kind, std::uint64_t bytes, std::uint64_t start, std::uint64_t end, std::uint32_t corr) {
    nvscope::copy_record c;
    c.kind = kind;
    c.bytes = bytes;
    c.start = start;
    c.end = end;
    c.correlation = corr;
    t.copies.push_back(c);
  }
};

const nvscope::kernel_summary_row* find_kernel(const nvscope::analysis_report& r, const std::string& name) {
  for (const auto& k : r.kernels)
    if (k.name == name) return &k;
  return nullptr;
}

} // namespace

TEST_CASE("stats: median of odd and even counts, sample stddev, single value") {
  std::vector<std::uint64_t> odd{50, 10, 30};
  auto s = nvscope::detail::stats_of(odd.data(), odd.data() + odd.size());
  CHECK(s.count == 3);
  CHECK(s.total == 90);
  CHECK(s.median == 30.0);
  CHECK(s.average == 30.0);
  CHECK(s.stddev == doctest::Approx(20.0)); // sqrt((400+0+400)/2)
  std::vector<std::uint64_t> even{40, 10, 30, 20};
  s = nvscope::detail::stats_of(even.data(), even.data() + even.size());
  CHECK(s.median == 25.0);
  CHECK(s.min == 10);
  CHECK(s.max == 40);
  CHECK(s.stddev == doctest::Approx(std::sqrt(500.0 / 3.0)));
  std::vector<std::uint64_t> one{7};
  s = nvscope::detail::stats_of(one.data(), one.data() + one.size());
  CHECK(s.median == 7.0);
  CHECK(s.stddev == 0.0);
  // nsys's own example: 169856 and 172992 -> median 171424.0, stddev 2217.5
  std::vector<std::uint64_t> nsys{169856, 172992};
  s = nvscope::detail::stats_of(nsys.data(), nsys.data() + nsys.size());
  CHECK(s.median == 171424.0);
  CHECK(nvscope::detail::fmt_f(s.stddev, 1) == "2217.5");
}

TEST_CASE("stats against a naive reference on random data") {
  NVSCOPE_SEEDED_RNG(std::mt19937_64, rng);
  for (int round = 0; round < 20; ++round) {
    std::vector<std::uint64_t> v(1 + rng() % 101);
    for (auto& x : v) x = rng() % 100000;
    auto sorted = v;
    std::sort(sorted.begin(), sorted.end());
    const auto n = sorted.size();
    const double med = n % 2 ? double(sorted[n / 2]) : (double(sorted[n / 2 - 1]) + double(sorted[n / 2])) / 2;
    double mean = 0;
    for (auto x : v) mean += double(x);
    mean /= double(n);
    double ss = 0;
    for (auto x : v) ss += (double(x) - mean) * (double(x) - mean);
    const double sd = n > 1 ? std::sqrt(ss / double(n - 1)) : 0.0;
    auto s = nvscope::detail::stats_of(v.data(), v.data() + v.size());
    CHECK(s.median == med);
    CHECK(s.average == doctest::Approx(mean));
    CHECK(s.stddev == doctest::Approx(sd));
    CHECK(s.min == sorted.front());
    CHECK(s.max == sorted.back());
  }
}

// analyze(t) lets go of the index's columns per launch before the diagnosis (the index is its
// own); analyze(t, x) must leave the caller's index whole. Both must give the same report, on
// traces whose start/end ranges and steps the released columns fed.
TEST_CASE("analyze(t) and analyze(t, index_trace(t)) give the same report, and the caller's index stays whole") {
  for (const auto& t : {synthetic::make_trace(30000), synthetic::per_operator(20000)}) {
    const auto x = nvscope::index_trace(t);
    const auto launches = x.launch_owner.size(), offsets = x.start_end_offset.size(), open = x.start_end_ranges.size();
    const auto own = nvscope::analyze(t), given = nvscope::analyze(t, x, {});
    CHECK(nvscope::to_json(own, t) == nvscope::to_json(given, t));
    CHECK(nvscope::to_text(own, t) == nvscope::to_text(given, t));
    CHECK(own.range_kernels.size() == given.range_kernels.size());
    CHECK(own.diagnosis.idle.stretches.size() == given.diagnosis.idle.stretches.size());
    CHECK(x.launch_owner.size() == launches);
    CHECK(x.start_end_offset.size() == offsets);
    CHECK(x.start_end_ranges.size() == open);
    CHECK(launches == t.launches.size());
  }
}

// moments_by of an array sums and bounds four values a step, each in a lane of its own, past 16
// values: every size to 80 (the tail after the last step of four, the lanes joined), and the
// smallest and largest value in every place, must give what one value at a time gives.
TEST_CASE("moments_by of an array, four lanes a step, gives the count, total and extremes one value at a time gives") {
  NVSCOPE_SEEDED_RNG(std::mt19937_64, rng);
  std::size_t wrong = 0, cases = 0;
  for (std::size_t n = 1; n <= 80; ++n)
    for (std::size_t at = 0; at < n; ++at) {
      std::vector<std::uint64_t> v(n);
      for (auto& x : v) x = 1000 + rng() % 100000;
      v[at] = 7;                              // the smallest here
      v[(at * 7 + 3) % n] = ~std::uint64_t{0} - rng() % 3; // the largest somewhere else (or here: then it wins over 7)
      std::uint64_t total = 0, lo = ~std::uint64_t{0}, hi = 0;
      for (const auto x : v) total += x, lo = std::min(lo, x), hi = std::max(hi, x); // wraps as the lanes do
      const auto s = nvscope::detail::moments_by(nvscope::detail::each_value{v.data(), v.data() + n});
      wrong += s.count != n || s.total != total || s.min != lo || s.max != hi || s.average != static_cast<double>(total) / static_cast<double>(n);
      ++cases;
    }
  CHECK(cases == 3240);
  CHECK(wrong == 0);
}

namespace {

// A random value of one of `spreads` spreads that take every path of the selections: few values
// (the copy), ties (one bucket, read again), a narrow range (one exact level), wide ranges (a
// bucket copied), outliers (most values in one bucket), values at the top of the 64-bit range
// (no overflow at the edges), two values far apart (two buckets at the ends).
constexpr int spreads = 7;
std::uint64_t spread_value(std::mt19937_64& rng, int spread) {
  switch (spread) {
    case 0: return 1500 + (rng() % 7) * 250;
    case 1: return rng() % 1000;
    case 2: return rng() % 100000000;
    case 3: return 200 + (rng() % 100 == 0 ? rng() % 1000000 : 0);
    case 4: return ~std::uint64_t{0} - rng() % 5000000;
    case 5: return rng() % 2 ? 7 : 9000000000ull;
    default: return rng();
  }
}

} // namespace

TEST_CASE("ranks_of, stats_of and quantiles_of read what a full sort puts at each rank, any spread, any size") {
  const auto seed = nvscope_test::fresh_seed();
  INFO("seed " << seed); // a failure names the input
  std::mt19937_64 rng(seed);
  auto value = [&](int spread) { return spread_value(rng, spread); };
  for (int round = 0; round < 70; ++round) {
    const int spread = round % spreads;
    const std::size_t n = round < 2 * spreads ? 1 + rng() % 3000 : 2000 + rng() % 60000;
    std::vector<std::uint64_t> a(n / 3), b(n - n / 3); // two arrays read as one
    for (auto& x : a) x = value(spread);
    for (auto& x : b) x = value(spread);
    std::vector<std::uint64_t> sorted(a);
    sorted.insert(sorted.end(), b.begin(), b.end());
    const auto original = sorted;
    std::sort(sorted.begin(), sorted.end());
    auto both = [&](auto&& f) {
      for (auto x : a) f(x);
      for (auto x : b) f(x);
    };
    CAPTURE(spread);
    CAPTURE(n);
    for (int probe = 0; probe < 8; ++probe) {
      const std::uint64_t k = probe == 0 ? 0 : probe == 1 ? n - 1 : probe == 2 ? (n - 1) / 2 : rng() % n;
      const bool next = k + 1 < n && probe % 2 == 0;
      const auto [at, after] = nvscope::detail::ranks_of(both, n, k, next, sorted.front(), sorted.back());
      CHECK(at == sorted[k]);
      CHECK(after == (next ? sorted[k + 1] : sorted[k]));
    }
    const double median = n % 2 ? double(sorted[n / 2]) : (double(sorted[n / 2 - 1]) + double(sorted[n / 2])) / 2;
    CHECK(nvscope::detail::median_of(both, n, sorted.front(), sorted.back()) == median);
    std::vector<std::uint64_t> whole(original);
    const auto st = nvscope::detail::stats_of(whole.data(), whole.data() + whole.size());
    CHECK(st.median == median);
    // The standard deviation by its definition, summed in the values' order from the mean of
    // their (64-bit, wrapping) total, as stats_of takes them: the same operations (equal but
    // for a compiler's fused multiply-adds).
    std::uint64_t total = 0;
    for (const auto x : original) total += x;
    const double mean = static_cast<double>(total) / static_cast<double>(n);
    double squares = 0.0;
    for (const auto x : original) {
      const double d = static_cast<double>(x) - mean;
      squares += d * d;
    }
    CHECK(st.stddev == doctest::Approx(n > 1 ? std::sqrt(squares / static_cast<double>(n - 1)) : 0.0).epsilon(1e-12));
    CHECK(whole == original); // read, never moved
    const std::size_t rank90 = std::max<std::size_t>(1, static_cast<std::size_t>(std::ceil(0.9 * double(n))));
    const auto q = nvscope::detail::quantiles_of(whole.data(), whole.data() + whole.size(), {0.9});
    CHECK(q.median == median);
    CHECK(q.quantiles[0] == double(sorted[rank90 - 1]));
    CHECK(q.max == sorted.back());
    std::vector<std::uint32_t> narrow(original.begin(), original.end()); // another value type: the same ranks of its values
    std::vector<std::uint32_t> narrow_sorted(narrow);
    std::sort(narrow_sorted.begin(), narrow_sorted.end());
    const auto qn = nvscope::detail::quantiles_of(narrow.data(), narrow.data() + narrow.size(), {0.9});
    const double narrow_median = n % 2 ? double(narrow_sorted[n / 2]) : (double(narrow_sorted[n / 2 - 1]) + double(narrow_sorted[n / 2])) / 2;
    CHECK(qn.median == narrow_median);
    CHECK(qn.quantiles[0] == double(narrow_sorted[rank90 - 1]));
  }
}

// select_ranks, the selection in a copy of at most 1,024 values that every small row's median
// takes (a histogram of its own size, its bucket moved to the front, until 16 values or one are
// left): every size to 1,100, every spread, ranks at the ends, the middle and at random, with
// and without the next rank, against a full sort.
TEST_CASE("select_ranks finds what a full sort puts at a rank and the next, at every small size and spread") {
  const auto seed = nvscope_test::fresh_seed();
  INFO("seed " << seed);
  std::mt19937_64 rng(seed);
  std::size_t checks = 0, wrong = 0;
  for (std::uint32_t m = 1; m <= 1100; m += m < 40 ? 1 : 1 + static_cast<std::uint32_t>(rng() % 23)) {
    for (int spread = 0; spread < spreads; ++spread) {
      std::vector<std::uint64_t> values(m);
      for (auto& x : values) x = spread_value(rng, spread);
      auto sorted = values;
      std::sort(sorted.begin(), sorted.end());
      for (int probe = 0; probe < 6; ++probe) {
        const std::uint64_t k = probe == 0 ? 0 : probe == 1 ? m - 1 : probe == 2 ? (m - 1) / 2 : rng() % m;
        const bool next = probe % 2 == 0;
        auto v = values; // written over by the selection
        const auto [at, after] = nvscope::detail::select_ranks(v.data(), m, k, next, sorted.front(), sorted.back() - sorted.front());
        wrong += at != sorted[k];
        wrong += after != (next && k + 1 < m ? sorted[k + 1] : sorted[k]); // no next past the last: rank k again
        checks += 2;
      }
    }
  }
  CHECK(checks > 8000); // 128 sizes or so, 7 spreads, 6 probes, 2 checks
  CHECK(wrong == 0);
}

TEST_CASE("values_at_ranks reads what a full sort puts at each of several ranks, any spread, any size") {
  const auto seed = nvscope_test::fresh_seed();
  INFO("seed " << seed); // a failure names the input
  std::mt19937_64 rng(seed);
  auto value = [&](int spread) { return spread_value(rng, spread); };
  for (int round = 0; round < 84; ++round) {
    const int spread = round % spreads;
    const std::size_t n = round < 2 * spreads ? 1 + rng() % 3000 : 2000 + rng() % 60000;
    std::vector<std::uint64_t> v(n);
    for (auto& x : v) x = value(spread);
    std::vector<std::uint64_t> sorted(v);
    std::sort(sorted.begin(), sorted.end());
    const auto original = v;
    const nvscope::detail::each_value each{v.data(), v.data() + v.size()};
    for (int probe = 0; probe < 6; ++probe) {
      const std::size_t m = 1 + rng() % 4;
      std::uint64_t ranks[4], got[4] = {};
      for (std::size_t i = 0; i < m; ++i) { // ends, the middle, neighbours and repeats among random ranks
        const auto pick = rng() % 6;
        ranks[i] = pick == 0 ? 0 : pick == 1 ? n - 1 : pick == 2 ? (n - 1) / 2 : pick == 3 && i > 0 ? std::min<std::uint64_t>(ranks[i - 1] + 1, n - 1)
                   : pick == 4 && i > 0 ? ranks[i - 1] : rng() % n;
      }
      nvscope::detail::values_at_ranks(each, n, ranks, m, sorted.front(), sorted.back(), got);
      for (std::size_t i = 0; i < m; ++i) {
        INFO("n " << n << " spread " << spread << " rank " << ranks[i]);
        CHECK(got[i] == sorted[ranks[i]]);
      }
    }
    CHECK(v == original); // read, never moved
  }
  std::uint64_t none[2] = {1, 1}; // no values: the range's low end, nothing read past the ranks given
  const std::uint64_t ranks[2] = {0, 0};
  nvscope::detail::values_at_ranks(nvscope::detail::each_value{nullptr, nullptr}, 0, ranks, 2, 5, 9, none);
  CHECK(none[0] == 5);
  CHECK(none[1] == 5);
}

namespace {

// attribute(t) builds only the links (no start/end ranges open at each launch, no range groups):
// every field must be index_trace(t)'s.
bool same_links(const nvscope::attribution& a, const nvscope::attribution& b) {
  return a.kernel_launch == b.kernel_launch && a.copy_launch == b.copy_launch && a.memset_launch == b.memset_launch &&
         a.kernel_owner == b.kernel_owner && a.copy_owner == b.copy_owner && a.memset_owner == b.memset_owner && a.parent == b.parent &&
         a.depth == b.depth && a.range_end == b.range_end && a.trace_end == b.trace_end;
}

} // namespace

TEST_CASE("attribute(t) is index_trace(t)'s links: random nested traces, the synthetic training run, PyTorch's shape") {
  NVSCOPE_SEEDED_RNG(std::mt19937_64, g);
  std::size_t wrong = 0, owned = 0;
  for (int round = 0; round < 20; ++round) {
    const auto t = synthetic::nested_names_trace(g, round % 2 == 1);
    const auto a = nvscope::attribute(t);
    wrong += !same_links(a, nvscope::index_trace(t).links);
    for (const auto o : a.kernel_owner) owned += o != nvscope::attribution::none;
  }
  CHECK(wrong == 0);
  CHECK(owned > 0); // the traces do put kernels under ranges
  for (const auto& t : {synthetic::make_trace(20000), synthetic::per_operator(20000)}) {
    const auto a = nvscope::attribute(t);
    CHECK(same_links(a, nvscope::index_trace(t).links));
    CHECK(a.copy_owner.size() == t.copies.size());
    CHECK(!t.copies.empty());
  }
}

TEST_CASE("the thread table finds whether each thread's launches come in time order, as launches_in_thread_order does, foreign thread indexes and interleaved runs included, and their largest correlation id for the launch lookup") {
  NVSCOPE_SEEDED_RNG(std::mt19937_64, g);
  int in_order = 0;
  for (int round = 0; round < 300; ++round) {
    nvscope::trace t;
    t.threads.resize(g() % 3);
    const std::uint32_t threads[] = {0, 1, 2, 0xfffffff0u, 0xfffffff5u, 7};
    std::uint64_t now[6] = {};
    const bool spoil = g() % 2 == 0;
    const std::size_t n = 1 + g() % 60;
    std::uint32_t most = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t k = g() % 6;
      const std::size_t run = 1 + g() % 4;
      for (std::size_t j = 0; j < run; ++j) {
        now[k] += g() % 3; // equal times now and then: in order still
        auto time = now[k];
        if (spoil && g() % 20 == 0 && time > 0) time -= 1; // one earlier than the thread's last
        const auto id = g() % 8 == 0 ? static_cast<std::uint32_t>(g()) : static_cast<std::uint32_t>(t.launches.size() + 1); // some far apart
        t.launches.push_back({time, id, threads[k]});
        most = std::max(most, id);
      }
    }
    if (g() % 3 == 0) t.ranges.push_back({}); // a range on thread 0
    const nvscope::detail::thread_table slots(t);
    CAPTURE(round);
    CHECK(slots.launches_in_order() == nvscope::detail::launches_in_thread_order(t, slots));
    CHECK(slots.most_correlation() == most);
    const nvscope::detail::launch_lookup told(t.launches, slots.most_correlation()), found(t.launches);
    for (const auto& l : t.launches) CHECK(told.find(l.correlation) == found.find(l.correlation));
    in_order += slots.launches_in_order();
  }
  CHECK(in_order > 50); // both answers met
  CHECK(in_order < 250);
}

TEST_CASE("the start/end ranges open at each launch, against their definition, launches in any order") {
  NVSCOPE_SEEDED_RNG(std::mt19937_64, g);
  std::size_t pairs = 0, shared = 0, changed = 0, left_out = 0;
  for (int round = 0; round < 40; ++round) {
    auto t = synthetic::nested_names_trace(g, round % 2 == 1);
    if (round % 4 < 2) std::shuffle(t.launches.begin(), t.launches.end(), g); // out of time order: each thread swept alone
    else std::stable_sort(t.launches.begin(), t.launches.end(), [](const auto& a, const auto& b) { return a.time < b.time; }); // all at once
    CHECK(nvscope::detail::launches_in_thread_order(t, nvscope::detail::thread_table(t)) == (round % 4 >= 2));
    for (auto& r : t.ranges) // some start/end ranges ended on another thread: nsys gives them no launches
      if (!r.is_push_pop && g() % 6 == 0) r.end_thread = r.thread + 1, ++left_out;
    const auto x = nvscope::index_trace(t);
    REQUIRE(x.start_end_offset.size() == t.launches.size() + 1);
    REQUIRE(x.start_end_offset.back() == x.start_end_ranges.size());
    std::vector<std::uint32_t> before;
    for (std::size_t l = 0; l < t.launches.size(); ++l) {
      const auto& launch = t.launches[l];
      std::vector<std::uint32_t> expected, got(x.start_end_ranges.begin() + x.start_end_offset[l], x.start_end_ranges.begin() + x.start_end_offset[l + 1]);
      for (std::uint32_t r = 0; r < t.ranges.size(); ++r) {
        const auto& range = t.ranges[r];
        if (range.is_push_pop || range.is_mark || range.thread != launch.thread || range.closing_thread() != range.thread) continue;
        if (range.start <= launch.time && launch.time <= x.links.range_end[r]) expected.push_back(r);
      }
      std::sort(got.begin(), got.end());
      CHECK(got == expected);
      pairs += got.size();
      if (!got.empty()) (got == before ? shared : changed) += 1;
      before = got;
    }
  }
  CHECK(left_out > 0);
  CHECK(pairs > 0);
  CHECK(shared > 0); // launches that share their neighbour's list, and others whose list changed
  CHECK(changed > 0);
}

// Launches, marks and ranges of several threads, with times that repeat: the index's sweeps all
// at once (each thread's launches in time order in the records) and per thread (the same records
// reversed) must give the same nesting, owners and open start/end ranges.
TEST_CASE("the sweeps of every thread at once give the nesting and owners of the sweeps per thread") {
  NVSCOPE_SEEDED_RNG(std::mt19937_64, g);
  std::size_t marks = 0, owned = 0, open_pairs = 0;
  for (int round = 0; round < 30; ++round) {
    nvscope::trace t;
    t.threads = {{11, 0}, {12, 0}, {13, 0}};
    std::uint32_t corr = 1;
    std::uint64_t now = 100;
    std::vector<std::vector<std::size_t>> stacks(4), opens(4);
    for (int e = 0; e < 1500; ++e) {
      now += g() % 3; // times repeat
      const std::uint32_t thread = g() % 4 == 3 ? 9 : static_cast<std::uint32_t>(g() % 3); // 9: a thread index past the table
      auto& stack = stacks[thread % 4];
      auto& open = opens[thread % 4];
      const auto what = g() % 12;
      nvscope::range_record r;
      r.name = t.strings.intern(what % 2 ? "a" : "b");
      r.start = now;
      r.thread = thread;
      if (what < 3 && stack.size() < 8) {
        stack.push_back(t.ranges.size());
        t.ranges.push_back(r);
      } else if (what < 5 && !stack.empty()) {
        t.ranges[stack.back()].end = now;
        stack.pop_back();
      } else if (what == 5) {
        r.is_mark = true;
        r.end = now;
        t.ranges.push_back(r);
        ++marks;
      } else if (what == 6) {
        if (!open.empty() && g() % 2) {
          t.ranges[open.back()].end = now;
          open.pop_back();
        } else {
          r.is_push_pop = false;
          open.push_back(t.ranges.size());
          t.ranges.push_back(r);
        }
      } else {
        t.launches.push_back({now, corr, thread});
        nvscope::kernel_record k;
        k.name = t.strings.intern("k");
        k.start = 1000000 + corr * 10;
        k.end = k.start + 5;
        k.correlation = corr++;
        t.kernels.push_back(k);
      }
    }
    auto reversed = t;
    std::reverse(reversed.launches.begin(), reversed.launches.end());
    const nvscope::detail::thread_table slots(t);
    REQUIRE(nvscope::detail::launches_in_thread_order(t, slots));
    REQUIRE_FALSE(nvscope::detail::launches_in_thread_order(reversed, slots));
    const auto x = nvscope::index_trace(t), y = nvscope::index_trace(reversed);
    CHECK(x.links.parent == y.links.parent);
    CHECK(x.links.depth == y.links.depth);
    CHECK(x.links.kernel_owner == y.links.kernel_owner);
    const auto n = t.launches.size();
    std::size_t wrong = 0;
    for (std::size_t l = 0; l < n; ++l) {
      const auto m = n - 1 - l; // launch l of t is launch m of `reversed`
      wrong += x.launch_owner[l] != y.launch_owner[m];
      std::vector<std::uint32_t> a(x.start_end_ranges.begin() + x.start_end_offset[l], x.start_end_ranges.begin() + x.start_end_offset[l + 1]),
          b(y.start_end_ranges.begin() + y.start_end_offset[m], y.start_end_ranges.begin() + y.start_end_offset[m + 1]);
      wrong += a != b;
      owned += x.launch_owner[l] != nvscope::attribution::none;
      open_pairs += a.size();
    }
    CHECK(wrong == 0);
  }
  CHECK(marks > 0); // the traces hold marks, owned launches and open start/end ranges
  CHECK(owned > 0);
  CHECK(open_pairs > 0);
}

TEST_CASE("cuda_gpu_kern_sum: grouping, percent, sort by total") {
  builder b;
  auto c1 = b.launch(10), c2 = b.launch(20), c3 = b.launch(30);
  b.kernel("gemm", 100, 400, c1);   // 300
  b.kernel("gemm", 500, 600, c2);   // 100
  b.kernel("softmax", 700, 800, c3); // 100
  auto r = nvscope::analyze(b.t);
  REQUIRE(r.kernels.size() == 2);
  CHECK(r.kernels[0].name == "gemm");
  CHECK(r.kernels[0].time.total == 400);
  CHECK(r.kernels[0].time.count == 2);
  CHECK(r.kernels[0].time.median == 200.0);
  CHECK(r.kernels[0].time_percent == doctest::Approx(80.0));
  CHECK(r.kernels[1].time_percent == doctest::Approx(20.0));
  CHECK(r.kernels[1].time.stddev == 0.0);
}

TEST_CASE("memops by time and size, nsys operation names, MB are 10^6 bytes") {
  builder b;
  b.copy(nvscope::copy_kind::host_to_device, 4194304, 0, 100, b.launch(0));
  b.copy(nvscope::copy_kind::host_to_device, 4194304, 200, 400, b.launch(1));
  b.copy(nvscope::copy_kind::device_to_host, 1000000, 500, 1000, b.launch(2));
  nvscope::memset_record m;
  m.start = 1000; m.end = 1010; m.bytes = 64; m.correlation = b.launch(3);
  b.t.memsets.push_back(m);
  auto r = nvscope::analyze(b.t);
  REQUIRE(r.memops_by_time.size() == 3);
  CHECK(r.memops_by_time[0].operation == "[CUDA memcpy Device-to-Host]");
  CHECK(r.memops_by_time[1].operation == "[CUDA memcpy Host-to-Device]");
  CHECK(r.memops_by_time[1].time.total == 300);
  CHECK(r.memops_by_time[2].operation == "[CUDA memset]");
  REQUIRE(r.memops_by_size.size() == 3);
  CHECK(r.memops_by_size[0].operation == "[CUDA memcpy Host-to-Device]");
  auto tab = nvscope::table_of(r, nvscope::report::cuda_gpu_mem_size_sum);
  CHECK(tab.rows[0][0] == "8.389");
  CHECK(tab.rows[0][2] == "4.194");
  CHECK(tab.rows[1][0] == "1.000");
}

TEST_CASE("attribution: innermost push/pop range at launch owns the kernel; nesting; projection") {
  builder b;
  auto step = b.range("step_0", 0, 1000);
  auto fwd = b.range("forward", 100, 400);
  auto attn = b.range("attention", 150, 250);
  auto bwd = b.range("backward", 500, 900);
  auto c1 = b.launch(160); // in attention
  auto c2 = b.launch(300); // in forward
  auto c3 = b.launch(600); // in backward
  auto c4 = b.launch(950); // in step only
  b.kernel("k_attn", 2000, 2100, c1);
  b.kernel("k_fwd", 2150, 2400, c2);
  b.kernel("k_bwd", 2400, 2800, c3);
  b.kernel("k_tail", 3000, 3010, c4);
  auto a = nvscope::attribute(b.t);
  CHECK(a.kernel_owner[0] == attn);
  CHECK(a.kernel_owner[1] == fwd);
  CHECK(a.kernel_owner[2] == bwd);
  CHECK(a.kernel_owner[3] == step);
  CHECK(a.parent[attn] == fwd);
  CHECK(a.parent[fwd] == step);
  CHECK(a.depth[attn] == 2);
  const auto nesting = nvscope::link_ranges(b.t);
  CHECK(nesting.parent[attn] == fwd);
  CHECK(nesting.depth[bwd] == 1);

  auto r = nvscope::analyze(b.t);
  // nvtx_gpu_proj_sum: step spans 2000..3010, forward 2000..2400, attention 2000..2100
  auto find = [&](const std::string& name) -> const nvscope::gpu_projection_row* {
    for (const auto& p : r.projections)
      if (p.range == name) return &p;
    return nullptr;
  };
  REQUIRE(find(":step_0"));
  CHECK(find(":step_0")->projected.total == 1010);
  CHECK(find(":step_0")->total_gpu_ops == 4);
  CHECK(find(":step_0")->total_range_time == 1000);
  CHECK(find(":step_0")->avg_children == 2.0); // forward and backward launched work
  CHECK(find(":forward")->projected.total == 400);
  CHECK(find(":forward")->avg_range_level == 1.0);
  CHECK(find(":attention")->projected.total == 100);
  CHECK(find(":attention")->avg_range_level == 2.0);
  CHECK(find(":backward")->projected.total == 400);
  CHECK(r.projections.front().range == ":step_0");
  // nvtx_kern_sum: k_attn appears under attention, forward and step_0
  int attn_rows = 0;
  for (const auto& row : r.range_kernels)
    if (row.kernel == "k_attn") {
      ++attn_rows;
      CHECK(row.time.total == 100);
      CHECK(row.tid == 1234);
      CHECK(row.pid == 42);
    }
  CHECK(attn_rows == 3);
  // steps
  CHECK(r.steps == 1);
  CHECK(r.kernels_per_step == 4.0);
}

TEST_CASE("graph kernels share a correlation id and one launch") {
  builder b;
  b.range("graph_region", 0, 100);
  auto c = b.launch(50);
  b.kernel("node_a", 1000, 1100, c);
  b.kernel("node_b", 1100, 1300, c);
  b.kernel("node_c", 1300, 1350, c);
  auto a = nvscope::attribute(b.t);
  for (auto o : a.kernel_owner) CHECK(o == 0u);
  auto r = nvscope::analyze(b.t);
  REQUIRE(r.projections.size() == 1);
  CHECK(r.projections[0].total_gpu_ops == 1); // one launch, as nsys counts distinct correlation ids
  CHECK(r.projections[0].projected.total == 350);
  CHECK(r.range_kernels.size() == 3);
}

TEST_CASE("start/end ranges project by time on the launching thread; push/pop on another thread do not") {
  builder b;
  b.range("load", 0, 1000, 0, false);
  b.range("other_thread", 0, 1000, 1, true);
  auto c = b.launch(500, 0);
  b.kernel("k", 2000, 2500, c);
  auto r = nvscope::analyze(b.t);
  REQUIRE(r.projections.size() == 1);
  CHECK(r.projections[0].range == ":load");
  CHECK(r.projections[0].style == "StartEnd");
  // nvtx_sum labels both styles "domain:name" as nsys 2025.3 does (":load", not "load")
  bool start_end = false, push_pop = false;
  for (const auto& row : r.ranges) {
    start_end = start_end || (row.range == ":load" && row.style == "StartEnd");
    push_pop = push_pop || (row.range == ":other_thread" && row.style == "PushPop");
  }
  CHECK(start_end);
  CHECK(push_pop);
}

TEST_CASE("domains prefix range names") {
  builder b;
  b.range("alloc", 0, 10, 0, true, "mylib");
  auto r = nvscope::analyze(b.t);
  REQUIRE(r.ranges.size() == 1);
  CHECK(r.ranges[0].range == "mylib:alloc");
}

TEST_CASE("metrics: busy, overlap, sync, gaps on a hand-built timeline") {
  builder b;
  b.t.begin = 0;
  b.t.finish = 1000;
  // kernels 100-300 and 500-600; copy 250-450 (overlaps 50 with kernel); memset 900-950
  b.kernel("k1", 100, 300, b.launch(0));
  b.kernel("k2", 500, 600, b.launch(1));
  b.copy(nvscope::copy_kind::host_to_device, 10, 250, 450, b.launch(2));
  nvscope::memset_record m;
  m.start = 900; m.end = 950; m.correlation = b.launch(3);
  b.t.memsets.push_back(m);
  nvscope::sync_record s;
  s.start = 600; s.end = 800;
  b.t.syncs.push_back(s);
  nvscope::analysis_options o;
  o.window = {0, 1000}; // explicit: the default window is first to last GPU activity
  auto r = nvscope::analyze(b.t, o);
  // union: 100-450 (350) + 500-600 (100) + 900-950 (50) = 500 of 1000
  CHECK(r.overall.busy_ns == 500);
  CHECK(r.overall.gpu_busy_percent == doctest::Approx(50.0));
  CHECK(r.overall.overlap_ns == 50);
  CHECK(r.overall.copy_compute_overlap_percent == doctest::Approx(25.0));
  CHECK(r.overall.sync_percent == doctest::Approx(20.0));
  // gaps: 450->500 = 50, 600->900 = 300; median 175, p90 = 300
  CHECK(r.overall.gap_count == 2);
  CHECK(r.overall.gap_median_ns == 175.0);
  CHECK(r.overall.gap_p90_ns == 300.0);
  CHECK(r.overall.kernel_median_ns == 150.0);
}

// The verdict is the diagnosis' (analyze/diagnose, tests/diagnose has the scenarios); these
// check that the pipeline carries it, on the same window and step names as the summaries.
TEST_CASE("verdicts") {
  SUBCASE("launch-bound") {
    builder b;
    for (int s = 0; s < 2; ++s) {
      const std::uint64_t base = 100000ull * static_cast<std::uint64_t>(s);
      b.range(("step_" + std::to_string(s)).c_str(), base, base + 90000);
      for (int k = 0; k < 10; ++k) { // each 2 us kernel starts 1 us after its launch; launches 5 us apart
        const std::uint64_t at = base + 1000 + 5000 * static_cast<std::uint64_t>(k);
        b.kernel("tiny", at + 1000, at + 3000, b.launch(at));
      }
    }
    auto r = nvscope::analyze(b.t);
    CHECK(r.kernels_per_step == 10.0);
    CHECK(r.diagnosis.verdict.kind == nvscope::bottleneck::launch_bound);
    CHECK(nvscope::verdict_line(r.diagnosis.verdict).rfind("launch-bound: ", 0) == 0);
  }
  SUBCASE("GPU-bound") {
    builder b;
    b.kernel("big", 0, 990000, b.launch(0));
    b.kernel("big", 990000, 1000000, b.launch(1));
    auto r = nvscope::analyze(b.t);
    CHECK(r.diagnosis.verdict.kind == nvscope::bottleneck::gpu_bound);
    CHECK(nvscope::verdict_line(r.diagnosis.verdict) == "GPU-bound: kernels run 100.0% of the window");
  }
  SUBCASE("copy-bound") {
    builder b;
    b.copy(nvscope::copy_kind::host_to_device, 1 << 20, 0, 800, b.launch(0));
    b.kernel("k", 800, 1000, b.launch(1));
    auto r = nvscope::analyze(b.t);
    CHECK(r.diagnosis.verdict.kind == nvscope::bottleneck::copy_bound);
  }
  SUBCASE("empty trace") {
    nvscope::trace t;
    auto r = nvscope::analyze(t);
    CHECK(r.kernels.empty());
    CHECK(r.projections.empty());
    CHECK(r.diagnosis.verdict.kind == nvscope::bottleneck::none);
    CHECK(nvscope::verdict_line(r.diagnosis.verdict) == "no GPU activity recorded");
    CHECK(nvscope::warning_lines(r).empty());
    CHECK(nvscope::to_text(r).find("SKIPPED") != std::string::npos);
  }
}

TEST_CASE("losses: incomplete records, unclosed ranges, dropped records are reported") {
  builder b;
  b.t.lost.dropped_records = 17;
  b.range("open_forever", 100, 0);
  auto c = b.launch(200);
  b.kernel("k", 300, 400, c);
  b.kernel("never_ended", 500, 0, b.launch(250));
  b.kernel("orphan", 600, 700, 999); // no launch record
  auto r = nvscope::analyze(b.t);
  CHECK(r.incomplete_found == 1);
  CHECK(r.unclosed_found == 1);
  CHECK(r.unattributed == 1);
  CHECK(find_kernel(r, "never_ended") == nullptr);
  REQUIRE(find_kernel(r, "orphan"));
  const auto warnings = nvscope::warning_lines(r);
  REQUIRE(warnings.size() == 4);
  CHECK(warnings[0].rfind("17 records dropped", 0) == 0);
  // unclosed range closed at the trace end (700): duration 600, and it owns k
  REQUIRE(r.ranges.size() == 1);
  CHECK(r.ranges[0].time.total == 600);
  REQUIRE(r.projections.size() == 1);
  CHECK(r.projections[0].projected.total == 100);
  const auto text = nvscope::to_text(r);
  CHECK(text.find("17 records dropped") != std::string::npos);
  // The collector counted the open range too: still one line about it, not two.
  b.t.lost.unclosed_ranges = 1;
  const auto both = nvscope::warning_lines(nvscope::analyze(b.t));
  CHECK(both.size() == 4);
  CHECK(std::count_if(both.begin(), both.end(), [](const std::string& w) { return w.find("open") != std::string::npos || w.find("never closed") != std::string::npos; }) == 1);
}

TEST_CASE("CSV headers are nsys's column names") {
  nvscope::analysis_report r;
  auto header = [&](nvscope::report w) {
    auto csv = nvscope::to_csv(r, w);
    return csv.substr(0, csv.find('\n'));
  };
  CHECK(header(nvscope::report::cuda_gpu_kern_sum) == "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name");
  CHECK(header(nvscope::report::cuda_gpu_mem_time_sum) == "Time (%),Total Time (ns),Count,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Operation");
  CHECK(header(nvscope::report::cuda_gpu_mem_size_sum) == "Total (MB),Count,Avg (MB),Med (MB),Min (MB),Max (MB),StdDev (MB),Operation");
  CHECK(header(nvscope::report::nvtx_sum) == "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Style,Range");
  CHECK(header(nvscope::report::nvtx_kern_sum) ==
        "NVTX Range,Style,PID,TID,NVTX Inst,Kern Inst,Total Time (ns),Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Kernel Name");
  CHECK(header(nvscope::report::nvtx_gpu_proj_sum) ==
        "Range,Style,Total Proj Time (ns),Total Range Time (ns),Range Instances,Proj Avg (ns),Proj Med (ns),Proj Min (ns),Proj Max (ns),"
        "Proj StdDev (ns),Total GPU Ops,Avg GPU Ops,Avg Range Lvl,Avg Num Child");
}

TEST_CASE("CSV rows quote names with commas; text tables align") {
  builder b;
  b.kernel("kernel_c<int, 4>", 0, 10, b.launch(0));
  b.kernel("k\"q", 20, 25, b.launch(1));
  auto r = nvscope::analyze(b.t);
  auto csv = nvscope::to_csv(r, nvscope::report::cuda_gpu_kern_sum);
  CHECK(csv.find("66.7,10,1,10.0,10.0,10,10,0.0,\"kernel_c<int, 4>\"\n") != std::string::npos);
  CHECK(csv.find(",\"k\"\"q\"\n") != std::string::npos);
  auto text = nvscope::to_text(r, nvscope::report::cuda_gpu_kern_sum);
  CHECK(text.find("CUDA GPU Kernel Summary (cuda_gpu_kern_sum)") != std::string::npos);
  CHECK(text.find(" Time (%)  Total Time (ns)") != std::string::npos);
}

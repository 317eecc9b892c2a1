// The kernels' durations by name that `analyze` groups once (analyze/kernel_runs.hpp):
// `stats_then_sort` against `stats_of` (every figure equal to the bit, the values left sorted),
// `median_of_runs` against `median_of` over all the runs' values, on fresh random values of
// several shapes; and `analyze`'s kernel table, overall activity and diagnosis against the
// passes called alone, with the kernels in start order and shuffled, with windows that hold
// every kernel, cut some off, or end at a kernel's start.

#include <nvscope/analysis.hpp>
#include <nvscope/analyze/analyze.hpp> // the engine's passes, called alone
#include <nvscope/export.hpp>

#include <doctest/doctest.h>
#include "synthetic_trace.hpp"
#include "test_seed.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

using nvscope::detail::each_value;

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// n values drawn within [base, base + span], as durations of one name are.
std::vector<std::uint64_t> draw(std::mt19937_64& rng, std::size_t n, std::uint64_t base, std::uint64_t span) {
  std::vector<std::uint64_t> v(n);
  for (auto& x : v) x = base + (span ? rng() % (span + 1) : 0);
  return v;
}

} // namespace

TEST_CASE("stats_then_sort gives stats_of's figures to the bit and leaves the values sorted") {
  NVSCOPE_SEEDED_RNG(std::mt19937_64, rng);
  for (const std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{2}, std::size_t{3}, std::size_t{1023}, std::size_t{1024},
                              std::size_t{5001}, std::size_t{200000}}) {
    for (const std::uint64_t span : {std::uint64_t{0}, std::uint64_t{7}, std::uint64_t{3000}, std::uint64_t{1} << 40}) {
      auto values = draw(rng, n, 1 + rng() % 100000, span);
      const auto expected = nvscope::detail::stats_of(values.data(), values.data() + values.size());
      auto sorted = values;
      std::sort(sorted.begin(), sorted.end());
      const auto got = nvscope::detail::stats_then_sort(values.data(), values.data() + values.size());
      CAPTURE(n);
      CAPTURE(span);
      CHECK(got.count == expected.count);
      CHECK(got.total == expected.total);
      CHECK(got.min == expected.min);
      CHECK(got.max == expected.max);
      CHECK(same_bits(got.average, expected.average));
      CHECK(same_bits(got.median, expected.median));
      CHECK(same_bits(got.stddev, expected.stddev));
      CHECK(values == sorted);
    }
  }
}

TEST_CASE("median_of_runs is the median of every run's values together") {
  NVSCOPE_SEEDED_RNG(std::mt19937_64, rng);
  for (int round = 0; round < 60; ++round) {
    const std::size_t names = 1 + rng() % (round < 30 ? 4 : 300);
    nvscope::detail::kernel_runs runs;
    runs.ids = names - 1; // the last slot: ids past the table
    runs.by_name.offset.assign(names + 1, 0);
    std::vector<std::uint64_t> all;
    for (std::size_t s = 0; s < names; ++s) {
      const std::size_t n = rng() % 3 == 0 ? 0 : rng() % (round % 5 == 0 ? 3 : 2000);
      auto v = draw(rng, n, rng() % 5000, rng() % 2 ? 40 : 1000000);
      std::sort(v.begin(), v.end());
      all.insert(all.end(), v.begin(), v.end());
      runs.by_name.offset[s + 1] = all.size();
    }
    runs.by_name.values.assign(all.begin(), all.end());
    runs.sorted = true;
    CAPTURE(round);
    CAPTURE(all.size());
    double expected = 0.0;
    if (!all.empty()) {
      const auto [lo, hi] = nvscope::detail::extremes_of(each_value{all.data(), all.data() + all.size()});
      expected = nvscope::detail::median_of(each_value{all.data(), all.data() + all.size()}, all.size(), lo, hi);
    }
    CHECK(same_bits(nvscope::detail::median_of_runs(runs), expected));
  }
}

TEST_CASE("kernel_runs' window test holds where every kernel starts inside, as in_window reads a start") {
  nvscope::detail::kernel_runs runs;
  CHECK(runs.inside({10, 20})); // no kernels: any window
  runs.by_name.values.resize(2);
  runs.first_start = 10;
  runs.last_start = 19;
  CHECK(runs.inside({}));
  CHECK(runs.inside({10, 20}));
  CHECK_FALSE(runs.inside({11, 20}));
  CHECK_FALSE(runs.inside({10, 19})); // a start at the window's end is outside it
}

TEST_CASE("analyze's kernel table, overall activity and diagnosis equal the passes called alone") {
  NVSCOPE_SEEDED_RNG(std::mt19937_64, rng);
  const auto base = synthetic::make_trace(30000);
  nvscope::trace shuffled = base;
  std::shuffle(shuffled.kernels.begin(), shuffled.kernels.end(), rng);
  std::vector<std::uint64_t> starts;
  for (const auto& k : base.kernels) starts.push_back(k.start);
  std::sort(starts.begin(), starts.end());
  const auto whole = nvscope::analysis_window(base, {});
  const std::uint64_t cut_start = starts[starts.size() / 3], cut_end = starts[2 * starts.size() / 3];
  const nvscope::time_window windows[] = {{}, whole, {cut_start, cut_end}, {whole.begin, starts.back()}};
  const nvscope::trace* traces[] = {&base, &shuffled};
  for (const nvscope::trace* t : traces) {
    for (const auto& w : windows) {
      for (const auto form : {nvscope::name_form::demangled, nvscope::name_form::base}) {
        nvscope::analysis_options o;
        o.window = w;
        o.kernel_names = form;
        CAPTURE(t == &shuffled);
        CAPTURE(w.begin);
        CAPTURE(w.end);
        CAPTURE(static_cast<int>(form));
        const auto r = nvscope::analyze(*t, o);
        const auto x = nvscope::index_trace(*t, o.start_end);
        const auto d = nvscope::diagnose(*t, x.links, nvscope::diagnosis_options_for(*t, o));
        nvscope::analysis_report alone = r;
        alone.kernels = nvscope::kernel_summary(*t, x, form);
        alone.overall = nvscope::overall_activity(*t, nvscope::analysis_window(*t, o));
        CHECK(nvscope::to_json(r, *t) == nvscope::to_json(alone, *t));
        CHECK(nvscope::diagnosis_json(*t, r.diagnosis) == nvscope::diagnosis_json(*t, d));
        CHECK(nvscope::samples_json(r.diagnosis.samples) == nvscope::samples_json(d.samples));
      }
    }
  }
}

// duration_sketch (analyze/sketch.hpp): every quantile within its stated relative error of the
// exact nearest-rank quantile (reference::nearest_rank, a sort) and the median of nsys's
// (reference::stats) on seeded random data of several shapes; count, extremes and sum exact;
// merging random splits equal to the unsplit sketch bucket for bucket, in any order; the bucket
// count within its bound.
#include <nvscope/analyze/reference/common.hpp>
#include <nvscope/analyze/sketch.hpp>

#include <doctest/doctest.h>
#include <test_seed.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using nvscope::duration_sketch;
using values = std::vector<std::uint64_t>;

// The shapes the sketch must answer for, n values each.
values shape(const std::string& name, std::size_t n, std::mt19937_64& rng) {
  values v(n);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (auto& x : v) {
    if (name == "uniform") x = 1 + static_cast<std::uint64_t>(unit(rng) * 1e6);
    else if (name == "lognormal") x = static_cast<std::uint64_t>(std::exp(std::normal_distribution<double>(9.0, 2.0)(rng)));
    else if (name == "bimodal") x = unit(rng) < 0.7 ? 2000 + rng() % 500 : 5000000 + rng() % 1000000;
    else if (name == "constant") x = 4242;
    else if (name == "zeros_and_huge") x = rng() % 3 == 0 ? 0 : (rng() % 2 ? (std::uint64_t{1} << 63) - rng() % 1000 : 1 + rng() % 10);
    else x = rng() >> (rng() % 64); // "any": every magnitude from 0 to 2^64 - 1
  }
  return v;
}

duration_sketch sketch_of(const values& v, std::size_t lo = 0, std::size_t hi = std::numeric_limits<std::size_t>::max()) {
  duration_sketch s;
  for (std::size_t i = lo; i < std::min(hi, v.size()); ++i) s.add(v[i]);
  return s;
}

// |estimate - exact| <= alpha * exact, with room for the last bits of std::log near a bucket edge.
bool within(double estimate, double exact) { return std::fabs(estimate - exact) <= duration_sketch::relative_error * exact * (1.0 + 1e-9); }

const char* const shapes[] = {"uniform", "lognormal", "bimodal", "constant", "zeros_and_huge", "any"};

} // namespace

TEST_CASE("sketch: ln(gamma) and the bucket bound are what the header states") {
  CHECK(std::fabs(duration_sketch::log_gamma - std::log(duration_sketch::gamma)) <= 1e-17);
  CHECK(duration_sketch::max_buckets == static_cast<std::size_t>(std::ceil(64 * std::log(2.0) / std::log(duration_sketch::gamma))) + 1);
  duration_sketch s;
  s.add(1);
  s.add(std::numeric_limits<std::uint64_t>::max());
  CHECK(s.buckets().size() == duration_sketch::max_buckets);
  CHECK(s.memory_bytes() <= sizeof(duration_sketch) + duration_sketch::max_buckets * sizeof(std::uint64_t));
}

TEST_CASE("sketch: every quantile within the relative error of the exact one, on every shape") {
  NVSCOPE_SEEDED_RNG(std::mt19937_64, rng);
  for (const char* name : shapes) {
    CAPTURE(name);
    for (const std::size_t n : {1u, 2u, 7u, 1000u, 100001u}) {
      CAPTURE(n);
      const auto v = shape(name, n, rng);
      const auto s = sketch_of(v);
      std::vector<double> qs = {0.0, 0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 1.0};
      for (int i = 0; i < 50; ++i) qs.push_back(std::uniform_real_distribution<double>(0.0, 1.0)(rng));
      for (const double q : qs) {
        CAPTURE(q);
        const double exact = nvscope::reference::nearest_rank(v, q), got = s.quantile(q);
        CAPTURE(exact);
        CAPTURE(got);
        CHECK(within(got, exact));
      }
      const auto st = nvscope::reference::stats(v);
      CHECK(within(s.median(), st.median));
      CHECK(s.count() == v.size());
      CHECK(s.min() == st.min);
      CHECK(s.quantile(0.0) == static_cast<double>(st.min)); // the first and last ranks: exact
      CHECK(s.quantile(1.0) == static_cast<double>(st.max));
      CHECK(s.max() == st.max);
      unsigned __int128 sum = 0; // the test's own exact sum
      for (const auto x : v) sum += x;
      CHECK(s.sum_low() == static_cast<std::uint64_t>(sum));
      CHECK(s.sum_high() == static_cast<std::uint64_t>(sum >> 64));
      CHECK(s.buckets().size() <= duration_sketch::max_buckets);
      CHECK(s.memory_bytes() <= sizeof(duration_sketch) + duration_sketch::max_buckets * sizeof(std::uint64_t));
    }
  }
}

TEST_CASE("sketch: add(value, count) is count adds of value") {
  NVSCOPE_SEEDED_RNG(std::mt19937_64, rng);
  duration_sketch one_by_one, counted;
  for (int i = 0; i < 200; ++i) {
    const std::uint64_t v = i % 10 == 0 ? 0 : rng() >> (rng() % 64), c = rng() % 5;
    for (std::uint64_t k = 0; k < c; ++k) one_by_one.add(v);
    counted.add(v, c);
  }
  CHECK(counted == one_by_one);
  duration_sketch big; // a product past 2^64 lands in the high word
  big.add(std::uint64_t{1} << 63, 6);
  CHECK(big.sum_high() == 3);
  CHECK(big.sum_low() == 0);
  CHECK(big.sum() == std::numeric_limits<std::uint64_t>::max());
}

TEST_CASE("sketch: merging random splits equals the unsplit sketch, bucket for bucket") {
  NVSCOPE_SEEDED_RNG(std::mt19937_64, rng);
  for (const char* name : shapes) {
    CAPTURE(name);
    const auto v = shape(name, 20000, rng);
    const auto whole = sketch_of(v);
    std::vector<std::size_t> cuts = {0, v.size()};
    for (int i = 0; i < 7; ++i) cuts.push_back(rng() % (v.size() + 1));
    std::sort(cuts.begin(), cuts.end());
    std::vector<duration_sketch> parts;
    for (std::size_t i = 0; i + 1 < cuts.size(); ++i) parts.push_back(sketch_of(v, cuts[i], cuts[i + 1]));
    std::shuffle(parts.begin(), parts.end(), rng);
    duration_sketch merged;
    for (const auto& p : parts) merged.merge(p);
    CHECK(merged.first_bucket() == whole.first_bucket());
    CHECK(merged.buckets() == whole.buckets());
    CHECK(merged.zero_count() == whole.zero_count());
    CHECK(merged == whole);
    CHECK(merged.quantile(0.5) == whole.quantile(0.5));
  }
}

TEST_CASE("sketch: merge is associative and commutative, and merging itself doubles it") {
  NVSCOPE_SEEDED_RNG(std::mt19937_64, rng);
  const auto a = sketch_of(shape("lognormal", 3000, rng)), b = sketch_of(shape("bimodal", 2000, rng)),
             c = sketch_of(shape("zeros_and_huge", 1000, rng));
  auto ab = a, ba = b, ab_c = a, bc = b;
  ab.merge(b);
  ba.merge(a);
  CHECK(ab == ba);
  ab_c.merge(b);
  ab_c.merge(c);
  bc.merge(c);
  auto a_bc = a;
  a_bc.merge(bc);
  CHECK(ab_c == a_bc);
  auto twice = a, doubled = a;
  twice.merge(twice);
  doubled.merge(a);
  CHECK(twice == doubled);
  CHECK(twice.count() == 2 * a.count());
  duration_sketch empty;
  auto with_empty = a;
  with_empty.merge(empty);
  CHECK(with_empty == a);
  empty.merge(a);
  CHECK(empty == a);
}

TEST_CASE("sketch: an empty sketch answers 0") {
  const duration_sketch s;
  CHECK(s.quantile(0.5) == 0.0);
  CHECK(s.median() == 0.0);
  CHECK(s.count() == 0);
  CHECK(s.average() == 0.0);
}

TEST_CASE("sketch: parts() and from_parts give the sketch back; parts that make none are refused") {
  NVSCOPE_SEEDED_RNG(std::mt19937_64, rng);
  for (const char* name : shapes) {
    CAPTURE(name);
    const auto s = sketch_of(shape(name, 5000, rng));
    const auto back = duration_sketch::from_parts(s.parts());
    CHECK(back == s);
    CHECK(back.quantile(0.9) == s.quantile(0.9));
  }
  CHECK(duration_sketch::from_parts({}) == duration_sketch{});
  const auto good = sketch_of({0, 5, 7000}).parts();
  auto bad = good;
  bad.buckets.push_back(0);
  CHECK_THROWS_AS(duration_sketch::from_parts(bad), std::invalid_argument);
  bad = good;
  bad.first_bucket = duration_sketch::max_buckets;
  CHECK_THROWS_AS(duration_sketch::from_parts(bad), std::invalid_argument);
  bad = good;
  bad.min = bad.max + 1;
  CHECK_THROWS_AS(duration_sketch::from_parts(bad), std::invalid_argument);
  bad = good;
  bad.min = 5;
  CHECK_THROWS_AS(duration_sketch::from_parts(bad), std::invalid_argument);
}

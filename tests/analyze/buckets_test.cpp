// Key numbering (analyze/detail/buckets.hpp `key_numbers`): keys get 0, 1, 2, ... in the order
// they first come, the same number each time they come again, whether they lie below the dense
// bound (an array) or above it (the open-addressing table, grown many times here); checked
// against std::unordered_map on fresh random keys of several spreads.

#include <nvscope/analyze/detail/buckets.hpp>
#include <nvscope/analyze/detail/hot_counts.hpp>

#include <doctest/doctest.h>
#include "test_seed.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <unordered_map>
#include <vector>

namespace {

using nvscope::detail::key_numbers;

// Numbers `keys` with key_numbers(dense) and with a plain map; counts the disagreements.
std::size_t disagreements(const std::vector<std::uint64_t>& keys, std::size_t dense) {
  key_numbers numbers(dense);
  std::unordered_map<std::uint64_t, std::uint32_t> reference;
  std::size_t wrong = 0;
  for (const auto k : keys) {
    const auto expected = reference.emplace(k, static_cast<std::uint32_t>(reference.size())).first->second;
    const auto got = numbers.of(k);
    wrong += got != expected;
    wrong += got >= numbers.size() || numbers.key(got) != k;
  }
  wrong += numbers.size() != reference.size();
  for (std::uint32_t n = 0; n < numbers.size() && n < reference.size(); ++n) wrong += reference.at(numbers.keys()[n]) != n;
  return wrong;
}

} // namespace

TEST_CASE("key_numbers numbers keys by first appearance, below and above the dense bound, as a map does") {
  NVSCOPE_SEEDED_RNG(std::mt19937_64, rng);
  const std::uint64_t spreads[] = {8, 1000, 100000, std::uint64_t{1} << 40, ~std::uint64_t{0}};
  for (const auto spread : spreads)
    for (const std::size_t dense : {std::size_t{0}, std::size_t{64}, std::size_t{5000}}) {
      CAPTURE(spread);
      CAPTURE(dense);
      std::uniform_int_distribution<std::uint64_t> any(0, spread == ~std::uint64_t{0} ? spread : spread - 1);
      std::vector<std::uint64_t> keys(60000);
      for (auto& k : keys) k = any(rng);
      CHECK(disagreements(keys, dense) == 0);
    }
}

TEST_CASE("key_numbers: the keys at the edges (0, the dense bound, the largest) and runs of one key") {
  const std::uint64_t top = ~std::uint64_t{0};
  CHECK(disagreements({0, 63, 64, 65, top, top - 1, 0, 64, top, 63}, 64) == 0);
  CHECK(disagreements({top, top, top, 0, 0, top}, 0) == 0);
  std::vector<std::uint64_t> pairs; // (range, name) keys as nvtx_kern_sum makes them
  for (std::uint64_t range = 0; range < 3000; ++range)
    for (std::uint64_t name = 0; name < 7; ++name) pairs.push_back(range << 32 | (name * range % 5));
  CHECK(disagreements(pairs, 0) == 0);
}

// join_equal_neighbours (the same file): a sorted list of (key, weight) joined into one entry a
// key, weights summed, against a map's sums; random lists with runs of equal keys and none.
TEST_CASE("join_equal_neighbours: one entry a key, in order, the weights of a key summed") {
  NVSCOPE_SEEDED_RNG(std::mt19937_64, rng);
  for (const std::uint64_t keys : {1, 2, 7, 1000}) {
    CAPTURE(keys);
    std::uniform_int_distribution<std::uint64_t> key(0, keys - 1), weight(1, 1000);
    std::vector<std::pair<std::uint64_t, std::uint64_t>> v(std::uniform_int_distribution<std::size_t>(0, 3000)(rng));
    std::map<std::uint64_t, std::uint64_t> sums;
    for (auto& [k, w] : v) {
      k = key(rng);
      w = weight(rng);
      sums[k] += w;
    }
    std::sort(v.begin(), v.end());
    nvscope::detail::join_equal_neighbours(
        v, [](const auto& x, const auto& y) { return x.first == y.first; }, [](auto& into, const auto& from) { into.second += from.second; });
    CHECK(std::vector<std::pair<std::uint64_t, std::uint64_t>>(sums.begin(), sums.end()) == v);
  }
}

// hot_counts holds two keys' counts in locals and writes them back when a third key comes and
// at the end: the table must read as if every add went to it, whatever the keys' runs, and each
// add must return what the table held before it. Keys in runs of random length over a few keys
// (two at a time, three in turn: every eviction), and single adds over many keys.
TEST_CASE("hot_counts adds as direct adds to the table would, for keys in runs or not") {
  std::mt19937_64 rng(nvscope_test::fresh_seed());
  std::size_t adds = 0, wrong = 0;
  for (const std::uint32_t keys : {1u, 2u, 3u, 5u, 1000u}) {
    std::vector<std::uint32_t> table(keys, 0), expected(keys, 0);
    for (std::uint32_t k = 0; k < keys; ++k) table[k] = expected[k] = static_cast<std::uint32_t>(rng() % 100);
    {
      nvscope::detail::hot_counts hot(table.data());
      for (int run = 0; run < 3000; ++run) {
        const auto key = static_cast<std::uint32_t>(rng() % keys);
        const auto length = keys == 1000u ? 1 : 1 + rng() % 5;
        for (std::uint64_t i = 0; i < length; ++i, ++adds) {
          const auto n = static_cast<std::uint32_t>(1 + rng() % 3);
          wrong += hot.add(key, n) != expected[key];
          expected[key] += n;
        }
      }
      if (keys == 5u) hot.flush(); // written back early, then again at the end: nothing added twice
    }
    wrong += table != expected;
  }
  CHECK(adds > 20000);
  CHECK(wrong == 0);
}

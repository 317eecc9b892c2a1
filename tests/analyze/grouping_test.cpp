// Row ordering (analyze/grouping.hpp): `order_rows_by` moves rows into the order of their
// sorted permutation in place, cycle by cycle; checked against the rows a plain copy in the
// same permutation gives, on fresh random rows with many ties and with strings long enough to
// live on the heap (a move that lost or doubled one would show). `string_ranks` against the
// ranks a std::map of the distinct strings gives.

#include <nvscope/analyze/grouping.hpp>

#include <doctest/doctest.h>
#include "test_seed.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace {

struct row {
  std::uint32_t key = 0;
  std::string label; // its place before the sort, in a string that does not fit in place
};

} // namespace

TEST_CASE("order_rows_by puts every row where a copy in the sorted permutation does") {
  NVSCOPE_SEEDED_RNG(std::mt19937, rng);
  for (const std::uint32_t n : {0u, 1u, 2u, 3u, 17u, 1000u, 65537u}) {
    for (const std::uint32_t distinct : {1u, 7u, 1000000u}) {
      std::vector<row> rows(n);
      for (std::uint32_t i = 0; i < n; ++i) rows[i] = {static_cast<std::uint32_t>(rng() % distinct), "row number " + std::to_string(i) + " of many"};
      const auto before = [&](std::uint32_t a, std::uint32_t b) { return rows[a].key < rows[b].key; };
      std::vector<std::uint32_t> order(n);
      for (std::uint32_t i = 0; i < n; ++i) order[i] = i;
      std::sort(order.begin(), order.end(), before); // the permutation order_rows_by sorts (same comparisons)
      std::vector<row> expected;
      for (const auto i : order) expected.push_back(rows[i]);
      nvscope::detail::order_rows_by(rows, before);
      std::size_t wrong = 0;
      for (std::uint32_t i = 0; i < n; ++i) wrong += rows[i].key != expected[i].key || rows[i].label != expected[i].label;
      CHECK_MESSAGE(wrong == 0, n << " rows, " << distinct << " distinct keys");
      CHECK(std::is_sorted(rows.begin(), rows.end(), [](const row& a, const row& b) { return a.key < b.key; }));
    }
  }
}

TEST_CASE("order_rows sorts by a key tuple, largest first through descending") {
  std::vector<row> rows{{3, "c"}, {9, "a"}, {3, "b"}, {1, "d"}};
  nvscope::detail::order_rows(rows, [](const row& r) { return std::make_tuple(nvscope::detail::descending(r.key), std::string_view(r.label)); });
  std::string got;
  for (const auto& r : rows) got += r.label;
  CHECK(got == "abcd");
}

TEST_CASE("string_ranks ranks strings in their order, equal strings alike") {
  NVSCOPE_SEEDED_RNG(std::mt19937, rng);
  for (const std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{50}, std::size_t{5000}}) {
    std::vector<std::string> storage(n);
    for (auto& s : storage) {
      s.assign(rng() % 4, 'a');
      for (auto& c : s) c = static_cast<char>('a' + rng() % 3); // short strings over a small alphabet: many equal, many prefixes
    }
    const std::vector<std::string_view> items(storage.begin(), storage.end());
    std::map<std::string_view, std::uint32_t> distinct;
    for (const auto s : items) distinct.emplace(s, 0);
    std::uint32_t next = 0;
    for (auto& [s, r] : distinct) r = next++;
    const auto ranks = nvscope::detail::string_ranks(items);
    REQUIRE(ranks.size() == n);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i) wrong += ranks[i] != distinct.at(items[i]);
    CHECK(wrong == 0);
  }
}

// group_values: each group's values in item order, items with a group out of range left out,
// against a map of vectors; read once (kept while counting) and read twice alike, on fresh
// random items, every value read through a counter so that "once" is seen to read each once.
TEST_CASE("group_values groups values in item order, read once or twice alike") {
  NVSCOPE_SEEDED_RNG(std::mt19937_64, rng);
  for (const std::size_t groups : {std::size_t{1}, std::size_t{5}, std::size_t{3000}}) {
    CAPTURE(groups);
    const std::size_t items = std::uniform_int_distribution<std::size_t>(0, 50000)(rng);
    std::uniform_int_distribution<std::size_t> group(0, groups + 2); // some out of range
    std::vector<std::size_t> group_of(items);
    std::vector<std::uint64_t> value_of(items);
    std::map<std::size_t, std::vector<std::uint64_t>> expected;
    for (std::size_t i = 0; i < items; ++i) {
      group_of[i] = group(rng);
      value_of[i] = rng();
      if (group_of[i] < groups) expected[group_of[i]].push_back(value_of[i]);
    }
    for (const auto reads : {nvscope::detail::item_reads::once, nvscope::detail::item_reads::twice}) {
      std::size_t group_reads = 0;
      const auto g = nvscope::detail::group_values(
          groups, items, [&](std::size_t i) { return ++group_reads, group_of[i]; }, [&](std::size_t i) { return value_of[i]; }, reads);
      CHECK(group_reads == (reads == nvscope::detail::item_reads::once ? 1 : 2) * items);
      REQUIRE(g.offset.size() == groups + 1);
      std::size_t mismatched = 0;
      for (std::size_t k = 0; k < groups; ++k) {
        const std::vector<std::uint64_t> got(g.values.begin() + static_cast<std::ptrdiff_t>(g.offset[k]),
                                             g.values.begin() + static_cast<std::ptrdiff_t>(g.offset[k + 1]));
        const auto it = expected.find(k);
        mismatched += got != (it == expected.end() ? std::vector<std::uint64_t>{} : it->second);
      }
      CHECK(mismatched == 0);
      CHECK(g.values.size() == g.offset[groups]);
    }
  }
}

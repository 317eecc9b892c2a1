// Interval arithmetic (analyze/intervals.hpp): merge_intervals, union_of of two and three
// merged lists, and covered_union's length and gaps of two, against the reference of every
// interval in one list, merged; on fresh random lists of many sizes (empty ones, one long
// beside short ones, as kernels beside copies), with touching, nested and equal-start intervals.

#include <nvscope/analyze/intervals.hpp>

#include <doctest/doctest.h>

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
  std::mt19937_64 rng(std::random_device{}());
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
  std::mt19937_64 rng(std::random_device{}());
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

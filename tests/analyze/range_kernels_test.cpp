// nvtx_kern_sum's row numbering (analyze/range_kernels.hpp `kern_rows`): rows numbered by
// first appearance of (group, thread, kernel name), the same row each time one comes again,
// whether it is found in its (group, thread)'s slice of the table, through the hash table (no
// room for a slice, or a name past the table's), or both within one run; checked against
// std::map on fresh random calls with runs of one key, groups that change thread, groups past
// the per-group arrays, and any thread value (0xffffffff, a record's index past the thread
// table, once read as "this group's thread" for a group never seen). `slice`, the rows of one
// (group, thread) read in place, is checked against the same map.

#include <nvscope/analyze/range_kernels.hpp>

#include <doctest/doctest.h>
#include "test_seed.hpp"

#include <cstdint>
#include <map>
#include <random>
#include <tuple>
#include <vector>

namespace {

struct call {
  std::uint32_t group, thread, name;
};

// Numbers `calls` with kern_rows(groups, names, most_slots) and with a plain map; counts the
// disagreements (rows, their keys, their instance counters).
std::size_t disagreements(const std::vector<call>& calls, std::size_t groups, std::size_t names, std::size_t most_slots) {
  nvscope::detail::kern_rows rows(groups, names, most_slots);
  std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>, std::uint32_t> reference;
  std::size_t wrong = 0;
  for (const auto& c : calls) {
    const auto expected = reference.emplace(std::make_tuple(c.group, c.thread, c.name), static_cast<std::uint32_t>(reference.size())).first->second;
    const auto got = rows.row(c.group, c.thread, c.name);
    wrong += got != expected;
    wrong += got >= rows.keys.size() || !(rows.keys[got] == nvscope::detail::kern_rows::key{c.group, c.thread, c.name});
  }
  wrong += rows.keys.size() != reference.size();
  wrong += rows.instances.size() != rows.keys.size();
  // slice(): a (group, thread)'s rows by name where it has a slice of the table (count_instances
  // reads them in place), the same rows as row()'s; no row made or renumbered by asking.
  for (const auto& c : calls) {
    const auto* slice = rows.slice(c.group, c.thread);
    if (slice && c.name < rows.names()) wrong += slice[c.name] != reference[std::make_tuple(c.group, c.thread, c.name)];
    wrong += rows.row(c.group, c.thread, c.name) != reference[std::make_tuple(c.group, c.thread, c.name)];
  }
  wrong += rows.keys.size() != reference.size();
  return wrong;
}

} // namespace

TEST_CASE("kern_rows numbers (group, thread, name) by first appearance, by slices of the table, by hash, and both") {
  NVSCOPE_SEEDED_RNG(std::mt19937, rng);
  for (int round = 0; round < 40; ++round) {
    const std::uint32_t groups = 1 + rng() % 300, threads = 1 + rng() % 4, names = 1 + rng() % 50;
    std::vector<call> calls;
    while (calls.size() < 20000) {
      // Past the per-group arrays and the table's names now and then; runs of one key.
      // Any thread value: a record's index past the thread table (0xffffffff, 0 included).
      const std::uint32_t thread = rng() % 16 == 0 ? 0xffffffffu - static_cast<std::uint32_t>(rng() % 2) : static_cast<std::uint32_t>(rng() % threads);
      const call c{static_cast<std::uint32_t>(rng() % (groups + groups / 8 + 1)), thread, static_cast<std::uint32_t>(rng() % (names + 2))};
      calls.insert(calls.end(), 1 + rng() % 3, c);
    }
    CAPTURE(round);
    CAPTURE(groups);
    CAPTURE(names);
    const std::size_t all = std::size_t{groups + groups / 8 + 1} * (threads + 2) * names;
    for (const std::size_t most_slots : {std::size_t{0}, std::size_t{names} * (1 + rng() % 20), all / 2, all + names}) {
      CAPTURE(most_slots);
      CHECK(disagreements(calls, groups, names, most_slots) == 0);
    }
  }
}

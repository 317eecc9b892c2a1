// nvscope-target: nvscope
#pragma once

/// \file analyze/grouping.hpp
/// The shape every summary table shares: group records, statistics per group, percent of the
/// total, rows in a fixed order. `grouped_stats` does the first two by counting sort (linear,
/// no per-group allocation); `set_percent` and `order_rows` the rest.
///
/// \code
///   auto s = nvscope::detail::grouped_stats(names, t.kernels.size(),
///       [&](std::size_t i) { return t.kernels[i].name; },
///       [&](std::size_t i) { return t.kernels[i].end - t.kernels[i].start; });
///   // s[name].count kernels of that name, s[name].median their median duration
/// \endcode

#include <nvscope/analyze/detail/buckets.hpp>
#include <nvscope/analyze/stats.hpp>

#include <algorithm>
#include <cstdint>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

namespace nvscope {
inline namespace v1 {
namespace detail {

// How group_values reads an item: `twice` (its group to count, then group and value to place:
// items that are cheap to read, such as per-range arrays), or `once` (group and value kept
// while counting, 12 bytes an item, and placed from there: items read from wide records, each
// read once).
enum class item_reads { twice, once };

// value_of(i) of each item i grouped by group_of(i) < groups (items with a group out of range
// are left out): group g's values are values[offset[g] .. offset[g + 1]), items in order. A
// counting sort: linear in items + groups.
struct grouped_values {
  scratch_vector<std::size_t> offset;
  scratch_column<std::uint64_t> values;
};

// Items kept as they are read, each with its group, then placed by group (group_values' `once`
// way, for a caller whose own pass over the items does more): `keep` in item order, then `place`.
class kept_values {
 public:
  kept_values(std::size_t groups, std::size_t items) : group_(items), value_(items) { out_.offset.assign(groups + 1, 0); }
  void keep(std::uint32_t group, std::uint64_t value) { // group < groups
    ++out_.offset[group + 1];
    group_[kept_] = group;
    value_[kept_++] = value;
  }
  // keep's places, for a pass that keeps values itself: group g's count at counts()[g], the i-th
  // kept value's group and value at groups()[i] and values()[i]; then kept(n).
  std::size_t* counts() noexcept { return out_.offset.data() + 1; }
  std::uint32_t* groups() noexcept { return group_.data(); }
  std::uint64_t* values() noexcept { return value_.data(); }
  void kept(std::size_t n) noexcept { kept_ = n; }
  grouped_values place() {
    const auto groups = out_.offset.size() - 1;
    for (std::size_t g = 0; g < groups; ++g) out_.offset[g + 1] += out_.offset[g];
    out_.values.resize(kept_);
    auto cursor = out_.offset;
    for (std::size_t j = 0; j < kept_; ++j) out_.values[cursor[group_[j]]++] = value_[j];
    return std::move(out_);
  }

 private:
  grouped_values out_;
  scratch_column<std::uint32_t> group_; // pages touched only as far as written
  scratch_column<std::uint64_t> value_;
  std::size_t kept_ = 0;
};

template <class GroupOf, class ValueOf>
grouped_values group_values(std::size_t groups, std::size_t items, GroupOf group_of, ValueOf value_of, item_reads reads = item_reads::twice) {
  if (reads == item_reads::once && groups <= 0xffffffffu) {
    kept_values kept(groups, items);
    for (std::size_t i = 0; i < items; ++i) {
      const std::size_t g = group_of(i);
      if (g < groups) kept.keep(static_cast<std::uint32_t>(g), value_of(i));
    }
    return kept.place();
  }
  grouped_values out;
  out.offset.assign(groups + 1, 0);
  for (std::size_t i = 0; i < items; ++i) {
    const std::size_t g = group_of(i);
    if (g < groups) ++out.offset[g + 1];
  }
  for (std::size_t g = 0; g < groups; ++g) out.offset[g + 1] += out.offset[g];
  out.values.resize(out.offset[groups]); // every place written once below
  auto cursor = out.offset;
  for (std::size_t i = 0; i < items; ++i) {
    const std::size_t g = group_of(i);
    if (g < groups) out.values[cursor[g]++] = value_of(i);
  }
  return out;
}

// Statistics of value_of(i) per group group_of(i) < groups (items with a group out of range
// are left out), from group_values.
template <class GroupOf, class ValueOf>
std::vector<duration_stats> grouped_stats(std::size_t groups, std::size_t items, GroupOf group_of, ValueOf value_of,
                                          item_reads reads = item_reads::twice) {
  const auto grouped = group_values(groups, items, group_of, value_of, reads);
  std::vector<duration_stats> out(groups);
  const auto* v = grouped.values.data();
  for (std::size_t g = 0; g < groups; ++g) out[g] = stats_of(v + grouped.offset[g], v + grouped.offset[g + 1]);
  return out;
}

// Each row's share of the total, in percent: percent_of(row) = 100 * total_of(row) / sum.
template <class Row, class TotalOf, class PercentOf>
void set_percent(std::vector<Row>& rows, TotalOf total_of, PercentOf percent_of) {
  std::uint64_t grand = 0;
  for (const auto& r : rows) grand += total_of(r);
  for (auto& r : rows) percent_of(r) = grand ? 100.0 * static_cast<double>(total_of(r)) / static_cast<double>(grand) : 0.0;
}

// A key component that sorts larger values first.
constexpr std::uint64_t descending(std::uint64_t v) noexcept { return ~v; }

// Sorts rows by `before(a, b)`, which compares the rows at places a and b as they were before
// the call (they stay put while a permutation is sorted): a caller may compare figures it
// computed per place (ranks of names, say) instead of the rows.
// Through a permutation of 4-byte indexes: rows are large (strings, statistics) and a sort
// moves each many times. std::sort makes the same moves for the same comparisons, so rows of
// equal keys end in the order they did when sorted in place.
template <class Row, class Before>
void order_rows_by(std::vector<Row>& rows, Before before) {
  std::vector<std::uint32_t> order(rows.size());
  for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), before);
  // The rows moved into place along each cycle of the permutation (place i takes the row at
  // order[i]): no second array of rows.
  for (std::uint32_t start = 0; start < order.size(); ++start) {
    if (order[start] == start) continue;
    Row held = std::move(rows[start]);
    std::uint32_t at = start;
    for (std::uint32_t from = order[at]; from != start; at = from, from = order[at]) {
      rows[at] = std::move(rows[from]);
      order[at] = at;
    }
    rows[at] = std::move(held);
    order[at] = at;
  }
}

// Sorts rows by key(row), a tuple compared element by element (use `descending` for
// largest-first numbers and string_view for names).
template <class Row, class Key>
void order_rows(std::vector<Row>& rows, Key key) {
  order_rows_by(rows, [&](std::uint32_t a, std::uint32_t b) { return key(rows[a]) < key(rows[b]); });
}

// The rank of each of `items` (strings or string_views) in their sorted order, equal strings
// one rank: compared as ranks, items order as their strings do, at the cost of one sort.
template <class Strings>
std::vector<std::uint32_t> string_ranks(const Strings& items) {
  std::vector<std::uint32_t> order(items.size()), rank(items.size());
  for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  const auto text = [&](std::uint32_t i) { return std::string_view(items[i]); };
  std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) { return text(a) < text(b); });
  std::uint32_t r = 0;
  for (std::size_t i = 0; i < order.size(); ++i) {
    if (i > 0 && text(order[i]) != text(order[i - 1])) ++r;
    rank[order[i]] = r;
  }
  return rank;
}

} // namespace detail
} // namespace v1
} // namespace nvscope

// Running totals (analyze/totals.hpp): a trace cut at random points into pieces, each with its
// strings interned in another order (so its ids differ), folded piece by piece and merged in
// any order equals the trace folded whole, exactly (counts, sums, extremes, losses, sketches
// bucket for bucket); the totals' rows agree with reference::cuda_gpu_kern_sum and
// reference::nvtx_sum exactly on count, total, min, max and average, and within the sketch's
// error on the median; the run's counts agree with the reference's memop tables.
#include "random_trace.hpp"
#include "synthetic_trace.hpp"

#include <nvscope/analyze/reference/tables.hpp>
#include <nvscope/analyze/step_names.hpp>
#include <nvscope/analyze/totals.hpp>

#include <doctest/doctest.h>
#include <test_seed.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <tuple>
#include <vector>

namespace {

using nvscope::string_id;
using nvscope::trace;

// A copy of t's string table in a shuffled order; map[old id] is the new id (ids past the table
// stay past it).
struct reinterned {
  nvscope::string_table strings;
  std::vector<string_id> map;
  string_id operator()(string_id id) const { return id < map.size() ? map[id] : id + 1000000; }
};

reinterned reintern(const trace& t, std::mt19937_64& rng) {
  reinterned r;
  std::vector<string_id> order(t.strings.size());
  std::iota(order.begin(), order.end(), string_id{0});
  std::shuffle(order.begin() + 1, order.end(), rng);
  r.map.assign(t.strings.size(), 0);
  for (const auto id : order) r.map[id] = r.strings.intern(t.strings[id]);
  return r;
}

// [cut[p], cut[p + 1]) of n records for each of `pieces` pieces (some of them empty).
std::vector<std::size_t> cuts(std::size_t n, int pieces, std::mt19937_64& rng) {
  std::vector<std::size_t> c = {0, n};
  for (int i = 1; i < pieces; ++i) c.push_back(rng() % (n + 1));
  std::sort(c.begin(), c.end());
  return c;
}

template <class Record>
void copy_part(const std::vector<Record>& from, std::vector<Record>& to, const std::vector<std::size_t>& cut, int p) {
  to.assign(from.begin() + static_cast<std::ptrdiff_t>(cut[p]), from.begin() + static_cast<std::ptrdiff_t>(cut[p + 1]));
}

// t cut into `pieces` traces: each vector cut at its own random points, each piece's strings
// interned anew; begin and finish kept (an unclosed range ends where it ends in t).
std::vector<trace> split(const trace& t, int pieces, std::mt19937_64& rng) {
  const auto ck = cuts(t.kernels.size(), pieces, rng), cc = cuts(t.copies.size(), pieces, rng), cm = cuts(t.memsets.size(), pieces, rng),
             cs = cuts(t.syncs.size(), pieces, rng), cr = cuts(t.ranges.size(), pieces, rng);
  std::vector<trace> out(static_cast<std::size_t>(pieces));
  for (int p = 0; p < pieces; ++p) {
    auto& piece = out[static_cast<std::size_t>(p)];
    const auto ids = reintern(t, rng);
    piece.strings = ids.strings;
    copy_part(t.kernels, piece.kernels, ck, p);
    for (auto& k : piece.kernels) k.name = ids(k.name);
    copy_part(t.copies, piece.copies, cc, p);
    copy_part(t.memsets, piece.memsets, cm, p);
    copy_part(t.syncs, piece.syncs, cs, p);
    copy_part(t.ranges, piece.ranges, cr, p);
    for (auto& r : piece.ranges) r.domain = r.domain ? ids(r.domain) : 0, r.name = ids(r.name);
    for (const auto& [id, forms] : t.kernel_names) piece.kernel_names[ids(id)] = {forms.base ? ids(forms.base) : 0, forms.mangled ? ids(forms.mangled) : 0};
    piece.begin = t.begin;
    piece.finish = t.finish;
  }
  out[0].lost = t.lost;
  return out;
}

nvscope::totals folded(const trace& t, nvscope::name_form form) {
  nvscope::totals all;
  nvscope::fold_options o;
  o.kernel_names = form;
  o.steps = nvscope::step_ranges(t, {});
  nvscope::fold(t, all, o);
  return all;
}

void check_equal(const nvscope::totals& a, const nvscope::totals& b) {
  CHECK(a.kernels == b.kernels);
  CHECK(a.ranges == b.ranges);
  CHECK(a.steps == b.steps);
  const auto fields = [](const nvscope::run_totals& r) {
    const auto& l = r.lost;
    return std::make_tuple(r.kernels, r.kernel_ns, r.copies, r.copy_ns, r.memsets, r.memset_ns, r.syncs, r.sync_ns, r.ranges, r.incomplete_found,
                           r.unclosed_found, l.dropped_records, l.incomplete_records, l.unclosed_ranges, l.buffer_errors, l.late_buffers,
                           l.foreign_releases, l.nvtx_too_early, l.launches_lost);
  };
  CHECK(fields(a.run) == fields(b.run));
}

// The traces the tests fold: random ones of every kind of record (names past the string table
// among them), and the synthetic training run (steps, unclosed ranges).
std::vector<trace> inputs(std::uint64_t seed) {
  std::vector<trace> out;
  for (int i = 0; i < 4; ++i) out.push_back(synthetic::random_trace(seed + i, 1 + i, 400 + 300 * i));
  out.push_back(synthetic::make_trace(20000));
  for (auto& t : out) {
    t.lost.dropped_records = 3, t.lost.late_buffers = 1, t.lost.launches_lost = 2;
    if (!(t.finish > t.begin)) t.finish = nvscope::reference::trace_end(t); // a piece's unclosed ranges end where the whole's do
  }
  return out;
}

bool within(double estimate, double exact) {
  return std::fabs(estimate - exact) <= nvscope::duration_sketch::relative_error * exact * (1.0 + 1e-9);
}

} // namespace

TEST_CASE("totals: a trace folded in pieces and merged in any order equals it folded whole") {
  NVSCOPE_SEEDED_RNG(std::mt19937_64, rng);
  for (auto& t : inputs(rng())) {
    for (const auto form : {nvscope::name_form::demangled, nvscope::name_form::base}) {
      const auto whole = folded(t, form);
      CHECK(whole.run.kernels > 0);
      const int pieces = 2 + static_cast<int>(rng() % 6);
      std::vector<nvscope::totals> parts;
      for (const auto& piece : split(t, pieces, rng)) parts.push_back(folded(piece, form));
      std::shuffle(parts.begin(), parts.end(), rng);
      nvscope::totals merged;
      for (const auto& p : parts) nvscope::merge(merged, p);
      check_equal(merged, whole);
      nvscope::totals tree = parts[0], rest; // (p0 + ((p1 + p2) + ...)): grouping does not matter
      for (std::size_t i = parts.size(); i-- > 1;) {
        auto next = parts[i];
        nvscope::merge(next, rest);
        rest = next;
      }
      nvscope::merge(tree, rest);
      check_equal(tree, whole);
    }
  }
}

TEST_CASE("totals: folding twice into one totals equals merging two folds") {
  const auto t = synthetic::make_trace(5000);
  nvscope::totals twice, one = folded(t, nvscope::name_form::demangled);
  nvscope::fold_options o;
  o.steps = nvscope::step_ranges(t, {});
  nvscope::fold(t, twice, o);
  nvscope::fold(t, twice, o);
  nvscope::merge(one, one);
  check_equal(twice, one);
  const auto flags = nvscope::step_ranges(t, {});
  CHECK(twice.steps.count() == 2 * static_cast<std::uint64_t>(std::count(flags.begin(), flags.end(), 1)));
}

TEST_CASE("totals: rows agree with cuda_gpu_kern_sum and nvtx_sum") {
  NVSCOPE_SEEDED_RNG(std::mt19937_64, rng);
  for (const auto& t : inputs(rng())) {
    const auto all = folded(t, nvscope::name_form::demangled);
    const auto rows = nvscope::rows_of(all);
    CHECK(rows.medians_approximate);
    const auto kern = nvscope::reference::cuda_gpu_kern_sum(t, nvscope::name_form::demangled);
    REQUIRE(rows.kernels.size() == kern.size());
    for (std::size_t i = 0; i < kern.size(); ++i) {
      const auto &got = rows.kernels[i], &want = kern[i];
      CAPTURE(want.name);
      CHECK(got.name == want.name);
      CHECK(got.time.count == want.time.count);
      CHECK(got.time.total == want.time.total);
      CHECK(got.time.min == want.time.min);
      CHECK(got.time.max == want.time.max);
      CHECK(got.time.average == want.time.average);
      CHECK(got.time_percent == want.time_percent);
      CHECK(within(got.time.median, want.time.median));
    }
    // nvtx_sum keys groups by ids and totals by strings: the same rows where no two ids print
    // alike. Matched by (label, style, name), since rows that tie in nvtx_sum's order may swap.
    auto ranges = nvscope::reference::nvtx_sum(t);
    auto got = rows.ranges;
    const auto by_key = [](const nvscope::range_summary_row& a, const nvscope::range_summary_row& b) {
      return std::tie(a.range, a.style, a.name) < std::tie(b.range, b.style, b.name);
    };
    std::sort(ranges.begin(), ranges.end(), by_key);
    std::sort(got.begin(), got.end(), by_key);
    REQUIRE(got.size() == ranges.size());
    for (std::size_t i = 0; i < ranges.size(); ++i) {
      CAPTURE(ranges[i].range);
      CHECK(got[i].range == ranges[i].range);
      CHECK(got[i].style == ranges[i].style);
      CHECK(got[i].time.count == ranges[i].time.count);
      CHECK(got[i].time.total == ranges[i].time.total);
      CHECK(got[i].time.min == ranges[i].time.min);
      CHECK(got[i].time.max == ranges[i].time.max);
      CHECK(got[i].time.average == ranges[i].time.average);
      CHECK(got[i].time_percent == ranges[i].time_percent);
      CHECK(within(got[i].time.median, ranges[i].time.median));
    }
  }
}

TEST_CASE("totals: the run's copies and memsets agree with cuda_gpu_mem_time_sum") {
  NVSCOPE_SEEDED_RNG(std::mt19937_64, rng);
  for (const auto& t : inputs(rng())) {
    const auto all = folded(t, nvscope::name_form::demangled);
    std::uint64_t copies = 0, copy_ns = 0, memsets = 0, memset_ns = 0;
    for (const auto& row : nvscope::reference::cuda_gpu_mem_time_sum(t)) {
      const bool memset = row.operation == "[CUDA memset]";
      (memset ? memsets : copies) += row.time.count;
      (memset ? memset_ns : copy_ns) += row.time.total;
    }
    CHECK(all.run.copies == copies);
    CHECK(all.run.copy_ns == copy_ns);
    CHECK(all.run.memsets == memsets);
    CHECK(all.run.memset_ns == memset_ns);
    std::uint64_t kernels = 0;
    for (const auto& row : nvscope::reference::cuda_gpu_kern_sum(t, nvscope::name_form::demangled)) kernels += row.time.count;
    CHECK(all.run.kernels == kernels);
    std::uint64_t syncs = 0;
    for (const auto& y : t.syncs) syncs += nvscope::reference::valid(y.start, y.end);
    CHECK(all.run.syncs == syncs);
    CHECK(all.run.lost.dropped_records == 3);
  }
}

TEST_CASE("totals: a few records against a large string table fold as against a small one") {
  NVSCOPE_SEEDED_RNG(std::mt19937_64, rng);
  const auto t = synthetic::random_trace(rng(), 2, 300);
  trace large = t; // the same records, their names found among 200,000 more strings
  large.strings = nvscope::string_table();
  for (int i = 0; i < 200000; ++i) large.strings.intern("filler " + std::to_string(i));
  const auto ids = [&](string_id id) { return id < t.strings.size() ? large.strings.intern(t.strings[id]) : id + 1000000; };
  for (auto& k : large.kernels) k.name = ids(k.name);
  for (auto& r : large.ranges) r.domain = r.domain ? ids(r.domain) : 0, r.name = ids(r.name);
  large.kernel_names.clear();
  for (const auto& [id, forms] : t.kernel_names) large.kernel_names[ids(id)] = {forms.base ? ids(forms.base) : 0, forms.mangled ? ids(forms.mangled) : 0};
  REQUIRE(large.strings.size() > 2 * large.kernels.size() + 1024); // the hash table's case
  check_equal(folded(large, nvscope::name_form::demangled), folded(t, nvscope::name_form::demangled));
  check_equal(folded(large, nvscope::name_form::base), folded(t, nvscope::name_form::base));
}

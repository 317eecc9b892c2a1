// The nsys recipes of analyze/recipes.hpp against their plain definitions in
// analyze/reference/recipes.hpp, field by field, on seeded random traces (tests/analyze/
// random_trace.hpp, dressed with devices, contexts, memory kinds and the API names the rules
// look for, in either case), under several parameters; on small traces whose rows are worked
// out by hand here; then export/recipes.hpp: the recipe list `--recipes` takes and the CSV
// columns.
#include "engine_vs_reference.hpp"
#include "random_trace.hpp"
#include "../support/test_seed.hpp"

// The reference first: its unqualified calls of reference/reports.hpp would otherwise also find
// the engine's functions of the same names (analyze/reports.hpp, through recipes.hpp) by ADL.
#include <nvscope/analyze/reference/recipes.hpp>

#include <nvscope/analyze/recipes.hpp>
#include <nvscope/export/recipes.hpp>

#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

using namespace nvscope;

namespace {

using namespace engine_vs_reference;

void same_memcpy_row(const memcpy_rule_row& e, const memcpy_rule_row& r, const std::string& w) {
  SAME(e.duration, r.duration, w + " duration");
  SAME(e.start, r.start, w + " start");
  SAME(static_cast<int>(e.src), static_cast<int>(r.src), w + " src");
  SAME(static_cast<int>(e.dst), static_cast<int>(r.dst), w + " dst");
  SAME(e.bytes, r.bytes, w + " bytes");
  SAME(e.device, r.device, w + " device");
  SAME(e.context, r.context, w + " context");
  SAME(e.stream, r.stream, w + " stream");
  SAME(e.api_name, r.api_name, w + " api");
}

// Every recipe, engine against reference; adds to `rows` how many rows each made, so that a
// caller can check the traces gave each recipe something to compare.
void same_pace(const std::vector<pace_row>& e, const std::vector<pace_row>& r, const std::string& table) {
  same_rows(e, r, table, [](const pace_row& a, const pace_row& b, const std::string& w) {
    SAME(a.iteration, b.iteration, w + " iteration");
    SAME(a.start, b.start, w + " start");
    SAME(a.end, b.end, w + " end");
    SAME(a.duration_accum, b.duration_accum, w + " duration_accum");
    SAME(a.delta, b.delta, w + " delta");
    SAME(a.delta_accum, b.delta_accum, w + " delta_accum");
  });
  const auto se = pace_stats_of(e, "x"), sr = reference::pace_stats_of(r, "x");
  SAME(se.count, sr.count, table + " stats count");
  SAME(se.mean, sr.mean, table + " stats mean");
  SAME(se.has_std, sr.has_std, table + " stats has std");
  NEAR(se.std, sr.std, table + " stats std");
  SAME(se.q1, sr.q1, table + " stats q1");
  SAME(se.median, sr.median, table + " stats median");
  SAME(se.q3, sr.q3, table + " stats q3");
  SAME(se.min, sr.min, table + " stats min");
  SAME(se.max, sr.max, table + " stats max");
  SAME(se.sum, sr.sum, table + " stats sum");
}

void check_all(std::size_t (&rows)[13], const trace& t, const recipe_params& p, const std::string& label) {
  const auto gaps = gpu_gaps(t, p);
  same_rows(gaps, reference::gpu_gaps(t, p), label + " gpu_gaps", [](const gpu_gap_row& a, const gpu_gap_row& b, const std::string& w) {
    SAME(a.duration, b.duration, w + " duration");
    SAME(a.start, b.start, w + " start");
    SAME(a.end, b.end, w + " end");
    SAME(a.device, b.device, w + " device");
    SAME(a.context, b.context, w + " context");
  });
  const auto util = gpu_time_util(t, p);
  same_rows(util, reference::gpu_time_util(t, p), label + " gpu_time_util", [](const gpu_util_row& a, const gpu_util_row& b, const std::string& w) {
    SAME(a.in_use, b.in_use, w + " in use");
    SAME(a.duration, b.duration, w + " duration");
    SAME(a.start, b.start, w + " start");
    SAME(a.device, b.device, w + " device");
    SAME(a.context, b.context, w + " context");
  });
  const auto sync = cuda_api_sync(t);
  same_rows(sync, reference::cuda_api_sync(t), label + " cuda_api_sync", [](const api_sync_row& a, const api_sync_row& b, const std::string& w) {
    SAME(a.duration, b.duration, w + " duration");
    SAME(a.start, b.start, w + " start");
    SAME(a.tid, b.tid, w + " tid");
    SAME(a.api_name, b.api_name, w + " api");
  });
  const auto async = cuda_memcpy_async(t), copies = cuda_memcpy_sync(t);
  same_rows(async, reference::cuda_memcpy_async(t), label + " cuda_memcpy_async", same_memcpy_row);
  same_rows(copies, reference::cuda_memcpy_sync(t), label + " cuda_memcpy_sync", same_memcpy_row);
  const auto sets = cuda_memset_sync(t);
  same_rows(sets, reference::cuda_memset_sync(t), label + " cuda_memset_sync", [](const memset_rule_row& a, const memset_rule_row& b, const std::string& w) {
    SAME(a.duration, b.duration, w + " duration");
    SAME(a.start, b.start, w + " start");
    SAME(static_cast<int>(a.memory), static_cast<int>(b.memory), w + " memory");
    SAME(a.bytes, b.bytes, w + " bytes");
    SAME(a.device, b.device, w + " device");
    SAME(a.context, b.context, w + " context");
    SAME(a.api_name, b.api_name, w + " api");
  });
  const auto hist = cuda_gpu_kern_hist(t);
  same_rows(hist, reference::cuda_gpu_kern_hist(t), label + " cuda_gpu_kern_hist", [](const kernel_duration_row& a, const kernel_duration_row& b, const std::string& w) {
    SAME(a.name, b.name, w + " name");
    SAME(a.duration, b.duration, w + " duration");
  });
  // The pace of the first kernel's base name and of the first range's name.
  recipe_params named = p;
  if (!t.kernels.empty()) named.name = std::string(kernel_name(t, t.kernels[0].name, name_form::base));
  const auto kern_pace = cuda_gpu_kern_pace(t, named);
  same_pace(kern_pace, reference::cuda_gpu_kern_pace(t, named), label + " cuda_gpu_kern_pace");
  if (!t.ranges.empty()) named.name = std::string(t.strings[t.ranges[0].name]);
  const auto range_pace = nvtx_pace(t, named);
  same_pace(range_pace, reference::nvtx_pace(t, named), label + " nvtx_pace");
  const auto projections = nvtx_gpu_proj_trace(t); // a range that launched GPU work, for the projected pace
  if (!projections.empty()) named.name = std::string(t.strings[t.ranges[projections[0].range].name]);
  const auto projected = nvtx_gpu_proj_pace(t, named);
  same_pace(projected, reference::nvtx_gpu_proj_pace(t, named), label + " nvtx_gpu_proj_pace");
  const auto overlap = nccl_gpu_overlap_trace(t);
  same_rows(overlap, reference::nccl_gpu_overlap_trace(t), label + " nccl_gpu_overlap_trace", [](const overlap_trace_row& a, const overlap_trace_row& b, const std::string& w) {
    SAME(a.name, b.name, w + " name");
    SAME(a.start, b.start, w + " start");
    SAME(a.end, b.end, w + " end");
    SAME(a.device, b.device, w + " device");
    SAME(a.communication, b.communication, w + " communication");
    SAME(a.communication_sum, b.communication_sum, w + " communication sum");
    SAME(a.compute_sum, b.compute_sum, w + " compute sum");
    SAME(a.communication_overlap, b.communication_overlap, w + " communication overlap");
    SAME(a.compute_overlap, b.compute_overlap, w + " compute overlap");
  });
  same_rows(nccl_gpu_overlap_groups(overlap), reference::nccl_gpu_overlap_groups(overlap), label + " nccl_gpu_overlap_trace groups",
            [](const overlap_group_row& a, const overlap_group_row& b, const std::string& w) {
              SAME(a.name, b.name, w + " name");
              SAME(a.count, b.count, w + " count");
              SAME(a.communication_overlap, b.communication_overlap, w + " communication overlap");
              SAME(a.compute_overlap, b.compute_overlap, w + " compute overlap");
            });
  std::size_t communication = 0;
  for (const auto& r : overlap) communication += r.communication;
  const auto same_bin = [](const util_map_row& a, const util_map_row& b, const std::string& w) {
    SAME(a.duration, b.duration, w + " duration");
    SAME(a.in_session, b.in_session, w + " in session");
    SAME(a.all, b.all, w + " all");
    SAME(a.nccl, b.nccl, w + " nccl");
    SAME(a.compute, b.compute, w + " compute");
    SAME(a.overlap, b.overlap, w + " overlap");
    SAME(a.device, b.device, w + " device");
  };
  const auto map = cuda_gpu_time_util_map(t, p), nccl_map = nccl_gpu_time_util_map(t, p);
  same_rows(map, reference::cuda_gpu_time_util_map(t, p), label + " cuda_gpu_time_util_map", same_bin);
  same_rows(nccl_map, reference::nccl_gpu_time_util_map(t, p), label + " nccl_gpu_time_util_map", same_bin);
  std::size_t partial = 0; // bins neither empty nor full: the fractions were exercised
  for (const auto& r : nccl_map) partial += r.in_session && r.overlap > 0 && r.overlap < 100;
  const std::size_t made[] = {gaps.size(), util.size(),      sync.size(),      async.size(),      copies.size(),    sets.size(),
                              hist.size(), kern_pace.size(), range_pace.size(), projected.size(), communication, map.size(), partial};
  for (int i = 0; i < 13; ++i) rows[i] += made[i];
}

// The recipes that combine ranks over two ranks made of `t`: the second's session starts later
// by its wall clock and its trace clock differs; with `p.align` and without. Returns the rows
// the second rank made, so that a caller can check that rank numbers and offsets were exercised.
std::size_t check_ranks(const trace& t, recipe_params p, const std::string& label, std::uint64_t shift) {
  trace a = t, b = t;
  a.context.at_start = {a.begin + 3, 1000000};
  b.begin += 7, b.context.at_start = {b.begin + 11, 1000000 + shift};
  const rank_traces ranks{&a, &b};
  std::size_t second = 0;
  for (const bool align : {true, false}) {
    p.align = align;
    const auto w = label + (align ? " ranks aligned" : " ranks from 0");
    const auto overlap = nccl_gpu_overlap_trace(ranks);
    same_rows(overlap, reference::nccl_gpu_overlap_trace(ranks), w + " nccl_gpu_overlap_trace", [](const overlap_trace_row& x, const overlap_trace_row& y, const std::string& v) {
      SAME(x.rank, y.rank, v + " rank");
      SAME(x.start, y.start, v + " start");
      SAME(x.communication_sum, y.communication_sum, v + " communication sum");
      SAME(x.compute_sum, y.compute_sum, v + " compute sum");
    });
    const auto same_bin = [](const util_map_row& x, const util_map_row& y, const std::string& v) {
      SAME(x.rank, y.rank, v + " rank");
      SAME(x.duration, y.duration, v + " duration");
      SAME(x.in_session, y.in_session, v + " in session");
      SAME(x.all, y.all, v + " all");
      SAME(x.nccl, y.nccl, v + " nccl");
      SAME(x.compute, y.compute, v + " compute");
      SAME(x.overlap, y.overlap, v + " overlap");
    };
    const auto map = cuda_gpu_time_util_map(ranks, p), nccl_map = nccl_gpu_time_util_map(ranks, p);
    same_rows(map, reference::gpu_time_util_map(ranks, p, false), w + " cuda_gpu_time_util_map", same_bin);
    same_rows(nccl_map, reference::gpu_time_util_map(ranks, p, true), w + " nccl_gpu_time_util_map", same_bin);
    for (const auto& r : map) second += r.rank == 1;
  }
  return second;
}

// A random trace with what the rules read: two devices with contexts, copies of every memory
// kind and direction, memsets of pinned and managed memory, and API calls renamed to the
// functions the rules match (some in another case, some versioned, some that must not match).
trace dressed(std::uint64_t seed, int threads, int events) {
  auto t = synthetic::random_trace(seed, threads, events);
  std::mt19937_64 g(seed ^ 0x9e3779b97f4a7c15ull);
  const char* names[] = {"cudaStreamSynchronize", "cudaDeviceSynchronize_v3020", "CUDASTREAMSYNCHRONIZE", "cudaStreamSynchronizeX",
                         "cudaMemcpy", "cudaMemcpyAsync", "cudaMemcpy2DAsync_v3020", "cudaMemcpyPeerASYNC", "cudaMemset",
                         "cudaMemsetAsync", "cudaMemset2D", "cudaLaunchKernel", "cudaEventSynchronize", "cudaMemcpyToSymbol"};
  for (auto& a : t.api_calls) a.name = t.strings.intern(names[g() % 14]);
  const auto nccl = t.strings.intern("ncclDevKernel_AllReduce_Sum_f32"), nccl_upper = t.strings.intern("NCCLKernel_Send");
  // NCCL kernels, and kernels nsys's prefix rule (case and all) counts as compute
  for (std::size_t i = 1; i < t.kernels.size(); i += 4) t.kernels[i].name = i % 8 == 1 ? nccl : nccl_upper;
  kernel_config c;
  c.device = 1, c.context = 5;
  const auto on_one = t.kernel_configs.intern(c);
  for (std::size_t i = 0; i < t.kernels.size(); i += 3) t.kernels[i].config = on_one;
  for (auto& cp : t.copies) {
    cp.src = static_cast<memory_kind>(g() % 5), cp.dst = static_cast<memory_kind>(g() % 5);
    cp.kind = static_cast<copy_kind>(g() % 11);
    cp.bytes = g() % 2 ? 1 + g() % 65536 : 65536 + g() % 1000;
    cp.device = static_cast<std::uint16_t>(g() % 2), cp.context = 1 + static_cast<std::uint32_t>(g() % 3);
  }
  for (auto& m : t.memsets) m.memory = static_cast<memory_kind>(g() % 6), m.device = static_cast<std::uint16_t>(g() % 2);
  // Every copy and memset also gets a call of its own, so that the joins meet many pairs.
  const char* copy_calls[] = {"cudaMemcpy", "cudaMemcpyAsync", "cudaMemcpy2D_v3020", "cudaMemcpyPeerAsync"};
  const char* set_calls[] = {"cudaMemset", "cudaMemsetAsync", "cudaMemset2D_v3020"};
  for (const auto& cp : t.copies) t.api_calls.push_back({cp.start, cp.start + 5, t.strings.intern(copy_calls[g() % 4]), cp.correlation, 0, false});
  for (const auto& m : t.memsets) t.api_calls.push_back({m.start, m.start + 5, t.strings.intern(set_calls[g() % 3]), m.correlation, 0, false});
  return t;
}

} // namespace

TEST_CASE("recipes: random traces equal their definitions under several parameters") {
  NVSCOPE_SEEDED_RNG(std::mt19937_64, rng);
  std::size_t rows[13] = {};
  std::size_t second_rank = 0;
  for (int i = 0; i < 16; ++i) {
    const auto seed = rng();
    const int threads = 1 + i % 4, events = 40 + static_cast<int>(rng() % 400);
    const auto t = dressed(seed, threads, events);
    recipe_params p;
    p.gap_ms = 0; // the traces' gaps are nanoseconds: a threshold of 0 ms reports every one
    p.threshold = static_cast<std::uint32_t>(rng() % 101);
    p.chunks = 1 + static_cast<std::uint32_t>(rng() % 40);
    p.bins = 1 + static_cast<std::uint32_t>(rng() % 200);
    const auto label = "random " + std::to_string(i) + " (trace seed " + std::to_string(seed) + ", " + std::to_string(threads) +
                       " threads, " + std::to_string(events) + " events, threshold " + std::to_string(p.threshold) + ", chunks " +
                       std::to_string(p.chunks) + ")";
    check_all(rows, t, p, label);
    check_all(rows, t, recipe_params{}, label + " defaults");
    second_rank += check_ranks(t, p, label, rng() % 100000);
  }
  CHECK(second_rank > 0);
  for (int i = 0; i < 13; ++i) CHECK_MESSAGE(rows[i] > 0, std::string(recipe_name(static_cast<recipe>(i))), " made no rows to compare");
}

TEST_CASE("recipes: gaps, chunks and joins worked out by hand") {
  trace t;
  t.process_id = 42;
  t.threads = {{1001, 0}};
  // Device 0: [0, 1 s) and [0.2 s, 0.4 s) overlap, then idle until 2 s: one gap of 1 s, opened by
  // the copy on context 7. Device 1: one memset, no gap.
  kernel_record k;
  k.start = 0, k.end = 1000000000, k.correlation = 1;
  t.kernels = {k};
  copy_record c;
  c.start = 200000000, c.end = 400000000, c.correlation = 2, c.context = 7, c.src = memory_kind::pageable, c.dst = memory_kind::device;
  c.kind = copy_kind::host_to_device, c.bytes = 1 << 20;
  copy_record late = c;
  late.start = 2000000000, late.end = 2000001000, late.correlation = 3, late.context = 7, late.src = memory_kind::pinned, late.bytes = 4096;
  t.copies = {c, late};
  memset_record m;
  m.start = 5, m.end = 25, m.correlation = 4, m.device = 1, m.memory = memory_kind::managed;
  t.memsets = {m};
  const auto async = t.strings.intern("cudaMemcpyAsync_v3020"), copy = t.strings.intern("cudaMemcpy"), set = t.strings.intern("cudaMemset");
  const auto wait = t.strings.intern("cudaDeviceSynchronize");
  t.api_calls = {{10, 20, async, 2, 0, false}, {30, 40, copy, 3, 0, false}, {50, 60, set, 4, 0, false}, {70, 900, wait, 9, 0, false},
                 {80, 90, wait, 10, 0, true}}; // a driver call: not a runtime row

  const auto gaps = gpu_gaps(t, {});
  REQUIRE(gaps.size() == 1);
  CHECK(gaps[0].duration == 1000000000);
  CHECK(gaps[0].start == 1000000000);
  CHECK(gaps[0].context == 0); // the kernel's end (1 s) opens the gap, not the copy's (0.4 s)
  recipe_params longer;
  longer.gap_ms = 1000;
  CHECK(gpu_gaps(t, longer).empty()); // "duration > threshold": exactly 1000 ms is not reported

  // Device 0's span [0, 2.000001 s) in 2 chunks: the first fully used, the second 1000 ns of
  // 1000000500: under 50%.
  recipe_params two;
  two.chunks = 2;
  const auto util = gpu_time_util(t, two);
  REQUIRE(util.size() == 1);
  CHECK(util[0].device == 0);
  CHECK(util[0].start == 1000000500);
  CHECK(util[0].duration == 1000000500);
  CHECK(util[0].in_use == 0.0); // 0.0001 %, rounded to one decimal as nsys rounds it

  const auto sync = cuda_api_sync(t);
  REQUIRE(sync.size() == 1);
  CHECK(sync[0].duration == 830);
  CHECK(sync[0].tid == 1001);
  const auto a = cuda_memcpy_async(t);
  REQUIRE(a.size() == 1);
  CHECK(a[0].api_name == "cudaMemcpyAsync_v3020");
  CHECK(a[0].duration == 200000000);
  CHECK(cuda_memcpy_sync(t).empty()); // the synchronous copy is host to device of 4 KiB: left out
  t.copies[1].bytes = 65537;
  REQUIRE(cuda_memcpy_sync(t).size() == 1);
  const auto s = cuda_memset_sync(t);
  REQUIRE(s.size() == 1);
  CHECK(s[0].device == 1);

  const auto csv = recipe_csv(t, recipe::gpu_gaps);
  CHECK(csv == "Row#,Duration,Start,PID,Device ID,Context ID,Rank\n1,1000000000,1000000000,42,0,0,0\n");
  CHECK(recipe_table(t, recipe::cuda_memcpy_async).header.size() == 12);
  t.kernel_names[t.kernels[0].name] = {t.strings.intern("gemm"), 0};
  t.kernels.push_back(t.kernels[0]);
  t.kernels.back().start = t.kernels.back().end; // 0 ns: left out, as the recipe's `Duration > 0`
  CHECK(recipe_csv(t, recipe::cuda_gpu_kern_hist) == "Duration,Name,Rank\n1000000000,gemm,0\n");

  // Three runs of gemm: [10, 20), [25, 40), [35, 50): deltas 10 (from the session's start), 5,
  // -5 (the third overlaps the second).
  trace paced;
  const auto gemm = paced.strings.intern("gemm"), other = paced.strings.intern("relu");
  for (const auto& [s0, e0, n] : {std::make_tuple(35, 50, gemm), std::make_tuple(10, 20, gemm), std::make_tuple(21, 24, other), std::make_tuple(25, 40, gemm)}) {
    kernel_record r;
    r.start = static_cast<timestamp_ns>(s0), r.end = static_cast<timestamp_ns>(e0), r.name = n;
    paced.kernels.push_back(r);
  }
  recipe_params by_name;
  by_name.name = "gemm";
  const auto pace = cuda_gpu_kern_pace(paced, by_name);
  REQUIRE(pace.size() == 3);
  CHECK(pace[1].start == 25);
  CHECK(pace[0].delta == 10);
  CHECK(pace[1].delta == 5);
  CHECK(pace[2].delta == -5);
  CHECK(pace[2].duration_accum == 10 + 15 + 15);
  CHECK(pace[2].delta_accum == 10);
  paced.begin = 4; // times from the session's start
  CHECK(cuda_gpu_kern_pace(paced, by_name)[0].start == 6);
  CHECK(cuda_gpu_kern_pace(paced, by_name)[0].delta == 6);
  // Durations 10, 15, 15: Q1 at place 0.5 of the sorted values, 12.5; the median 15; the sample
  // deviation sqrt(50 / 3 / 2 * ...) = 2.9.
  const auto st = pace_stats_of(pace, "gemm");
  CHECK(st.count == 3);
  CHECK(st.mean == doctest::Approx(13.3));
  CHECK(st.q1 == doctest::Approx(12.5));
  CHECK(st.median == doctest::Approx(15.0));
  CHECK(st.q3 == doctest::Approx(15.0));
  CHECK(st.std == doctest::Approx(2.9));
  const auto files = recipe_files(paced, recipe::cuda_gpu_kern_pace, by_name);
  REQUIRE(files.size() == 8);
  CHECK(files[4].suffix == ".pace_delta");
  CHECK(files[4].csv == "0\n6\n5\n-5\n");
  CHECK(files[7].csv == "Shortname,Count,Mean,Std (approx),Min,Q1 (approx),Median (approx),Q3 (approx),Max,Sum\ngemm,3,13.3,2.9,10,12.5,15.0,15.0,15,40\n");
}

TEST_CASE("recipes: gpu_time_util's chunks rounded up, summed, coalesced and ordered by average") {
  trace t;
  auto add = [&](timestamp_ns s, timestamp_ns e, std::uint16_t device) {
    kernel_config c;
    c.device = device, c.context = 3 + device;
    kernel_record k;
    k.start = s, k.end = e, k.config = t.kernel_configs.intern(c);
    t.kernels.push_back(k);
  };
  // Device 1: [0, 40) in chunks of ceil(40 / 3) = 14: [0, 14) runs two kernels at once (143 %),
  // [14, 28) nothing, [28, 40) (cut at the span's end) 5 of 12 ns: the last two coalesce into
  // one row of (14 * 0 + 12 * 41.67) / 26 = 19.2 %.
  add(0, 10, 1), add(0, 10, 1), add(35, 40, 1);
  // Device 0: [0, 200) in chunks of 67: [67, 134) 33 ns (49.3 %), [134, 200) 10 of 66 ns: 32.3 %.
  add(0, 100, 0), add(190, 200, 0);
  recipe_params three;
  three.chunks = 3;
  const auto rows = gpu_time_util(t, three);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].device == 1); // the lower average first, whatever the device
  CHECK(rows[0].start == 14);
  CHECK(rows[0].duration == 26);
  CHECK(rows[0].in_use == doctest::Approx(19.2));
  CHECK(rows[0].context == 4);
  CHECK(rows[1].device == 0);
  CHECK(rows[1].start == 67);
  CHECK(rows[1].duration == 133);
  CHECK(rows[1].in_use == doctest::Approx(32.3));
  CHECK(recipe_csv(t, recipe::gpu_time_util, three) ==
        "Row#,In-Use,Duration,Start,PID,Device ID,Context ID,Rank\n1,19.2,26,14,0,1,4,0\n2,32.3,133,67,0,0,3,0\n");
}

TEST_CASE("recipes: nccl_gpu_overlap_trace's overlaps, each kind's time counted once") {
  trace t;
  auto add = [&](const char* name, timestamp_ns s, timestamp_ns e) {
    kernel_record k;
    k.start = s, k.end = e, k.name = t.strings.intern(name);
    t.kernels.push_back(k);
  };
  // Two all-reduces [0, 100) and [50, 150) beside a gemm [20, 60) and a relu [90, 200).
  add("ncclAllReduce", 0, 100), add("gemm", 20, 60), add("ncclAllReduce", 50, 150), add("relu", 90, 200);
  const auto rows = nccl_gpu_overlap_trace(t);
  REQUIRE(rows.size() == 4);
  CHECK(rows[0].communication); // communication kernels first
  CHECK(rows[0].start == 0);
  CHECK(rows[0].communication_sum == 50); // the other all-reduce, not itself
  CHECK(rows[0].compute_sum == 40 + 10);
  CHECK(rows[0].compute_overlap == doctest::Approx(50.0));
  CHECK(rows[1].compute_sum == 10 + 60);
  CHECK(rows[2].name == "gemm");
  CHECK(rows[2].communication_sum == 40); // [20, 60) and [50, 60): their union (overlap.calculate_overlap_sum, consolidated)
  CHECK(rows[2].compute_sum == 0);
  CHECK(rows[3].communication_sum == 60); // [90, 100) and [90, 150)
  CHECK(rows[3].communication_overlap == doctest::Approx(54.5)); // 60 of 110 ns
  const auto groups = nccl_gpu_overlap_groups(rows);
  REQUIRE(groups.size() == 3);
  CHECK(groups[0].name == "gemm");
  CHECK(groups[1].name == "ncclAllReduce");
  CHECK(groups[1].count == 2);
  CHECK(groups[1].compute_overlap == doctest::Approx(60.0)); // (50 + 70) of 200 ns
  const auto files = recipe_files(t, recipe::nccl_gpu_overlap_trace);
  REQUIRE(files.size() == 2);
  CHECK(files[1].csv == "Name,Count,Communication Overlap,Compute Overlap\ngemm,1,100.0,0.0\nncclAllReduce,2,50.0,60.0\nrelu,1,54.5,0.0\n");
  t.kernels[0].name = t.kernels[2].name = t.strings.intern("NCCL_allreduce"); // no name starts "nccl": no rows, as nsys
  CHECK(nccl_gpu_overlap_trace(t).empty());
  CHECK(reference::nccl_gpu_overlap_trace(t).empty());
}

TEST_CASE("recipes: cuda_gpu_time_util_map's bins worked out by hand, by nsys's heatmap arithmetic") {
  trace t;
  t.begin = 1000, t.finish = 2000; // a session of 1000 ns: 4 bins of 250
  const auto gemm = t.strings.intern("gemm");
  auto kernel = [&](timestamp_ns s, timestamp_ns e) {
    kernel_record k;
    k.start = 1000 + s, k.end = 1000 + e, k.name = gemm;
    t.kernels.push_back(k);
  };
  kernel(0, 100);   // starts on a bin's edge, inside one bin: heatmap.py's min(ceil(s), e) - s counts 0 of it
  kernel(300, 400); // 40 % of bin 1
  kernel(450, 800); // 20 % of bin 1, all of bin 2, 20 % of bin 3
  kernel(460, 500); // inside the one before: the union counts it once
  recipe_params p;
  p.bins = 4;
  const auto rows = cuda_gpu_time_util_map(t, p);
  REQUIRE(rows.size() == 4);
  CHECK(rows[0].all == 0.0);
  CHECK(rows[1].all == 60.0);
  CHECK(rows[2].all == 100.0);
  CHECK(rows[3].all == 20.0);
  CHECK(rows[3].duration == 750);
  CHECK(nccl_gpu_time_util_map(t, p).empty()); // no communication kernel
  const auto csv = recipe_csv(t, recipe::cuda_gpu_time_util_map, p);
  CHECK(csv.rfind("Duration,Kernel,PID,Device ID,Rank\n0,0.0,0,0,0\n250,60.0,", 0) == 0);

  t.finish = 1005; // 5 ns in 4 bins of 2: bin 2 half in the session and scaled, bin 3 past its end
  t.kernels.clear();
  kernel(1, 4);
  const auto short_rows = cuda_gpu_time_util_map(t, p);
  REQUIRE(short_rows.size() == 4);
  CHECK(short_rows[0].all == 50.0);
  CHECK(short_rows[1].all == 100.0);
  CHECK(short_rows[2].all == 0.0);
  CHECK(!short_rows[3].in_session);
  CHECK(recipe_csv(t, recipe::cuda_gpu_time_util_map, p).find("\n6,,0,0,0\n") != std::string::npos);

  t.finish = 2000;
  t.kernels.clear();
  kernel(100, 200);
  kernel(150, 300);
  t.kernels.back().name = t.strings.intern("ncclDevKernel_AllReduce");
  const auto nccl = nccl_gpu_time_util_map(t, p);
  REQUIRE(nccl.size() == 4);
  CHECK(nccl[0].all == 60.0);     // 100..250
  CHECK(nccl[0].nccl == 40.0);    // 150..250
  CHECK(nccl[0].compute == 40.0); // 100..200
  CHECK(nccl[0].overlap == 20.0); // 150..200
  CHECK(nccl[1].nccl == 20.0);
  CHECK(recipe_csv(t, recipe::nccl_gpu_time_util_map, p).rfind("Duration,All,NCCL,Compute,Overlap,PID,Device ID,Rank\n", 0) == 0);
}

TEST_CASE("recipes: the heatmaps of two ranks, placed by their wall clocks (collective_loader.py)") {
  trace a, b;
  a.begin = 0, a.finish = 1000, a.context.at_start = {0, 10000};     // a session of 1000 ns from wall time 10000
  b.begin = 500, b.finish = 1300, b.context.at_start = {600, 10350}; // 800 ns from wall time 10350 + 500 - 600 = 10250: offset 250
  auto kernel = [](trace& t, const char* name, timestamp_ns s, timestamp_ns e) {
    kernel_record k;
    k.start = t.begin + s, k.end = t.begin + e, k.name = t.strings.intern(name);
    t.kernels.push_back(k);
  };
  kernel(a, "gemm", 0, 263);
  kernel(b, "ncclDevKernel_AllReduce", 0, 263);
  recipe_params p;
  p.bins = 4; // one bin size for both: ceil(max(1000, 800 + 250) / 4) = 263
  const rank_traces ranks{&a, &b};
  const auto nccl = nccl_gpu_time_util_map(ranks, p);
  REQUIRE(nccl.size() == 4); // rank a has no NCCL kernel: no rows, and b is rank 0
  CHECK(nccl[0].rank == 0);
  CHECK(nccl[1].duration == 263);
  CHECK(nccl[0].nccl == 100.0); // [250, 263) of bin 0, divided by the 13 ns of it inside b's session
  CHECK(nccl[1].nccl == 95.1);  // [263, 513): 250 of 263 ns
  CHECK(nccl[3].nccl == 0.0);
  const auto map = cuda_gpu_time_util_map(ranks, p);
  REQUIRE(map.size() == 8);
  CHECK(map[0].all == 0.0); // a's [0, 263) starts on bin 0's edge: heatmap.py's min(ceil(s), e) - s counts 0 of it
  CHECK(map[4].rank == 1);
  CHECK(map[4].all == 100.0);
  p.align = false; // --disable-alignment: both from 0, bins of ceil(1000 / 4) = 250
  const auto unaligned = cuda_gpu_time_util_map(ranks, p);
  REQUIRE(unaligned.size() == 8);
  CHECK(unaligned[5].duration == 250);
  CHECK(unaligned[5].all == 5.2); // [250, 263) of b's bin 1
  const auto files = recipe_files(ranks, recipe::cuda_gpu_time_util_map, p);
  REQUIRE(files.size() == 1);
  CHECK(files[0].csv.find("\n250,5.2,0,0,1\n") != std::string::npos);
  CHECK(recipe_files(ranks, recipe::gpu_gaps, p).empty()); // a recipe of one process
}

TEST_CASE("recipes: the list --recipes takes") {
  auto s = parse_recipes("gpu_gaps:gap=50,cuda_api_sync,gpu_gaps:gap=100");
  CHECK(s.error.empty());
  REQUIRE(s.recipes.size() == 2);
  CHECK(s.recipes[0] == recipe::gpu_gaps);
  CHECK(s.params[0].gap_ms == 100);
  CHECK(s.params[1].gap_ms == 500); // another recipe's parameter keeps nsys's default
  s = parse_recipes("gpu_time_util:threshold=30:chunks=10");
  CHECK(s.error.empty());
  CHECK(s.params[0].threshold == 30);
  CHECK(s.params[0].chunks == 10);
  for (const char* bad : {"gpu_gapz", "gpu_gaps:gapp=1", "cuda_api_sync:gap=1", "gpu_time_util:chunks=0", "gpu_time_util:threshold=101",
                          "gpu_gaps:gap=", "gpu_gaps:gap=1x", "nvtx_pace", "cuda_gpu_kern_pace:name="}) {
    s = parse_recipes(bad);
    CHECK_MESSAGE(s.error.rfind("nvscope: recipes: ", 0) == 0, bad);
    CHECK_MESSAGE(s.error.find('\n') == std::string::npos, bad);
    CHECK(s.recipes.empty());
  }
  s = parse_recipes("nvtx_pace:name=step,cuda_gpu_kern_pace:name=gemm");
  CHECK(s.error.empty());
  REQUIRE(s.params.size() == 2);
  CHECK(s.params[0].name == "step");
  CHECK(s.params[1].name == "gemm");
  s = parse_recipes("cuda_gpu_time_util_map:bins=10,nccl_gpu_time_util_map");
  CHECK(s.error.empty());
  REQUIRE(s.params.size() == 2);
  CHECK(s.params[0].bins == 10);
  CHECK(s.params[1].bins == 30);
  CHECK(!parse_recipes("cuda_gpu_time_util_map:bins=0").error.empty());
  CHECK(recipe_reads_api(recipe::cuda_memset_sync));
  CHECK(!recipe_reads_api(recipe::gpu_gaps));
}

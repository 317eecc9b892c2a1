// The nsys reports of analyze/reports.hpp against their plain definitions in
// analyze/reference/reports.hpp, field by field, on seeded random traces of every kind
// (tests/analyze/random_trace.hpp, with device and thread names and versioned API names
// added), on ranges nested under themselves, and on small traces whose figures are worked out
// by hand here; then export/reports.hpp: nsys's column names in nsys's order, the report list
// `--reports` takes, CSV and JSON.
#include "engine_vs_reference.hpp"
#include "random_trace.hpp"
#include "../support/test_seed.hpp"

#include <nvscope/analysis.hpp>
#include <nvscope/analyze/reference/reports.hpp>
#include <nvscope/analyze/reports.hpp>
#include <nvscope/export/reports.hpp>

#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <fstream>
#include <random>
#include <string>
#include <vector>

using namespace nvscope;

namespace {

using namespace engine_vs_reference;

void same_gpu_trace_row(const gpu_trace_row& e, const gpu_trace_row& r, const std::string& w) {
  SAME(e.start, r.start, w + " start");
  SAME(e.duration, r.duration, w + " duration");
  SAME(e.correlation, r.correlation, w + " correlation");
  SAME(static_cast<int>(e.op), static_cast<int>(r.op), w + " op");
  for (int i = 0; i < 3; ++i) {
    SAME(e.grid[i], r.grid[i], w + " grid");
    SAME(e.block[i], r.block[i], w + " block");
  }
  SAME(e.registers, r.registers, w + " registers");
  SAME(e.shared_bytes, r.shared_bytes, w + " shared");
  SAME(e.bytes, r.bytes, w + " bytes");
  SAME(e.has_throughput, r.has_throughput, w + " has throughput");
  SAME(e.throughput, r.throughput, w + " throughput");
  SAME(static_cast<int>(e.src), static_cast<int>(r.src), w + " src");
  SAME(static_cast<int>(e.dst), static_cast<int>(r.dst), w + " dst");
  SAME(e.device, r.device, w + " device");
  SAME(e.device_name, r.device_name, w + " device name");
  SAME(e.context, r.context, w + " context");
  SAME(e.stream, r.stream, w + " stream");
  SAME(e.name, r.name, w + " name");
}

void same_exec_row(const kernel_exec_trace_row& e, const kernel_exec_trace_row& r, const std::string& w) {
  SAME(e.api_start, r.api_start, w + " api start");
  SAME(e.api_duration, r.api_duration, w + " api duration");
  SAME(e.queued, r.queued, w + " queued");
  SAME(e.queue_start, r.queue_start, w + " queue start");
  SAME(e.queue_duration, r.queue_duration, w + " queue duration");
  SAME(e.kernel_start, r.kernel_start, w + " kernel start");
  SAME(e.kernel_duration, r.kernel_duration, w + " kernel duration");
  SAME(e.total_duration, r.total_duration, w + " total");
  SAME(e.tid, r.tid, w + " tid");
  SAME(e.device, r.device, w + " device");
  SAME(e.api_name, r.api_name, w + " api name");
  SAME(e.kernel, r.kernel, w + " kernel");
}

void same_range_trace_row(const range_trace_row& e, const range_trace_row& r, const std::string& w) {
  SAME(e.start, r.start, w + " start");
  SAME(e.end, r.end, w + " end");
  SAME(e.duration, r.duration, w + " duration");
  SAME(e.child_duration, r.child_duration, w + " DurChild");
  SAME(e.self_duration, r.self_duration, w + " DurNonChild");
  SAME(e.name, r.name, w + " name");
  SAME(e.tid, r.tid, w + " tid");
  SAME(e.level, r.level, w + " level");
  SAME(e.children, r.children, w + " children");
  SAME(e.range, r.range, w + " range");
  SAME(e.parent, r.parent, w + " parent");
  SAME(e.stack, r.stack, w + " stack");
  SAME(e.name_tree, r.name_tree, w + " name tree");
}

template <class Row>
void same_summary(const std::vector<Row>& e, const std::vector<Row>& r, const std::string& table) {
  same_rows(e, r, table, [](const Row& a, const Row& b, const std::string& w) {
    SAME(a.time_percent, b.time_percent, w + " time %");
    same_stats(a.time, b.time, w);
  });
}

// Kernels whose `:nvtx-name` name carries a range's prefix, summed over the tests' traces: a
// random trace set where none did would test only the unprefixed path.
std::size_t prefixed_kernel_rows = 0;

void check_kernel_reports(const trace& t, name_form form, const std::string& label) {
  const auto ks = cuda_gpu_kern_sum_nvtx(t, form), kr = reference::cuda_gpu_kern_sum_nvtx(t, form);
  same_summary(ks, kr, label + " cuda_gpu_kern_sum:nvtx-name");
  same_rows(ks, kr, label + " cuda_gpu_kern_sum:nvtx-name", [](const kernel_summary_row& a, const kernel_summary_row& b, const std::string& w) { SAME(a.name, b.name, w + " name"); });
  for (const auto& r : kr) prefixed_kernel_rows += r.name.find('/') != std::string::npos;
  same_rows(cuda_gpu_trace(t, form), reference::cuda_gpu_trace(t, form), label + " cuda_gpu_trace", same_gpu_trace_row);
  for (const bool api : {false, true}) {
    const auto gs = api ? cuda_api_gpu_sum(t, form) : cuda_gpu_sum(t, form);
    const auto gr = api ? reference::cuda_api_gpu_sum(t, form) : reference::cuda_gpu_sum(t, form);
    const auto table = label + (api ? " cuda_api_gpu_sum" : " cuda_gpu_sum");
    same_summary(gs, gr, table);
    same_rows(gs, gr, table, [](const gpu_summary_row& a, const gpu_summary_row& b, const std::string& w) {
      SAME(a.name, b.name, w + " name");
      SAME(static_cast<int>(a.category), static_cast<int>(b.category), w + " category");
    });
  }
  const auto gb = cuda_gpu_kern_gb_sum(t, form), gbr = reference::cuda_gpu_kern_gb_sum(t, form);
  same_summary(gb, gbr, label + " cuda_gpu_kern_gb_sum");
  same_rows(gb, gbr, label + " cuda_gpu_kern_gb_sum", [](const kernel_grid_summary_row& a, const kernel_grid_summary_row& b, const std::string& w) {
    SAME(a.name, b.name, w + " name");
    for (int i = 0; i < 3; ++i) {
      SAME(a.grid[i], b.grid[i], w + " grid");
      SAME(a.block[i], b.block[i], w + " block");
    }
  });
  same_rows(cuda_kern_exec_trace(t, form), reference::cuda_kern_exec_trace(t, form), label + " cuda_kern_exec_trace", same_exec_row);
  same_rows(cuda_kern_exec_sum(t, form), reference::cuda_kern_exec_sum(t, form), label + " cuda_kern_exec_sum",
            [](const kernel_exec_summary_row& a, const kernel_exec_summary_row& b, const std::string& w) {
              SAME(a.tid, b.tid, w + " tid");
              SAME(a.device, b.device, w + " device");
              SAME(a.api_name, b.api_name, w + " api");
              SAME(a.kernel_name, b.kernel_name, w + " kernel");
              same_stats(a.total, b.total, w + " total");
              same_stats(a.api, b.api, w + " api");
              same_stats(a.queue, b.queue, w + " queue");
              same_stats(a.kernel, b.kernel, w + " kernel");
            });
}

void check_all(const trace& t, const std::string& label) {
  const auto as = cuda_api_sum(t), ar = reference::cuda_api_sum(t);
  same_summary(as, ar, label + " cuda_api_sum");
  same_rows(as, ar, label + " cuda_api_sum", [](const api_summary_row& a, const api_summary_row& b, const std::string& w) { SAME(a.name, b.name, w + " name"); });
  same_rows(cuda_api_trace(t), reference::cuda_api_trace(t), label + " cuda_api_trace", [](const api_trace_row& a, const api_trace_row& b, const std::string& w) {
    SAME(a.start, b.start, w + " start");
    SAME(a.duration, b.duration, w + " duration");
    SAME(a.name, b.name, w + " name");
    SAME(a.correlation, b.correlation, w + " correlation");
    SAME(a.tid, b.tid, w + " tid");
    SAME(a.thread_name, b.thread_name, w + " thread name");
  });
  for (const auto form : {name_form::demangled, name_form::base, name_form::mangled}) check_kernel_reports(t, form, label + " form " + std::to_string(static_cast<int>(form)));
  for (const bool push_pop : {true, false}) {
    const auto e = push_pop ? nvtx_pushpop_sum(t) : nvtx_startend_sum(t);
    const auto r = push_pop ? reference::nvtx_pushpop_sum(t) : reference::nvtx_startend_sum(t);
    const auto table = label + (push_pop ? " nvtx_pushpop_sum" : " nvtx_startend_sum");
    same_summary(e, r, table);
    same_rows(e, r, table, [](const range_style_summary_row& a, const range_style_summary_row& b, const std::string& w) { SAME(a.range, b.range, w + " range"); });
  }
  same_rows(nvtx_pushpop_trace(t), reference::nvtx_pushpop_trace(t), label + " nvtx_pushpop_trace", same_range_trace_row);
  for (const auto rule : {start_end_rule::nsys, start_end_rule::opening_thread})
    same_rows(nvtx_gpu_proj_trace(t, rule), reference::nvtx_gpu_proj_trace(t, rule), label + " nvtx_gpu_proj_trace",
              [](const range_projection_trace_row& a, const range_projection_trace_row& b, const std::string& w) {
                SAME(a.name, b.name, w + " name");
                SAME(a.projected_start, b.projected_start, w + " projected start");
                SAME(a.projected_duration, b.projected_duration, w + " projected duration");
                SAME(a.start, b.start, w + " start");
                SAME(a.duration, b.duration, w + " duration");
                SAME(a.push_pop, b.push_pop, w + " style");
                SAME(a.tid, b.tid, w + " tid");
                SAME(a.gpu_ops, b.gpu_ops, w + " ops");
                SAME(a.level, b.level, w + " level");
                SAME(a.children, b.children, w + " children");
                SAME(a.range, b.range, w + " range");
                SAME(a.parent, b.parent, w + " parent");
                SAME(a.stack, b.stack, w + " stack");
              });
}

// A random trace with what the builder leaves out: named devices and threads, API names with
// a version suffix, launch configurations on a few kernels.
trace dressed(std::uint64_t seed, int threads, int events) {
  auto t = synthetic::random_trace(seed, threads, events);
  t.devices = {{0, t.strings.intern("NVIDIA H200")}, {1, t.strings.intern("NVIDIA H100")}};
  if (!t.threads.empty()) t.threads[0].name = t.strings.intern("main");
  const auto versioned = t.strings.intern("cuGraphLaunch_v10000");
  for (std::size_t i = 0; i < t.api_calls.size(); i += 3) t.api_calls[i].name = versioned;
  kernel_config c;
  c.grid[0] = 128, c.block[0] = 256, c.registers = 32, c.shared_bytes = 49152, c.device = 1, c.context = 3;
  const auto id = t.kernel_configs.intern(c);
  for (std::size_t i = 0; i < t.kernels.size(); i += 4) t.kernels[i].config = id;
  for (std::size_t i = 0; i < t.copies.size(); i += 2) t.copies[i].device = 1, t.copies[i].src = memory_kind::pinned, t.copies[i].dst = memory_kind::device;
  return t;
}

} // namespace

TEST_CASE("reports: random traces of every kind equal their definitions") {
  NVSCOPE_SEEDED_RNG(std::mt19937_64, rng);
  for (int i = 0; i < 12; ++i) {
    const auto seed = rng();
    const int threads = 1 + i % 4, events = 40 + static_cast<int>(rng() % 400);
    const auto t = dressed(seed, threads, events);
    check_all(t, "random " + std::to_string(i) + " (trace seed " + std::to_string(seed) + ", " + std::to_string(threads) + " threads, " +
                     std::to_string(events) + " events)");
  }  CHECK(prefixed_kernel_rows > 0);
}

TEST_CASE("reports: ranges of one name nested under themselves") {
  NVSCOPE_SEEDED_RNG(std::mt19937_64, rng);
  for (int round = 0; round < 4; ++round) check_all(synthetic::nested_names_trace(rng, round % 2 == 1), "nested names " + std::to_string(round));
}

TEST_CASE("reports: API and kernel figures worked out by hand") {
  trace t;
  t.process_id = 42;
  t.threads = {{1001, 0}};
  const auto launch = t.strings.intern("cudaLaunchKernel_v7000"), sync = t.strings.intern("cudaStreamSynchronize");
  const auto last_error = t.strings.intern("cudaGetLastError_v3020"); // nsys lists none of these
  t.api_calls = {{100, 130, launch, 1, 0, false}, {200, 220, launch, 2, 0, false}, {300, 900, sync, 3, 0, false},
                 {1000, 1050, launch, 4, 0, false}, {1060, 5000, last_error, 5, 0, false}};
  kernel_record k1, k2;
  k1.start = 120, k1.end = 170, k1.correlation = 1, k1.name = t.strings.intern("gemm"); // starts before the call returns: no queue time
  k2.start = 260, k2.end = 300, k2.correlation = 2, k2.name = k1.name;                   // queued 40 ns
  kernel_record k3 = k2;
  k3.start = 1050, k3.end = 1080, k3.correlation = 4; // starts as the call returns: queued 0 ns, counted in QCount
  t.kernels = {k1, k2, k3};

  const auto api = cuda_api_sum(t);
  REQUIRE(api.size() == 2);
  CHECK(api[0].name == "cudaStreamSynchronize");
  CHECK(api[0].time.total == 600);
  CHECK(api[1].name == "cudaLaunchKernel"); // "_v7000" cut
  CHECK(api[1].time.count == 3);
  CHECK(api[1].time.total == 100);
  CHECK(cuda_api_trace(t).size() == 4);
  CHECK(reference::cuda_api_sum(t).size() == 2);
  CHECK(reference::cuda_api_trace(t).size() == 4);

  const auto both = cuda_api_gpu_sum(t);
  REQUIRE(both.size() == 3); // two API functions and one kernel
  CHECK(both[1].name == "gemm");
  CHECK(both[1].category == operation_category::cuda_kernel);
  CHECK(both[1].time.total == 120); // 50 + 40 + 30
  CHECK(both[2].name == "cudaLaunchKernel");
  CHECK(both[2].category == operation_category::cuda_api);
  CHECK(both[2].time.total == 100);
  const auto gb = cuda_gpu_kern_gb_sum(t);
  REQUIRE(gb.size() == 1);
  CHECK(report_table(t, analyze(t), parse_reports("cuda_gpu_kern_gb_sum").reports[0]).rows[0][8] == "   0    0    0");

  const auto exec = cuda_kern_exec_trace(t);
  REQUIRE(exec.size() == 3);
  CHECK(!exec[0].queued);
  CHECK(exec[0].total_duration == 70); // max(130, 170) - 100
  CHECK(exec[1].queued);
  CHECK(exec[1].queue_start == 220);
  CHECK(exec[1].queue_duration == 40);
  CHECK(exec[1].total_duration == 100); // max(220, 300) - 200
  CHECK(exec[2].queued);
  CHECK(exec[2].queue_duration == 0);
  const auto sum = cuda_kern_exec_sum(t);
  REQUIRE(sum.size() == 1);
  CHECK(sum[0].tid == 1001);
  CHECK(sum[0].total.count == 3);
  CHECK(sum[0].queue.count == 2);
  CHECK(sum[0].queue.average == 20.0);
  CHECK(sum[0].total.total == 250); // 70 + 100 + 80
}

TEST_CASE("reports: cuda_gpu_kern_sum:nvtx-name worked out by hand") {
  trace t;
  t.threads = {{1001, 0}, {1002, 0}};
  const auto launch = t.strings.intern("cudaLaunchKernel"), gemm = t.strings.intern("gemm");
  auto range = [&](timestamp_ns start, timestamp_ns end, const char* name, bool push_pop, std::uint32_t end_thread, bool mark) {
    range_record r;
    r.start = start, r.end = end, r.name = t.strings.intern(name), r.is_push_pop = push_pop, r.end_thread = end_thread, r.is_mark = mark;
    r.domain = t.strings.intern("lib"); // the prefix is the range's name alone, not "lib:name"
    t.ranges.push_back(r);
  };
  range(0, 1000, "step", true, range_record::same_thread, false);
  range(100, 400, "fwd", true, range_record::same_thread, false);
  range(110, 110, "mark", true, range_record::same_thread, true);   // a mark names no kernel
  range(150, 2000, "async", false, 1, false);                      // a start/end range ended on thread 1: left out
  range(350, 600, "se", false, range_record::same_thread, false);  // start/end, ended where it began
  t.api_calls = {{120, 130, launch, 1, 0, false},   // in step and fwd: fwd started last
                 {360, 380, launch, 2, 0, false},   // in step, fwd and se: se started last
                 {390, 650, launch, 3, 0, false},   // fwd and se end inside the call: step holds it whole
                 {500, 510, launch, 4, 1, false}};  // thread 1 opened no range
  for (std::uint32_t i = 1; i <= 5; ++i) {          // correlation 5 has no API call
    kernel_record k;
    k.start = 1000 * i, k.end = 1000 * i + 10 * i, k.correlation = i, k.name = gemm;
    t.kernels.push_back(k);
  }
  t.kernel_names[gemm] = {t.strings.intern("gemm_base"), 0};
  const auto names = kernel_names_with_ranges(t);
  CHECK(names == std::vector<std::string>{"fwd/gemm", "se/gemm", "step/gemm", "gemm", "gemm"});
  const auto rows = cuda_gpu_kern_sum_nvtx(t, name_form::base);
  REQUIRE(rows.size() == 4);
  CHECK(rows[0].name == "gemm_base");
  CHECK(rows[0].time.total == 90); // 40 + 50
  CHECK(rows[1].name == "step/gemm_base");
  CHECK(rows[3].name == "fwd/gemm_base");
  const auto chosen = parse_reports("cuda_gpu_kern_sum:nvtx-name:base");
  REQUIRE(chosen.error.empty());
  CHECK(choice_name(chosen.reports[0]) == "cuda_gpu_kern_sum:nvtx-name:base");
  const auto tab = report_table(t, analyze(t), chosen.reports[0]);
  REQUIRE(tab.rows.size() == 4);
  CHECK(tab.rows[2][8] == "se/gemm_base");
  CHECK(report_table(t, analyze(t), parse_reports("cuda_gpu_kern_sum:base").reports[0]).rows[0][8] == "gemm_base");
}

TEST_CASE("reports: DurChild and DurNonChild of a push/pop stack worked out by hand") {
  trace t;
  t.threads = {{7, 0}};
  const auto outer = t.strings.intern("step"), inner = t.strings.intern("fwd");
  auto range = [&](timestamp_ns s, timestamp_ns e, string_id n) {
    range_record r;
    r.start = s, r.end = e, r.name = n;
    t.ranges.push_back(r);
  };
  range(0, 100, outer);  // children 10..40 and 50..90: 70 ns of children, 30 of its own
  range(10, 40, inner);
  range(50, 90, inner);
  range(60, 70, outer);  // inside the second child: a grandchild
  t.finish = 200;
  const auto rows = nvtx_pushpop_trace(t);
  REQUIRE(rows.size() == 4);
  CHECK(rows[0].child_duration == 70);
  CHECK(rows[0].self_duration == 30);
  CHECK(rows[0].children == 2);
  CHECK(rows[0].parent == no_index);
  CHECK(rows[2].range == 2);
  CHECK(rows[2].child_duration == 10);
  CHECK(rows[3].level == 2);
  CHECK(rows[3].stack == ":0:2:3");
  CHECK(rows[3].name_tree == "----:step");
  const auto sums = nvtx_pushpop_sum(t);
  REQUIRE(sums.size() == 2);
  CHECK(sums[0].range == ":step");
  CHECK(sums[0].time.total == 110);
  CHECK(nvtx_startend_sum(t).empty());
  // kernels launched at 20 (in the first fwd) and at 65 (in the inner step): the outer step
  // projects from the first's start to the second's end
  t.launches = {{20, 1, 0}, {65, 2, 0}};
  kernel_record a, b;
  a.start = 30, a.end = 45, a.correlation = 1;
  b.start = 80, b.end = 120, b.correlation = 2;
  t.kernels = {a, b};
  const auto proj = nvtx_gpu_proj_trace(t);
  REQUIRE(proj.size() == 4);
  CHECK(proj[0].range == 0);
  CHECK(proj[0].projected_start == 30);
  CHECK(proj[0].projected_duration == 90);
  CHECK(proj[0].gpu_ops == 2);
  CHECK(proj[0].children == 2);
  CHECK(proj[1].range == 1);
  CHECK(proj[2].range == 2); // starts at 80 as range 3 does, and lasts longer
  CHECK(proj[3].stack == ":0:2:3");
}

TEST_CASE("reports: nvtx_gpu_proj_trace nests both styles by containment, as nsys's script does") {
  trace t;
  t.threads = {{7, 0}};
  auto range = [&](timestamp_ns s, timestamp_ns e, const char* n, bool push_pop) {
    range_record r;
    r.start = s, r.end = e, r.name = t.strings.intern(n), r.is_push_pop = push_pop;
    t.ranges.push_back(r);
  };
  range(0, 100, "epoch", false);  // start/end, around the push/pop step
  range(10, 90, "step", true);
  range(20, 50, "phase", false);  // start/end inside the push/pop step
  range(30, 40, "fwd", true);     // push/pop inside the start/end phase
  range(30, 40, "fwd", true);     // the same span again: the earlier holds it
  t.finish = 200;
  t.launches = {{35, 1, 0}, {60, 2, 0}};
  kernel_record a, b;
  a.start = 36, a.end = 45, a.correlation = 1;
  b.start = 61, b.end = 70, b.correlation = 2;
  t.kernels = {a, b};
  const auto rows = nvtx_gpu_proj_trace(t);
  REQUIRE(rows.size() == 5);
  std::map<std::uint32_t, range_projection_trace_row> by_range;
  for (const auto& r : rows) by_range[r.range] = r;
  CHECK(by_range[0].level == 0);
  CHECK(by_range[1].parent == 0); // push/pop nesting alone gives it no parent
  CHECK(by_range[1].level == 1);
  CHECK(by_range[2].parent == 1);
  CHECK(by_range[3].parent == 2);
  CHECK(by_range[3].level == 3);
  CHECK(by_range[4].parent == 3);
  CHECK(by_range[4].stack == ":0:1:2:3:4");
  CHECK(by_range[1].children == 1);
  CHECK(reference::nvtx_gpu_proj_trace(t, start_end_rule::nsys).size() == rows.size());
}

TEST_CASE("reports: the list --reports takes, by nsys's names") {
  const auto summary = parse_reports("summary");
  REQUIRE(summary.error.empty());
  std::vector<std::string> names;
  for (const auto& c : summary.reports) names.push_back(choice_name(c));
  CHECK(names == std::vector<std::string>{"nvtx_sum", "cuda_api_sum", "cuda_gpu_kern_sum", "cuda_gpu_mem_time_sum", "cuda_gpu_mem_size_sum"});

  const auto some = parse_reports("cuda_gpu_trace:base,nvtx_pushpop_trace,cuda_gpu_trace:base,cuda_kern_exec_sum:mangled");
  REQUIRE(some.error.empty());
  REQUIRE(some.reports.size() == 3);
  CHECK(choice_name(some.reports[0]) == "cuda_gpu_trace:base");
  CHECK(some.reports[0].names == name_form::base);
  CHECK(choice_name(some.reports[2]) == "cuda_kern_exec_sum:mangled");

  CHECK(parse_reports("cuda_api_summ").error.find("no report named 'cuda_api_summ'") != std::string::npos);
  CHECK(parse_reports("cuda_api_sum:base").error.find("takes no variant") != std::string::npos);
  CHECK(parse_reports("cuda_gpu_trace:nvtx").error.find("takes :base or :mangled") != std::string::npos);
  CHECK(parse_reports("cuda_gpu_kern_sum:nvtx-name:mangled").reports.at(0).nvtx_names);
  CHECK(parse_reports("cuda_gpu_kern_sum:base:mangled").error.find("takes [:nvtx-name][:base|:mangled]") != std::string::npos);
  CHECK(parse_reports("cuda_gpu_kern_sum:nvtx-name:nvtx-name").error.find("takes [:nvtx-name]") != std::string::npos);
  CHECK(parse_reports("nvtx_sum:nvtx-name").error.find("takes no variant") != std::string::npos);
  CHECK(parse_reports("nvtx_sum,bogus").reports.empty());
}

TEST_CASE("reports: nsys's column names in nsys's order, CSV and JSON") {
  const auto t = dressed(3, 2, 300);
  const auto r = analyze(t);
  auto header_of = [&](const char* name) {
    const auto s = parse_reports(name);
    REQUIRE(s.reports.size() == 1);
    return report_table(t, r, s.reports[0]).header;
  };
  using names = std::vector<std::string>;
  CHECK(header_of("cuda_api_sum") == names{"Time (%)", "Total Time (ns)", "Num Calls", "Avg (ns)", "Med (ns)", "Min (ns)", "Max (ns)", "StdDev (ns)", "Name"});
  CHECK(header_of("cuda_api_trace") == names{"Start (ns)", "Duration (ns)", "Name", "Result", "CorrID", "Pid", "Tid", "T-Pri", "Thread Name"});
  CHECK(header_of("cuda_gpu_trace") == names{"Start (ns)", "Duration (ns)", "CorrId", "GrdX", "GrdY", "GrdZ", "BlkX", "BlkY", "BlkZ", "Reg/Trd",
                                             "StcSMem (MB)", "DymSMem (MB)", "Bytes (MB)", "Throughput (MB/s)", "SrcMemKd", "DstMemKd", "Device",
                                             "Ctx", "GreenCtx", "Strm", "Name"});
  CHECK(header_of("cuda_gpu_sum").back() == "Operation");
  CHECK(header_of("cuda_api_gpu_sum") == header_of("cuda_gpu_sum"));
  CHECK(header_of("cuda_gpu_kern_gb_sum") == names{"Time (%)", "Total Time (ns)", "Instances", "Avg (ns)", "Med (ns)", "Min (ns)", "Max (ns)",
                                                   "StdDev (ns)", "GridXYZ", "BlockXYZ", "Name"});
  CHECK(header_of("cuda_kern_exec_trace") == names{"API Start (ns)", "API Dur (ns)", "Queue Start (ns)", "Queue Dur (ns)", "Kernel Start (ns)",
                                                   "Kernel Dur (ns)", "Total Dur (ns)", "PID", "TID", "DevId", "API Function", "GridXYZ",
                                                   "BlockXYZ", "Kernel Name"});
  const auto exec_sum = header_of("cuda_kern_exec_sum");
  REQUIRE(exec_sum.size() == 27);
  CHECK(exec_sum[5] == "TAvg (ns)");
  CHECK(exec_sum[19] == "QStdDev (ns)");
  CHECK(exec_sum[25] == "API Name");
  CHECK(header_of("nvtx_pushpop_trace") == names{"Start (ns)", "End (ns)", "Duration (ns)", "DurChild (ns)", "DurNonChild (ns)", "Name", "PID", "TID",
                                                 "Lvl", "NumChild", "RangeId", "ParentId", "RangeStack", "NameTree"});
  CHECK(header_of("nvtx_startend_sum").back() == "Range");
  CHECK(header_of("nvtx_gpu_proj_trace") == names{"Name", "Projected Start (ns)", "Projected Duration (ns)", "Orig Start (ns)", "Orig Duration (ns)",
                                                  "Style", "PID", "TID", "NumGPUOps", "Lvl", "NumChild", "RangeId", "ParentId", "RangeStack"});

  const auto gpu = parse_reports("cuda_gpu_trace").reports[0];
  const auto rows = cuda_gpu_trace(t);
  REQUIRE(!rows.empty());
  const auto csv = report_csv(t, r, gpu);
  CHECK(csv.rfind("Start (ns),Duration (ns),CorrId,", 0) == 0);
  const auto tab = report_table(t, r, gpu);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].op != gpu_operation::kernel) continue;
    CHECK(tab.rows[i][13].empty());          // a kernel has no throughput
    CHECK(tab.rows[i][16].find(" (") != std::string::npos);
    break;
  }
  const auto json = reports_json(t, r, parse_reports("summary,cuda_gpu_trace").reports);
  CHECK(json.find("\"cuda_api_sum\": [") != std::string::npos);
  CHECK(json.find("\"GreenCtx\": null") != std::string::npos);
  CHECK(report_text(t, r, gpu).rfind(" ** CUDA GPU Trace (cuda_gpu_trace):", 0) == 0);
}

// The header of every report equals the one nsys 2025.3.1 wrote (tests/data/nsys_headers/, the
// first line of each CSV that `nsys stats --report NAME --format csv` made on the GPU machine).
TEST_CASE("reports: every header equals the one nsys wrote (tests/data/nsys_headers)") {
  const auto t = dressed(3, 2, 300);
  const auto r = analyze(t);
  int compared = 0;
  for (const char* name : {"cuda_api_sum", "cuda_api_trace", "cuda_gpu_trace", "cuda_gpu_sum", "cuda_kern_exec_sum", "cuda_kern_exec_trace",
                           "nvtx_pushpop_sum", "nvtx_pushpop_trace", "nvtx_startend_sum", "cuda_api_gpu_sum", "cuda_gpu_kern_gb_sum",
                           "nvtx_gpu_proj_trace"}) {
    CAPTURE(name);
    std::ifstream in(std::string(NVSCOPE_TEST_SOURCE_DIR "/tests/data/nsys_headers/") + name + ".csv");
    REQUIRE(in.good());
    std::string nsys;
    std::getline(in, nsys);
    const auto s = parse_reports(name);
    REQUIRE(s.reports.size() == 1);
    std::string ours;
    for (const auto& h : report_table(t, r, s.reports[0]).header) ours += (ours.empty() ? "" : ",") + h;
    CHECK(ours == nsys);
    ++compared;
  }
  CHECK(compared == 12);
}

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

// Per report, its `:nvtx-name` rows whose kernel name carries a range's prefix, summed over the
// tests' traces: a random trace set where none did would test only the unprefixed path.
std::map<std::string, std::size_t> prefixed_rows;

void count_prefixed(const std::string& report, const std::string& name) { prefixed_rows[report] += name.find('/') != std::string::npos; }

void same_gpu_sums(const std::vector<gpu_summary_row>& e, const std::vector<gpu_summary_row>& r, const std::string& table) {
  same_summary(e, r, table);
  same_rows(e, r, table, [](const gpu_summary_row& a, const gpu_summary_row& b, const std::string& w) {
    SAME(a.name, b.name, w + " name");
    SAME(static_cast<int>(a.category), static_cast<int>(b.category), w + " category");
  });
}

void same_exec_sums(const std::vector<kernel_exec_summary_row>& e, const std::vector<kernel_exec_summary_row>& r, const std::string& table) {
  same_rows(e, r, table, [](const kernel_exec_summary_row& a, const kernel_exec_summary_row& b, const std::string& w) {
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

void same_gb_sums(const std::vector<kernel_grid_summary_row>& e, const std::vector<kernel_grid_summary_row>& r, const std::string& table) {
  same_summary(e, r, table);
  same_rows(e, r, table, [](const kernel_grid_summary_row& a, const kernel_grid_summary_row& b, const std::string& w) {
    SAME(a.name, b.name, w + " name");
    for (int i = 0; i < 3; ++i) {
      SAME(a.grid[i], b.grid[i], w + " grid");
      SAME(a.block[i], b.block[i], w + " block");
    }
  });
}

// The seven reports with kernel names, plain (`nvtx` false) or `:nvtx-name`, against their
// definitions.
void check_kernel_reports(const trace& t, name_form form, bool nvtx, const std::string& label) {
  const std::string v = nvtx ? ":nvtx-name" : "";
  const auto ks = nvtx ? cuda_gpu_kern_sum_nvtx(t, form) : kernel_summary(t, index_trace(t), form);
  const auto kr = nvtx ? reference::cuda_gpu_kern_sum_nvtx(t, form) : reference::cuda_gpu_kern_sum(t, form);
  same_summary(ks, kr, label + " cuda_gpu_kern_sum" + v);
  same_rows(ks, kr, label + " cuda_gpu_kern_sum" + v, [](const kernel_summary_row& a, const kernel_summary_row& b, const std::string& w) { SAME(a.name, b.name, w + " name"); });
  const auto gt = nvtx ? cuda_gpu_trace_nvtx(t, form) : cuda_gpu_trace(t, form);
  same_rows(gt, nvtx ? reference::cuda_gpu_trace_nvtx(t, form) : reference::cuda_gpu_trace(t, form), label + " cuda_gpu_trace" + v, same_gpu_trace_row);
  const auto gs = nvtx ? cuda_gpu_sum_nvtx(t, form) : cuda_gpu_sum(t, form);
  same_gpu_sums(gs, nvtx ? reference::cuda_gpu_sum_nvtx(t, form) : reference::cuda_gpu_sum(t, form), label + " cuda_gpu_sum" + v);
  const auto ag = nvtx ? cuda_api_gpu_sum_nvtx(t, form) : cuda_api_gpu_sum(t, form);
  same_gpu_sums(ag, nvtx ? reference::cuda_api_gpu_sum_nvtx(t, form) : reference::cuda_api_gpu_sum(t, form), label + " cuda_api_gpu_sum" + v);
  const auto gb = nvtx ? cuda_gpu_kern_gb_sum_nvtx(t, form) : cuda_gpu_kern_gb_sum(t, form);
  same_gb_sums(gb, nvtx ? reference::cuda_gpu_kern_gb_sum_nvtx(t, form) : reference::cuda_gpu_kern_gb_sum(t, form), label + " cuda_gpu_kern_gb_sum" + v);
  const auto et = nvtx ? cuda_kern_exec_trace_nvtx(t, form) : cuda_kern_exec_trace(t, form);
  same_rows(et, nvtx ? reference::cuda_kern_exec_trace_nvtx(t, form) : reference::cuda_kern_exec_trace(t, form), label + " cuda_kern_exec_trace" + v,
            same_exec_row);
  const auto es = nvtx ? cuda_kern_exec_sum_nvtx(t, form) : cuda_kern_exec_sum(t, form);
  same_exec_sums(es, nvtx ? reference::cuda_kern_exec_sum_nvtx(t, form) : reference::cuda_kern_exec_sum(t, form), label + " cuda_kern_exec_sum" + v);
  if (!nvtx) return;
  for (const auto& r : ks) count_prefixed("cuda_gpu_kern_sum", r.name);
  for (const auto& r : gt) count_prefixed("cuda_gpu_trace", r.name);
  for (const auto& r : gs) count_prefixed("cuda_gpu_sum", r.name);
  for (const auto& r : ag) count_prefixed("cuda_api_gpu_sum", r.name);
  for (const auto& r : gb) count_prefixed("cuda_gpu_kern_gb_sum", r.name);
  for (const auto& r : et) count_prefixed("cuda_kern_exec_trace", r.kernel);
  for (const auto& r : es) count_prefixed("cuda_kern_exec_sum", r.kernel_name);
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
  for (const auto form : {name_form::demangled, name_form::base, name_form::mangled})
    for (const bool nvtx : {false, true}) check_kernel_reports(t, form, nvtx, label + " form " + std::to_string(static_cast<int>(form)));
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
  }
  for (const char* report : {"cuda_gpu_kern_sum", "cuda_gpu_trace", "cuda_gpu_sum", "cuda_api_gpu_sum", "cuda_gpu_kern_gb_sum", "cuda_kern_exec_trace",
                             "cuda_kern_exec_sum"}) {
    CAPTURE(report);
    CHECK(prefixed_rows[report] > 0);
  }
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

TEST_CASE("reports: the :nvtx-name variants of the six other kernel reports worked out by hand") {
  trace t;
  t.threads = {{1001, 0}, {1002, 0}};
  const auto launch = t.strings.intern("cudaLaunchKernel"), copy = t.strings.intern("cudaMemcpyAsync"), gemm = t.strings.intern("gemm");
  t.kernel_names[gemm] = {t.strings.intern("gemm_base"), 0};
  range_record fwd, async;
  fwd.start = 100, fwd.end = 400, fwd.name = t.strings.intern("fwd");                                   // push/pop on thread 0
  async.start = 500, async.end = 900, async.name = t.strings.intern("async"), async.is_push_pop = false;
  async.end_thread = 1;                                                                                  // ended on thread 1: names nothing
  t.ranges = {fwd, async};
  t.api_calls = {{120, 130, launch, 1, 0, false},  // inside fwd
                 {50, 60, launch, 2, 0, false},    // outside any range
                 {600, 610, launch, 3, 0, false},  // inside async alone
                 {200, 204, copy, 4, 0, false}};   // inside fwd: a copy keeps its name
  for (std::uint32_t i = 1; i <= 3; ++i) {
    kernel_record k;
    k.start = 1000 * i, k.end = 1000 * i + 10 * i, k.correlation = i, k.name = gemm; // 10, 20 and 30 ns
    t.kernels.push_back(k);
  }
  copy_record c;
  c.start = 1500, c.end = 1505, c.bytes = 64, c.correlation = 4, c.kind = copy_kind::host_to_device;
  t.copies = {c};
  const auto f = name_form::base;

  const auto trace_rows = cuda_gpu_trace_nvtx(t, f);
  std::vector<std::string> names;
  for (const auto& r : trace_rows) names.push_back(r.name);
  CHECK(names == std::vector<std::string>{"fwd/gemm_base", "[CUDA memcpy Host-to-Device]", "gemm_base", "gemm_base"});

  const auto gpu = cuda_gpu_sum_nvtx(t, f);
  REQUIRE(gpu.size() == 3);
  CHECK(gpu[0].name == "gemm_base");
  CHECK(gpu[0].time.total == 50); // the kernel outside any range and the one in `async`
  CHECK(gpu[1].name == "fwd/gemm_base");
  CHECK(gpu[2].name == "[CUDA memcpy Host-to-Device]");
  CHECK(cuda_gpu_sum(t, f)[0].time.total == 60); // without the variant: one row of three

  const auto both = cuda_api_gpu_sum_nvtx(t, f);
  names.clear();
  for (const auto& r : both) names.push_back(r.name);
  CHECK(names == std::vector<std::string>{"gemm_base", "cudaLaunchKernel", "fwd/gemm_base", "[CUDA memcpy Host-to-Device]", "cudaMemcpyAsync"});
  CHECK(both[2].category == operation_category::cuda_kernel);

  const auto gb = cuda_gpu_kern_gb_sum_nvtx(t, f);
  REQUIRE(gb.size() == 2);
  CHECK(gb[0].name == "gemm_base");
  CHECK(gb[0].time.count == 2);
  CHECK(gb[1].name == "fwd/gemm_base");

  const auto exec = cuda_kern_exec_trace_nvtx(t, f);
  REQUIRE(exec.size() == 3);
  CHECK(exec[0].kernel == "gemm_base"); // the call at 50
  CHECK(exec[1].kernel == "fwd/gemm_base");
  CHECK(exec[1].api_name == "cudaLaunchKernel");
  CHECK(exec[2].kernel == "gemm_base");
  const auto exec_sum = cuda_kern_exec_sum_nvtx(t, f);
  REQUIRE(exec_sum.size() == 2);
  CHECK(exec_sum[0].kernel_name == "gemm_base"); // total 1970 and 2430: average 2200
  CHECK(exec_sum[0].total.count == 2);
  CHECK(exec_sum[1].kernel_name == "fwd/gemm_base");
  CHECK(exec_sum[1].total.total == 890); // 1010 - 120

  // Through the report list, each by nsys's name: the Name column of the first row.
  const auto r = analyze(t);
  const std::vector<std::pair<std::string, std::string>> first_name = {
      {"cuda_gpu_trace:nvtx-name:base", "fwd/gemm_base"},     {"cuda_gpu_sum:nvtx-name:base", "gemm_base"},
      {"cuda_api_gpu_sum:nvtx-name:base", "gemm_base"},       {"cuda_gpu_kern_gb_sum:nvtx-name:base", "gemm_base"},
      {"cuda_kern_exec_trace:nvtx-name:base", "gemm_base"},   {"cuda_kern_exec_sum:nvtx-name:base", "gemm_base"},
      {"cuda_gpu_kern_sum:nvtx-name:base", "gemm_base"}};
  for (const auto& [report, name] : first_name) {
    CAPTURE(report);
    const auto chosen = parse_reports(report);
    REQUIRE(chosen.error.empty());
    CHECK(choice_name(chosen.reports[0]) == report);
    const auto tab = report_table(t, r, chosen.reports[0]);
    REQUIRE(tab.rows.size() > 1);
    CHECK(tab.rows[0].back() == name);
  }
  CHECK(report_table(t, r, parse_reports("cuda_gpu_trace:nvtx-name").reports[0]).rows[0].back() == "fwd/gemm");
  CHECK(report_table(t, r, parse_reports("cuda_kern_exec_trace:nvtx-name").reports[0]).rows[1].back() == "fwd/gemm");
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
  CHECK(parse_reports("cuda_gpu_trace:nvtx").error.find("takes [:nvtx-name][:base|:mangled]") != std::string::npos);
  CHECK(parse_reports("cuda_gpu_trace:base:nvtx-name").reports.at(0).nvtx_names); // nsys takes either order
  CHECK(parse_reports("cuda_kern_exec_sum:nvtx-name:nvtx-name").error.find("takes [:nvtx-name]") != std::string::npos);
  CHECK(parse_reports("cuda_api_sum:nvtx-name").error.find("cuda_api_sum takes no variant here") != std::string::npos);
  CHECK(parse_reports("nvtx_gpu_proj_trace:nvtx-name").error.find("takes no variant here") != std::string::npos);
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

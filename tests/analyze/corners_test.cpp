// The corners of the six tables where nsys's own output was checked (bench/fidelity/corners.py on
// the GPU machine, docs/analysis.md "The corners, checked against nsys"), on a hand-made trace
// whose figures are counted by hand below: one label printed by two ranges, two instances of a
// start/end range around one kernel, kernels outside every range (with and without a launch), a
// one-decimal half, and a table whose total is 0.
#include <nvscope/analysis.hpp>
#include <nvscope/export.hpp>

#include <doctest/doctest.h>

#include <string>

using namespace nvscope;

namespace {

struct builder {
  trace t;
  std::uint32_t correlation = 1;
  builder() {
    t.threads = {{100, 0}};
    t.kernel_configs.intern(kernel_config{});
    t.process_id = 7;
  }
  void range(const char* name, timestamp_ns start, timestamp_ns end, bool push_pop = true, string_id domain = 0) {
    range_record r;
    r.name = t.strings.intern(name), r.start = start, r.end = end, r.is_push_pop = push_pop, r.domain = domain;
    t.ranges.push_back(r);
  }
  void kernel(const char* name, timestamp_ns launch, timestamp_ns duration, bool launched = true) {
    if (launched) t.launches.push_back({launch, correlation, 0});
    kernel_record k;
    k.name = t.strings.intern(name), k.start = launch + 5, k.end = launch + 5 + duration, k.correlation = launched ? correlation : 999999;
    ++correlation;
    t.kernels.push_back(k);
  }
};

trace corners() {
  builder b;
  b.range(":q", 0, 100);
  b.kernel("k1", 10, 10);
  b.range("q", 200, 300, true, b.t.strings.intern(":"));
  b.kernel("k1", 210, 20);
  b.range("twice", 400, 500, false);
  b.range("twice", 410, 490, false);
  b.kernel("k2", 450, 30);
  b.kernel("k3", 600, 40); // no range open
  b.kernel("k3", 610, 50);
  b.kernel("k4", 620, 7, false); // no launch record
  b.t.finish = 1000;
  return b.t;
}

const range_kernel_row* kern_row(const analysis_report& r, const std::string& range, const std::string& kernel) {
  for (const auto& x : r.range_kernels)
    if (x.range == range && x.kernel == kernel) return &x;
  return nullptr;
}

} // namespace

TEST_CASE("corner: two ranges that print one label are one row of every NVTX table, as nsys groups them") {
  const auto r = analyze(corners());
  int rows = 0;
  for (const auto& x : r.ranges)
    if (x.range == "::q") {
      ++rows;
      CHECK(x.time.count == 2);
      CHECK(x.time.total == 100 + 100);
    }
  CHECK(rows == 1);
  rows = 0;
  for (const auto& x : r.projections)
    if (x.range == "::q") {
      ++rows;
      CHECK(x.projected.count == 2);
      CHECK(x.total_gpu_ops == 2);
    }
  CHECK(rows == 1);
  const auto* k = kern_row(r, "::q", "k1");
  REQUIRE(k != nullptr);
  CHECK(k->range_instances == 2);
  CHECK(k->time.count == 2);
  CHECK(k->time.total == 30);
}

TEST_CASE("corner: a kernel under two instances of one start/end range counts once in Kern Inst, twice in the times") {
  const auto r = analyze(corners());
  const auto* k = kern_row(r, ":twice", "k2");
  REQUIRE(k != nullptr);
  CHECK(k->style == "StartEnd");
  CHECK(k->range_instances == 2);
  CHECK(k->time.count == 1);
  CHECK(k->time.total == 60);
}

TEST_CASE("corner: kernels no range encloses make nvtx_kern_sum rows with an empty range, first; no launch: no PID, TID") {
  const auto r = analyze(corners());
  REQUIRE(r.range_kernels.size() >= 2);
  const auto& none = r.range_kernels[0]; // no launch record: no PID sorts first
  CHECK(none.range.empty());
  CHECK_FALSE(none.launched);
  CHECK(none.kernel == "k4");
  CHECK(none.time.count == 1);
  const auto& outside = r.range_kernels[1];
  CHECK(outside.range.empty());
  CHECK(outside.style.empty());
  CHECK(outside.launched);
  CHECK(outside.tid == 100);
  CHECK(outside.pid == 7);
  CHECK(outside.kernel == "k3");
  CHECK(outside.range_instances == 0);
  CHECK(outside.time.count == 2);
  CHECK(outside.time.total == 90);
  const auto csv = to_csv(r, report::nvtx_kern_sum);
  CHECK(csv.find("\n,,,,0,1,7,") != std::string::npos);      // k4: empty range, style, PID, TID
  CHECK(csv.find("\n,,7,100,0,2,90,") != std::string::npos); // k3
  CHECK(to_json(r).find("\"PID\": null, \"TID\": null") != std::string::npos);
}

TEST_CASE("corner: one-decimal figures round an exact half away from zero, as SQLite's round() in nsys's scripts") {
  CHECK(detail::fmt_f(1.25, 1) == "1.3");
  CHECK(detail::fmt_f(0.25, 1) == "0.3");
  CHECK(detail::fmt_f(0.75, 1) == "0.8");
  CHECK(detail::fmt_f(-1.25, 1) == "-1.3");
  CHECK(detail::fmt_f(2.5, 0) == "3");
  CHECK(detail::fmt_f(0.0625, 3) == "0.063");
  CHECK(detail::fmt_f(1.15, 1) == "1.1"); // 1.1499999999999999: not a half, as SQLite reads it too
  CHECK(detail::fmt_f(1.35, 1) == "1.4");
  CHECK(detail::fmt_f(1234.0, 1) == "1234.0");
  // Avg Range Lvl of four instances at levels 1, 1, 1, 2 (nsys printed 1.3 for this shape).
  builder b;
  for (timestamp_ns i = 0; i < 4; ++i) {
    const timestamp_ns at = 1000 * i;
    b.range("outer", at, at + 900);
    if (i == 3) b.range("middle", at + 10, at + 800);
    b.range("level", at + 20, at + 700);
    b.kernel("k", at + 30, 10);
  }
  b.t.finish = 5000;
  const auto r = analyze(b.t);
  bool seen = false;
  for (const auto& x : r.projections)
    if (x.range == ":level") {
      seen = true;
      CHECK(x.avg_range_level == 1.25);
    }
  CHECK(seen);
  CHECK(to_csv(r, report::nvtx_gpu_proj_sum).find(",1.0,1.3,0.0\n") != std::string::npos); // Avg GPU Ops, Avg Range Lvl, Avg Num Child
}

TEST_CASE("corner: Time (%) of a table whose total is 0 is empty (NULL in nsys), null in JSON") {
  builder b;
  b.kernel("instant", 10, 0);
  b.kernel("instant", 20, 0);
  b.t.finish = 100;
  const auto r = analyze(b.t);
  REQUIRE(r.kernels.size() == 1);
  CHECK(r.kernels[0].time.total == 0);
  CHECK(to_csv(r, report::cuda_gpu_kern_sum).find("\n,0,2,") != std::string::npos);
  CHECK(to_json(r).find("\"Time (%)\": null") != std::string::npos);
}

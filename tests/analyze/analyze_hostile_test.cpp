// Hostile input (issue 13, items 4-7): thread indexes far outside the thread table, one long
// start/end range over many short ones, pushes never popped, a very long range name. The
// size cases compare 8k with 64k ranges: linear work grows about 8x, the old quadratic
// passes grew 55-70x.
#include "scale_measure.hpp"

#include <doctest/doctest.h>
#include <nvscope/analysis.hpp>
#include <nvscope/analyze/analyze.hpp> // the engine's passes, called alone
#include <nvscope/export/table.hpp>

#include <algorithm>
#include <chrono>
#include <string>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

nvscope::range_record make_range(nvscope::trace& t, const char* name, std::uint64_t start, std::uint64_t end, std::uint32_t thread,
                                 bool push_pop) {
  nvscope::range_record r;
  r.name = t.strings.intern(name);
  r.start = start;
  r.end = end;
  r.thread = thread;
  r.is_push_pop = push_pop;
  return r;
}

void add_kernel(nvscope::trace& t, std::uint64_t launch, std::uint32_t thread, std::uint32_t corr, nvscope::string_id name) {
  t.launches.push_back({launch, corr, thread});
  nvscope::kernel_record k;
  k.name = name;
  k.start = launch + 5;
  k.end = launch + 8;
  k.correlation = corr;
  t.kernels.push_back(k);
}

// One long start/end range over n short start/end ranges, a kernel launched in each.
nvscope::trace long_start_end(std::size_t n) {
  nvscope::trace t;
  t.threads.push_back({100, 0});
  t.ranges.push_back(make_range(t, "epoch", 0, 10 * n + 10, 0, false));
  const auto k = t.strings.intern("k");
  for (std::size_t i = 0; i < n; ++i) {
    t.ranges.push_back(make_range(t, "batch", 10 * i + 1, 10 * i + 9, 0, false));
    add_kernel(t, 10 * i + 2, 0, static_cast<std::uint32_t>(i + 1), k);
  }
  return t;
}

// n pushes of `name` never popped (each inside the previous one), a kernel launched after each.
nvscope::trace never_popped_named(std::size_t n, const char* name) {
  nvscope::trace t;
  t.threads.push_back({100, 0});
  const auto k = t.strings.intern("k");
  for (std::size_t i = 0; i < n; ++i) {
    t.ranges.push_back(make_range(t, name, 10 * i, 0, 0, true));
    add_kernel(t, 10 * i + 2, 0, static_cast<std::uint32_t>(i + 1), k);
  }
  return t;
}

nvscope::trace never_popped(std::size_t n) { return never_popped_named(n, "iteration"); }
nvscope::trace never_popped_steps(std::size_t n) { return never_popped_named(n, "step"); } // a step name

// The best CPU seconds of `analyze` on make(small) and on make(large), the two interleaved over
// 7 rounds: a loaded machine (tests beside it) stretches single runs 2x, and load that comes and
// goes falls on both sizes alike. The measuring thread's CPU time: other processes do not count.
template <class Make>
std::pair<double, double> best_seconds(Make make, std::size_t small, std::size_t large) {
  const nvscope::trace t[2] = {make(small), make(large)};
  double best[2] = {1e9, 1e9};
  for (int rep = 0; rep < 7; ++rep)
    for (int i = 0; i < 2; ++i) {
      const double a = scale::thread_cpu();
      const auto r = nvscope::analyze(t[i]);
      best[i] = std::min(best[i], scale::thread_cpu() - a);
      CHECK(r.kernels.size() == 1);
    }
  return {best[0], best[1]};
}

} // namespace

TEST_CASE("thread indexes outside the thread table map through a table of the threads present") {
  for (const std::uint32_t foreign : {4294967295u, 10000000u}) {
    nvscope::trace t;
    t.threads.push_back({100, 0});
    t.ranges.push_back(make_range(t, "outer", 0, 100, foreign, true));
    t.ranges.push_back(make_range(t, "main_range", 0, 100, 0, true));
    add_kernel(t, 10, foreign, 1, t.strings.intern("k_foreign"));
    add_kernel(t, 20, 0, 2, t.strings.intern("k_main"));
    const auto r = nvscope::analyze(t); // used to throw std::bad_alloc (4294967295) or take 1.2 GB (10 million)
    REQUIRE(r.range_kernels.size() == 2);
    for (const auto& row : r.range_kernels) {
      if (row.kernel == "k_foreign") {
        CHECK(row.range == ":outer");
        CHECK(row.tid == foreign); // no thread_info: the index itself
      } else {
        CHECK(row.range == ":main_range");
        CHECK(row.tid == 100);
      }
    }
    const auto a = nvscope::attribute(t);
    CHECK(a.kernel_owner[0] == 0u);
    CHECK(a.kernel_owner[1] == 1u);
  }
}

TEST_CASE("one long start/end range over many: linear, every kernel in both ranges") {
  const auto t = long_start_end(1000);
  const auto r = nvscope::analyze(t);
  for (const auto& row : r.range_kernels) CHECK(row.time.count == 1000);
  CHECK(r.range_kernels.size() == 2);
  const auto [small, large] = best_seconds(long_start_end, 8000, 64000);
  MESSAGE("8k start/end ranges " << small << " s, 64k " << large << " s");
  CHECK(large / small < 20.0); // x8 input; the quadratic scan took x55
}

TEST_CASE("pushes never popped: closed at the trace end, nested, linear") {
  const auto t = never_popped(1000);
  const auto r = nvscope::analyze(t);
  CHECK(r.unclosed_found == 1000);
  REQUIRE(r.range_kernels.size() == 1);
  const auto& row = r.range_kernels[0];
  CHECK(row.range_instances == 1000);
  CHECK(row.time.count == 1000);            // each kernel once in "Kern Inst"
  CHECK(row.time.total == 3 * 1000 * 1001 / 2); // kernel i lies under i + 1 ranges of the name
  REQUIRE(r.projections.size() == 1);
  CHECK(r.projections[0].total_gpu_ops == 1000 * 1001 / 2);
  const auto n = nvscope::link_ranges(t);
  CHECK(n.parent[999] == 998u);
  CHECK(n.depth[999] == 999);
  const auto [small, large] = best_seconds(never_popped, 8000, 64000);
  MESSAGE("8k unclosed pushes " << small << " s, 64k " << large << " s");
  CHECK(large / small < 20.0); // x8 input; the old passes took x70 and 855 MB at 8k
}

TEST_CASE("a very long range name keeps the per-range line whole") {
  nvscope::trace t;
  t.threads.push_back({100, 0});
  const std::string name(3000, 'x');
  t.ranges.push_back(make_range(t, name.c_str(), 0, 100, 0, true));
  add_kernel(t, 10, 0, 1, t.strings.intern("k"));
  const auto text = nvscope::metrics_text(nvscope::analyze(t));
  const auto at = text.find(" range " + name + ": 1 instances");
  REQUIRE(at != std::string::npos);
  const auto line_end = text.find('\n', at);
  REQUIRE(line_end != std::string::npos);
  CHECK(text.substr(at, line_end - at).find("gap median") != std::string::npos);
  CHECK(text.compare(line_end + 1, 10, " verdict: ") == 0);
}

TEST_CASE("a step pattern is compiled once, not once a range: it costs about what the default rule costs") {
  // 20,000 push/pop ranges of 8 layer names under a step_N every 100, a kernel in each.
  nvscope::trace t;
  t.threads.push_back({100, 0});
  const auto k = t.strings.intern("k");
  const std::size_t n = 20000, per_step = 100;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t at = 100 * i;
    if (i % per_step == 0)
      t.ranges.push_back(make_range(t, ("step_" + std::to_string(i / per_step)).c_str(), at, at + 100 * per_step - 1, 0, true));
    t.ranges.push_back(make_range(t, ("layer_" + std::to_string(i % 8)).c_str(), at + 1, at + 90, 0, true));
    add_kernel(t, at + 2, 0, static_cast<std::uint32_t>(i + 1), k);
  }
  nvscope::analysis_options by_rule, by_pattern;
  by_pattern.step_pattern = "step_[0-9]+";
  auto best = [&](const nvscope::analysis_options& o) {
    double s = 1e9;
    for (int rep = 0; rep < 5; ++rep) {
      const auto a = std::chrono::steady_clock::now();
      const auto r = nvscope::analyze(t, o);
      const auto b = std::chrono::steady_clock::now();
      CHECK(r.diagnosis.steps.steps == n / per_step - 1); // both find every step_N but step_0 (it begins before the first kernel, the window's start), nothing else
      CHECK(r.diagnosis.samples.steps.size() == 1);
      s = std::min(s, std::chrono::duration<double>(b - a).count());
    }
    return s;
  };
  const double rule = best(by_rule), pattern = best(by_pattern);
  MESSAGE("analyze: default rule " << rule << " s, step pattern " << pattern << " s");
  CHECK(pattern < 3 * rule); // one regex compiled a range took about 20 times the rule's time
}

TEST_CASE("many steps and many kernel names: step outliers take memory for the time they hold, not steps x names") {
  // 6,000 steps, each a push/pop step_N around one kernel of a name of its own: a dense column
  // of per-step time for each of the 6,000 names was 6,000 x 6,000 x 8 bytes (288 MB).
  auto make = [] {
    nvscope::trace t;
    t.threads.push_back({100, 0});
    for (std::uint32_t i = 0; i < 6000; ++i) {
      const std::uint64_t at = 1000 * std::uint64_t{i};
      const bool slow = i % 1000 == 999; // a few long steps: outliers, whose growth is listed
      t.ranges.push_back(make_range(t, ("step_" + std::to_string(i)).c_str(), at, at + (slow ? 900 : 90), 0, true));
      add_kernel(t, at + 2, 0, i + 1, t.strings.intern(("kernel_" + std::to_string(i)).c_str()));
    }
    return t;
  };
  int fd[2];
  REQUIRE(pipe(fd) == 0);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) { // a child of its own, so that its peak is this analysis' alone
    const auto t = make();
    rusage before{}, after{};
    getrusage(RUSAGE_SELF, &before);
    const auto r = nvscope::analyze(t);
    getrusage(RUSAGE_SELF, &after);
    std::size_t grew = 0; // each outlier's own kernel grew from a median of 0
    for (const auto& o : r.diagnosis.steps.outliers)
      for (const auto& g : o.grew) grew += g.kind == nvscope::component_kind::kernel && g.median_ns == 0.0 && g.step_ns == 3;
    const long figures[4] = {after.ru_maxrss - before.ru_maxrss, static_cast<long>(r.diagnosis.steps.steps),
                             static_cast<long>(r.diagnosis.steps.outlier_count), static_cast<long>(grew)};
    _exit(write(fd[1], figures, sizeof figures) == static_cast<ssize_t>(sizeof figures) ? 0 : 1);
  }
  close(fd[1]);
  long figures[4] = {-1, -1, -1, -1};
  const auto got = read(fd[0], figures, sizeof figures);
  close(fd[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  REQUIRE(got == static_cast<ssize_t>(sizeof figures));
  REQUIRE(WIFEXITED(status));
  MESSAGE("analyze's peak above the trace: " << figures[0] << " KB; steps " << figures[1] << ", outliers " << figures[2] << ", their kernels listed " << figures[3]);
  CHECK(figures[1] >= 5999); // every step but perhaps the first (the window starts at the first kernel)
  CHECK(figures[2] == 6);
  CHECK(figures[3] == 6);
  CHECK(figures[0] < 64 * 1024);
}

TEST_CASE("steps pushed and never popped: one step in the per-range metrics, linear") {
  // Each "step" push encloses every later one; per-range metrics count a step enclosed by a step
  // of its own family as part of it (2 s and 600 MB at 8,000 before, x4 per doubling).
  const auto t = never_popped_steps(1000);
  const auto r = nvscope::analyze(t);
  REQUIRE(r.step_details.size() == 1);
  CHECK(r.step_details[0].range == 0u);
  CHECK(r.step_details[0].kernels == 1000);
  CHECK(r.steps == 1000); // every step range is still counted as one
  const auto [small, large] = best_seconds(never_popped_steps, 8000, 64000);
  MESSAGE("8k unclosed step pushes " << small << " s, 64k " << large << " s");
  CHECK(large / small < 20.0);
}

TEST_CASE("a step inside a step of another family stays a step of its own; of its own family, part of it") {
  nvscope::trace t;
  t.threads.push_back({100, 0});
  const auto k = t.strings.intern("k");
  // step_0 [0, 1000) holds optimizer_step [100, 200) and step_1 [300, 400); step_2 [2000, 2100) after it.
  t.ranges.push_back(make_range(t, "step_0", 0, 1000, 0, true));
  t.ranges.push_back(make_range(t, "optimizer_step", 100, 200, 0, true));
  t.ranges.push_back(make_range(t, "step_1", 300, 400, 0, true));
  t.ranges.push_back(make_range(t, "step_2", 2000, 2100, 0, true));
  std::uint32_t corr = 1;
  for (const std::uint64_t at : {10u, 110u, 310u, 2010u}) add_kernel(t, at, 0, corr++, k);
  const auto r = nvscope::analyze(t);
  std::vector<std::string> steps;
  for (const auto& s : r.step_details) steps.push_back(s.name + ":" + std::to_string(s.kernels));
  CHECK(steps == std::vector<std::string>{"step_0:3", "optimizer_step:1", "step_2:1"});
  std::string families;
  for (const auto& row : r.per_range) families += row.range + "x" + std::to_string(row.instances) + " ";
  CHECK(families.find("step_Nx2 ") != std::string::npos);
  CHECK(families.find("optimizer_stepx1 ") != std::string::npos);
}

// Nesting deeper than the 65,535 levels `attribution::depth` counts, the ranges listed neither
// parents first nor children first: the outer levels deepest first, the levels past 65,535
// outermost first. The one kernel, launched in the innermost range, reaches every level's
// projection and GPU time (an order by depth put the uncounted levels parents first: the
// outer 65,535 levels saw no kernel).
TEST_CASE("nesting past 65,535 levels, ranges in any order: the innermost range's work reaches the outermost") {
  constexpr std::uint32_t levels = 66000, counted = 65535;
  nvscope::trace t;
  t.threads.push_back({100, 0});
  auto level = [&](std::uint32_t d) { return make_range(t, "deep", 10 + d, 10 + 4 * levels - d, 0, true); };
  for (std::uint32_t d = counted; d-- > 0;) t.ranges.push_back(level(d)); // index 0: level 65,534
  for (std::uint32_t d = counted; d < levels; ++d) t.ranges.push_back(level(d));
  add_kernel(t, 10 + 2 * levels, 0, 1, t.strings.intern("k"));
  const auto x = nvscope::index_trace(t);
  REQUIRE(x.links.parent[counted] == 0u); // level 65,535 in level 65,534: a parent listed before, its own parent after
  REQUIRE(x.links.parent[1] == 2u);
  const auto p = nvscope::project_ranges(t, x);
  CHECK(std::count(p.ops.begin(), p.ops.end(), 1u) == levels); // every level holds the kernel
  const auto r = nvscope::analyze(t, x, {});
  REQUIRE(r.projections.size() == 1);
  CHECK(r.projections[0].total_gpu_ops == levels);
  const auto s = nvscope::collect_samples(t, x.links);
  REQUIRE(s.ranges_gpu.size() == 1);
  CHECK(s.ranges_gpu[0].count == levels); // each level's GPU time: the kernel's
  CHECK(*std::min_element(s.ranges_gpu[0].ns.begin(), s.ranges_gpu[0].ns.end()) == 3);
}

TEST_CASE("a kernel spanning [1, 2^64-1] (a corrupt timestamp): analysed and exported, no overflow (issue 45)") {
  // The utilization chunks' size, (window + n - 1) / n, wrapped to 0 and asked for 2^64 chunks.
  constexpr std::uint64_t last = ~std::uint64_t{0};
  for (const std::uint64_t end : {last, last - 1}) {
    nvscope::trace t;
    t.threads.push_back({100, 0});
    const auto k = t.strings.intern("k");
    t.launches.push_back({1, 1, 0});
    nvscope::kernel_record r;
    r.name = k;
    r.start = 1;
    r.end = end;
    r.correlation = 1;
    t.kernels.push_back(r);
    add_kernel(t, 100, 0, 2, k); // and an ordinary one inside it
    t.begin = 0;
    t.finish = end;
    CAPTURE(end);
    nvscope::analysis_report a;
    REQUIRE_NOTHROW(a = nvscope::analyze(t));
    REQUIRE(a.kernels.size() == 1);
    CHECK(a.kernels[0].time.count == 2);
    CHECK(a.kernels[0].time.max == end - 1);
    CHECK_FALSE(nvscope::to_text(a, t).empty());
  }
}

// The diagnosis on synthetic traces whose answer is known: class, findings, ranges named;
// the passes alone (HTA per-stream rule, launch statistics, rules, chunks, steps).

#include "scenarios.hpp"

#include <nvscope/analyze/diagnose/diagnose.hpp>
#include <nvscope/export/diagnosis_json.hpp>
#include <nvscope/export/diagnosis_text.hpp>

#include <doctest/doctest.h>
#include "test_seed.hpp"
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <random>
#include <string>

namespace {

using namespace nvscope;
using scenario::us;

std::string range_of(const trace& t, std::uint32_t r) { return r < t.ranges.size() ? std::string(t.strings[t.ranges[r].name]) : ""; }

bool names_range(const trace& t, const std::vector<range_time>& ranges, const std::string& name) {
  return std::any_of(ranges.begin(), ranges.end(), [&](const range_time& r) { return std::string(t.strings[r.name]) == name; });
}

const finding* find_kind(const diagnosis& d, finding_kind k) {
  for (const auto& f : d.verdict.findings)
    if (f.kind == k) return &f;
  return nullptr;
}

diagnosis run(const trace& t) { return diagnose(t, attribute(t)); }

} // namespace

TEST_CASE("launch-bound: many 2 us kernels, gaps between launches, named in their range") {
  const auto t = scenario::launch_bound();
  const auto d = run(t);
  CHECK(d.verdict.kind == bottleneck::launch_bound);
  REQUIRE(d.verdict.findings.size() >= 2);
  const auto& first = d.verdict.findings[0];
  CHECK(first.kind == finding_kind::launch_gaps);
  CHECK(first.todo == advice::fuse_or_graph);
  CHECK(first.share > 0.5);
  CHECK(names_range(t, first.ranges, "forward"));
  const auto* shorts = find_kind(d, finding_kind::short_kernels);
  REQUIRE(shorts != nullptr);
  CHECK(shorts->count == 600); // every 2 us kernel is shorter than its 5 us launch call
  CHECK(d.launches.call_durations_from_api);
  CHECK(d.launches.short_kernels == 600);
  CHECK(d.verdict.kernel_share == doctest::Approx(0.4).epsilon(0.05));
}

TEST_CASE("GPU-bound with the host waiting on the busy GPU: not sync-bound") {
  const auto t = scenario::gpu_bound();
  const auto d = run(t);
  CHECK(d.verdict.kind == bottleneck::gpu_bound);
  REQUIRE(!d.verdict.findings.empty());
  const auto& first = d.verdict.findings[0];
  CHECK(first.kind == finding_kind::gpu_time);
  REQUIRE(first.kernels.size() == 2);
  CHECK(std::string(t.strings[first.kernels[0].name]) == "gemm_kernel");
  CHECK(names_range(t, first.ranges, "model"));
  const auto& syncs = d.rules[static_cast<int>(rule_id::sync_call)];
  REQUIRE(syncs.matches == 10);
  for (const auto& row : syncs.rows) CHECK(row.gpu_busy_percent > 95.0); // the host waited on a busy GPU
  CHECK(range_of(t, syncs.rows[0].range) == "wait_results");
  const auto* waits = find_kind(d, finding_kind::sync_calls);
  REQUIRE(waits != nullptr);
  CHECK(waits->gpu_busy_share > 0.95);
  CHECK(waits->todo == advice::none); // waiting on the GPU's work is no sync problem
  CHECK(diagnosis_text(t, d).find("not a sync problem") != std::string::npos);
  CHECK(d.verdict.findings.size() >= 2);
  // The verdict's prose names kernels by their base name (templates and parameters are for
  // the tables): a long signature made example 04's verdict lines unreadable.
  auto named = t;
  const auto gemm = first.kernels[0].name;
  named.kernel_names[gemm].base = named.strings.intern("gemm");
  const auto text = diagnosis_text(named, d);
  CHECK(text.find("kernels: gemm ") != std::string::npos);
  CHECK(text.find("kernels: gemm_kernel") == std::string::npos);
}

TEST_CASE("sync-bound: the GPU idles while the host sits in stream syncs") {
  const auto t = scenario::sync_bound();
  const auto d = run(t);
  CHECK(d.verdict.kind == bottleneck::sync_bound);
  REQUIRE(d.verdict.findings.size() >= 2);
  CHECK(d.verdict.findings[0].kind == finding_kind::sync_gaps);
  CHECK(d.verdict.findings[0].todo == advice::drop_sync);
  CHECK(names_range(t, d.verdict.findings[0].ranges, "check_loss"));
  const auto* calls = find_kind(d, finding_kind::sync_calls);
  REQUIRE(calls != nullptr);
  CHECK(calls->count == 80);
  CHECK(names_range(t, calls->ranges, "check_loss"));
}

TEST_CASE("copy-bound from pageable memory: the rule names the call and the range") {
  const auto t = scenario::copy_bound();
  const auto d = run(t);
  CHECK(d.verdict.kind == bottleneck::copy_bound);
  REQUIRE(!d.verdict.findings.empty());
  const auto& first = d.verdict.findings[0];
  CHECK(first.kind == finding_kind::pageable_copies);
  CHECK(first.todo == advice::pinned_memory);
  CHECK(first.count == 10);
  CHECK(names_range(t, first.ranges, "load_batch"));
  const auto& rule = d.rules[static_cast<int>(rule_id::pageable_async_copy)];
  REQUIRE(rule.rows.size() == 10);
  CHECK(t.strings[rule.rows[0].call] == "cudaMemcpyAsync");
  CHECK(rule.rows[0].bytes == (64u << 20));
  CHECK(d.rules[static_cast<int>(rule_id::sync_copy)].matches == 0);
}

TEST_CASE("host-bound: host work between launches, charged to the range doing it") {
  const auto t = scenario::host_bound();
  const auto d = run(t);
  CHECK(d.verdict.kind == bottleneck::host_bound);
  REQUIRE(!d.verdict.findings.empty());
  CHECK(d.verdict.findings[0].kind == finding_kind::host_gaps);
  CHECK(d.verdict.findings[0].todo == advice::move_host_work);
  REQUIRE(!d.verdict.findings[0].ranges.empty());
  CHECK(std::string(t.strings[d.verdict.findings[0].ranges[0].name]) == "preprocess");
  CHECK(d.idle.cause_count[static_cast<int>(idle_cause::host)] == 49);
}

TEST_CASE("an outlier step: found, and what grew is its gemm") {
  const auto t = scenario::outlier_step();
  const auto d = run(t);
  CHECK(d.verdict.kind == bottleneck::gpu_bound);
  CHECK(d.steps.steps == 20);
  CHECK(d.steps.median_ns == doctest::Approx(3'000'000).epsilon(0.02));
  REQUIRE(d.steps.outlier_count == 1);
  REQUIRE(d.steps.outliers.size() == 1);
  const auto& o = d.steps.outliers[0];
  CHECK(o.ordinal == 13);
  CHECK(range_of(t, o.range) == "step_13");
  REQUIRE(!o.grew.empty());
  CHECK(o.grew[0].kind == component_kind::kernel);
  CHECK(t.strings[o.grew[0].name] == "gemm");
  CHECK(o.grew[0].median_ns == doctest::Approx(500'000));
  CHECK(o.grew[0].step_ns == 2'500'000);
  const auto* f = find_kind(d, finding_kind::outlier_steps);
  REQUIRE(f != nullptr);
  CHECK(names_range(t, f->ranges, "step_13"));
}

TEST_CASE("a step that lost records is left out of the step figures, and counted: the outlier step lossy is no outlier") {
  auto t = scenario::outlier_step();
  for (std::uint32_t r = 0; r < t.ranges.size(); ++r)
    if (range_of(t, r) == "step_13") t.lossy_steps.push_back(time_window{t.ranges[r].start, t.ranges[r].end});
  REQUIRE(t.lossy_steps.size() == 1);
  const auto d = run(t);
  CHECK(d.steps.steps == 19);
  CHECK(d.steps.lossy_steps == 1);
  REQUIRE(d.steps.lossy_ranges.size() == 1);
  CHECK(range_of(t, d.steps.lossy_ranges[0]) == "step_13");
  CHECK(d.steps.outlier_count == 0);
  CHECK(find_kind(d, finding_kind::outlier_steps) == nullptr);
  // nor compared by nvscope diff: the samples leave it out
  CHECK(d.samples.lossy_steps == 1);
  REQUIRE(d.samples.steps.size() == 1);
  CHECK(d.samples.steps[0].count == 19);
}

TEST_CASE("the empty trace: no class, no findings, words and JSON still well formed") {
  trace t;
  const auto d = run(t);
  CHECK(d.verdict.kind == bottleneck::none);
  CHECK(d.verdict.findings.empty());
  CHECK(diagnosis_text(t, d).find("no GPU activity recorded") != std::string::npos);
  const auto j = nlohmann::json::parse(diagnosis_json(t, d));
  CHECK(j["verdict"]["class"] == "none");
}

TEST_CASE("HTA per-stream rule: host wait, kernel wait below 30 ns, other") {
  scenario::builder b;
  b.kernel("a", 10 * us);     // starts 1 us after its call
  b.kernel("b", 10 * us);     // queued behind a: call ended before a's end
  b.host_work(50 * us);
  b.kernel("c", 10 * us);     // called after b ended: host wait
  auto t = b.finish();
  t.kernels[1].start = t.kernels[0].end + 20; // 20 ns gap, queued: kernel wait
  t.kernels[1].end = t.kernels[1].start + 10 * us;
  const auto d = run(t);
  REQUIRE(d.idle.streams.size() == 1);
  const auto& s = d.idle.streams[0];
  CHECK(s.operations == 3);
  CHECK(s.kernel_wait_ns == 20);
  CHECK(s.host_wait_ns == t.kernels[2].start - t.kernels[1].end);
  CHECK(s.other_ns == 0);
  CHECK(s.idle_ns == s.host_wait_ns + s.kernel_wait_ns);
}

TEST_CASE("launch statistics: call duration, delay, queue depth") {
  scenario::builder b;
  for (int i = 0; i < 5; ++i) b.kernel("k", 100 * us, 4 * us, 2 * us);
  const auto t = b.finish();
  const auto l = launch_statistics(t, attribute(t));
  REQUIRE(l.kernels.size() == 1);
  const auto& k = l.kernels[0];
  CHECK(k.launches == 5);
  CHECK(k.with_call == 5);
  CHECK(k.call_median_ns == 4 * us);
  CHECK(k.short_kernels == 0);
  CHECK(k.delay_max_ns > 300 * us); // the fifth waits for four 100 us kernels
  CHECK(k.queue_max == 4);
  CHECK(l.queue_max == 4);
}

TEST_CASE("rules: gpu_gaps threshold, low-utilisation chunks with the idle range, sync rule needs blocking kinds") {
  scenario::builder b;
  b.kernel("a", 1000 * us);
  b.push("io_wait");
  b.host_work(3000 * us);
  b.pop();
  b.kernel("b", 1000 * us);
  const auto t = b.finish();
  diagnosis_options o;
  o.gpu_gap_min_ns = 2000 * us;
  o.utilization_chunks = 10;
  const auto a = attribute(t);
  const auto idle = idle_time(t, a, o);
  const auto rules = expert_rules(t, a, idle, o);
  const auto& gaps = rules[static_cast<int>(rule_id::gpu_gap)];
  REQUIRE(gaps.matches == 1);
  CHECK(gaps.rows[0].duration > 2000 * us);
  CHECK(range_of(t, gaps.rows[0].range) == "io_wait");
  const auto& chunks = rules[static_cast<int>(rule_id::low_utilization)];
  REQUIRE(chunks.matches == 1); // consecutive low chunks coalesced into one row
  CHECK(chunks.rows[0].in_use_percent < 50.0);
  CHECK(range_of(t, chunks.rows[0].range) == "io_wait");
  CHECK(rules[static_cast<int>(rule_id::sync_call)].matches == 0);
  CHECK(rules[static_cast<int>(rule_id::sync_copy)].evaluated);
}

TEST_CASE("without API records: sync copy and memset rules not evaluated, pageable rule lists every pageable copy") {
  auto t = scenario::copy_bound(3);
  t.api_calls.clear();
  const auto d = run(t);
  CHECK_FALSE(d.rules[static_cast<int>(rule_id::sync_copy)].evaluated);
  CHECK_FALSE(d.rules[static_cast<int>(rule_id::sync_memset)].evaluated);
  CHECK(d.rules[static_cast<int>(rule_id::pageable_async_copy)].matches == 3);
  CHECK_FALSE(d.launches.call_durations_from_api);
  CHECK(d.verdict.kind == bottleneck::copy_bound);
  CHECK(diagnosis_text(t, d).find("not evaluated") != std::string::npos);
}

TEST_CASE("synchronous memcpy and memset rules read the API name") {
  scenario::builder b;
  b.copy(4096, 10 * us, nvscope::memory_kind::pinned, "cudaMemcpy");
  timestamp_ns end = 0;
  const auto c = b.call("cudaMemset", 2 * us, end);
  nvscope::memset_record m;
  m.start = end + 1000;
  m.end = m.start + 5000;
  m.bytes = 512;
  m.correlation = c;
  m.stream = 7;
  m.memory = nvscope::memory_kind::managed;
  b.t.memsets.push_back(m);
  const auto t = b.finish();
  const auto d = run(t);
  CHECK(d.rules[static_cast<int>(rule_id::sync_copy)].matches == 1);
  CHECK(d.rules[static_cast<int>(rule_id::sync_memset)].matches == 1);
  CHECK(d.rules[static_cast<int>(rule_id::pageable_async_copy)].matches == 0);
}

TEST_CASE("text and JSON carry the verdict, findings, rules, steps and samples") {
  const auto t = scenario::sync_bound(5);
  const auto d = run(t);
  const auto text = diagnosis_text(t, d);
  CHECK(text.find("sync-bound") != std::string::npos);
  CHECK(text.find("check_loss") != std::string::npos);
  CHECK(text.find("cuda_api_sync") != std::string::npos);
  const auto findings = findings_text(t, d.verdict);
  CHECK(findings.rfind(verdict_line(d.verdict) + "\n  1. GPU idle while the host synchronised", 0) == 0);
  CHECK(text.find(findings) != std::string::npos);
  const auto j = nlohmann::json::parse(diagnosis_json(t, d));
  CHECK(j["verdict"]["class"] == "sync-bound");
  CHECK(j["verdict"]["findings"][0]["kind"] == "sync_gaps");
  CHECK(j["verdict"]["findings"][0]["ranges"][0]["range"] == "check_loss");
  CHECK(j["rules"].size() == 6);
  CHECK(j["samples"]["format"] == "nvscope-samples");
  CHECK(j["samples"]["kernels"][0]["name"] == "reduce_kernel");
  CHECK(j["samples"]["kernels"][0]["ns"].size() == 20);
  CHECK(j["samples"]["steps"][0]["count"] == 5);
  for (const auto& r : j["samples"]["ranges"]) CHECK(r["name"] == "check_loss"); // no step_N groups of one
}

TEST_CASE("samples: GPU time of push/pop ranges and steps, nested ranges included") {
  scenario::builder b;
  for (int s = 0; s < 3; ++s) {
    b.push("step_" + std::to_string(s));
    b.push("forward");
    b.kernel("a", 100 * us);
    b.host_work((1 + 7 * s) * 100 * us); // the host's pace: gaps on the GPU, not GPU time
    b.push("inner");
    b.kernel("b", (200 + 10 * s) * us);
    b.pop();
    b.pop();
    b.push("idle"); // no GPU work: a host sample, no GPU sample
    b.host_work(50 * us);
    b.pop();
    b.pop();
  }
  const auto t = b.finish();
  const auto s = collect_samples(t, attribute(t));
  auto find = [](const std::vector<sample_set>& v, const std::string& name) -> const sample_set* {
    for (const auto& x : v)
      if (x.name == name) return &x;
    return nullptr;
  };
  const std::vector<std::uint64_t> expected = {300 * us, 310 * us, 320 * us}; // a + b, gaps left out
  const auto* forward = find(s.ranges_gpu, "forward");
  REQUIRE(forward != nullptr);
  CHECK(forward->ns == expected);
  REQUIRE(s.steps_gpu.size() == 1);
  CHECK(s.steps_gpu[0].ns == expected); // the step's GPU work is forward's
  CHECK(find(s.ranges_gpu, "idle") == nullptr);
  CHECK(find(s.ranges, "idle") != nullptr);
  const auto* inner = find(s.ranges_gpu, "inner");
  REQUIRE(inner != nullptr);
  CHECK(inner->ns == std::vector<std::uint64_t>{200 * us, 210 * us, 220 * us});
  const auto j = nlohmann::json::parse(samples_json(s));
  CHECK(j["ranges_gpu"].size() == 2);
  CHECK(j["steps_gpu"][0]["count"] == 3);
}

TEST_CASE("samples: thinned to evenly spaced order statistics beyond max_samples") {
  scenario::builder b;
  for (int i = 0; i < 1000; ++i) {
    b.kernel("k", (1 + i % 100) * us);
  }
  const auto t = b.finish();
  diagnosis_options o;
  o.max_samples = 100;
  const auto s = collect_samples(t, attribute(t), o);
  REQUIRE(s.kernels.size() == 1);
  CHECK(s.kernels[0].count == 1000);
  REQUIRE(s.kernels[0].ns.size() == 100);
  CHECK(std::is_sorted(s.kernels[0].ns.begin(), s.kernels[0].ns.end()));
  CHECK(s.kernels[0].ns.front() == 1 * us);
  CHECK(s.kernels[0].ns.back() == 100 * us);
  CHECK(s.kernels[0].ns[50] == 51 * us); // the median survives
}

TEST_CASE("samples are sorted as std::sort sorts them, whatever the spread of the durations") {
  const auto seed = nvscope_test::fresh_seed();
  INFO("seed " << seed); // a failure names the input
  std::mt19937_64 g(seed);
  // One radix pass (a narrow range), several (wide), all of them (64-bit values), and below
  // the comparison-sort threshold.
  for (const std::uint64_t spread : {2000ull, 50000000ull, 0ull}) {
    for (const std::size_t n : {std::size_t{1000}, std::size_t{1024}, std::size_t{30000}}) {
      std::vector<std::uint64_t> v(n);
      for (auto& x : v) x = spread ? 100 + g() % spread : g();
      auto expected = v;
      std::sort(expected.begin(), expected.end());
      nvscope::detail::sort_values(v.data(), v.data() + v.size());
      CAPTURE(spread);
      CAPTURE(n);
      CHECK(v == expected);
    }
  }
}

TEST_CASE("hostile input: foreign thread indexes, unknown names, records without an end, unclosed ranges") {
  auto t = scenario::host_bound(3);
  t.launches[0].thread = 0xffffffffu;
  t.launches[1].thread = 10'000'000;
  t.syncs.push_back(sync_record{5, 0, 99, 7, 0, 0xffffffffu, sync_kind::context});      // no end
  t.syncs.push_back(sync_record{500, 400, 98, 7, 0, 3, sync_kind::stream});             // end before start
  t.api_calls.push_back(api_record{900, 100, t.strings.intern("cudaLaunchKernel"), 3, 0, false});
  t.kernels[2].name = 123456;  // not in the string table
  t.kernels[3].end = 0;        // incomplete
  t.ranges[0].end = 0;         // never closed
  t.ranges.push_back(range_record{});
  t.ranges.back().thread = 0xfffffffeu;
  t.ranges.back().start = 1;
  const auto a = attribute(t);
  const auto d = diagnose(t, a);
  CHECK(d.launches.launches == t.kernels.size() - 1);
  CHECK(d.idle.busy_ns <= d.idle.window_ns);
  std::uint64_t idle = 0;
  for (int c = 0; c < idle_cause_count; ++c) idle += d.idle.cause_ns[c];
  CHECK(idle == d.idle.idle_ns);
  CHECK(d.verdict.kind != bottleneck::none);
  const auto j = nlohmann::json::parse(diagnosis_json(t, d));
  bool unknown = false;
  for (const auto& k : j["samples"]["kernels"]) unknown = unknown || k["name"] == "<unknown>";
  CHECK(unknown);
  CHECK(!diagnosis_text(t, d).empty());
}

TEST_CASE("idle causes add up to the idle time in every scenario") {
  for (const auto& t : {scenario::launch_bound(3), scenario::gpu_bound(3), scenario::sync_bound(3),
                        scenario::copy_bound(3), scenario::host_bound(3), scenario::outlier_step(5, 2)}) {
    const auto d = run(t);
    std::uint64_t idle = 0;
    for (int c = 0; c < idle_cause_count; ++c) idle += d.idle.cause_ns[c];
    CHECK(idle == d.idle.idle_ns);
    CHECK(d.idle.busy_ns + d.idle.idle_ns == d.idle.window_ns);
    CHECK(d.idle.kernel_ns + d.idle.copy_only_ns == d.idle.busy_ns);
  }
}

TEST_CASE("a sync followed by long host work is host time, a prompt launch after a sync is sync time") {
  scenario::builder b;
  b.kernel("a", 50 * us);
  b.sync(5 * us);
  b.push("postprocess");
  b.host_work(300 * us);
  b.pop();
  b.kernel("b", 50 * us);
  b.sync(5 * us);
  b.kernel("c", 50 * us);
  const auto t = b.finish();
  const auto d = run(t);
  REQUIRE(d.idle.stretches.size() == 2);
  CHECK(d.idle.stretches[0].cause == idle_cause::host);
  CHECK(d.idle.stretches[1].cause == idle_cause::sync);
}

TEST_CASE("the window leaves out a warm-up: its kernels, gaps and samples") {
  scenario::builder b;
  b.push("warmup");
  b.kernel("warm_kernel", 10 * us);
  b.host_work(50'000 * us); // module loading, allocation
  b.pop();
  const timestamp_ns measured = b.now;
  for (int s = 0; s < 5; ++s) {
    b.push("step_" + std::to_string(s));
    for (int i = 0; i < 4; ++i) b.kernel("gemm_kernel", 500 * us);
    b.sync(5 * us);
    b.pop();
  }
  const auto t = b.finish();
  const auto a = attribute(t);
  CHECK(diagnose(t, a).verdict.kind == bottleneck::host_bound); // the warm-up's 50 ms dominate
  diagnosis_options o;
  o.window = {measured, t.finish};
  const auto d = diagnose(t, a, o);
  CHECK(d.verdict.kind == bottleneck::gpu_bound);
  CHECK(d.idle.window_begin >= measured);
  CHECK(d.launches.launches == 20);
  CHECK(d.steps.steps == 5);
  REQUIRE(d.samples.kernels.size() == 1);
  CHECK(d.samples.kernels[0].name == "gemm_kernel");
  for (const auto& r : d.samples.ranges) CHECK(r.name != "warmup");
}

TEST_CASE("long kernel and range names are printed whole") {
  scenario::builder b;
  const std::string kernel(3000, 'k'), range = "phase_" + std::string(2000, 'r');
  b.push(range);
  for (int i = 0; i < 3; ++i) b.kernel(kernel, 2 * us);
  b.pop();
  const auto t = b.finish();
  const auto text = diagnosis_text(t, run(t));
  CHECK(text.find(kernel + "\n") != std::string::npos); // the launch table's last column
  CHECK(text.find(range + " ") != std::string::npos);
}

TEST_CASE("findings name kernels by what they are about: GPU time, short kernels, launches") {
  // examples/04 on an H200 named gemm (480 launches, most time) first under "GPU idle between
  // launches"; the kernels launched most (map_kernel, 1440) are what fusing or a graph helps.
  launch_overview l;
  launch_stats_row gemm, map, reduce;
  gemm.name = 1, gemm.launches = 480, gemm.kernel_total_ns = 16'000'000, gemm.short_kernels = 0;
  map.name = 2, map.launches = 1440, map.kernel_total_ns = 4'800'000, map.short_kernels = 10;
  reduce.name = 3, reduce.launches = 960, reduce.kernel_total_ns = 3'200'000, reduce.short_kernels = 900;
  l.kernels = {gemm, map, reduce};
  namespace dd = nvscope::detail::diag;
  const auto by_time = dd::top_kernels(l, dd::kernel_rank::time);
  const auto by_launches = dd::top_kernels(l, dd::kernel_rank::launches);
  const auto by_short = dd::top_kernels(l, dd::kernel_rank::short_kernels);
  REQUIRE(by_time.size() == 3);
  REQUIRE(by_launches.size() == 3);
  REQUIRE(by_short.size() == 3);
  CHECK(by_time[0].name == 1);
  CHECK(by_launches[0].name == 2);
  CHECK(by_launches[1].name == 3);
  CHECK(by_short[0].name == 3);
}

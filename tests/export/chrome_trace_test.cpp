// The Chrome trace parsed back, and the JSON text helpers it is written with.
#include "sample_trace.hpp"

#include <doctest/doctest.h>
#include "file_text.hpp"
#include "test_seed.hpp"
#include <nlohmann/json.hpp>
#include <nvscope/export/chrome_trace.hpp>
#include <nvscope/export/detail/json_writer.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <string>

#include <unistd.h>

TEST_CASE("JSON strings: quotes, control characters, invalid UTF-8") {
  using nvscope::detail::json_string;
  CHECK(json_string("a\"b\\c") == "\"a\\\"b\\\\c\"");
  CHECK(json_string(std::string("x\n\t\x01y", 5)) == "\"x\\n\\t\\u0001y\"");
  CHECK(json_string("caf\xc3\xa9") == "\"caf\xc3\xa9\"");      // valid UTF-8 kept
  CHECK(json_string("bad\xff") == "\"bad\\ufffd\"");           // invalid byte
  CHECK(json_string("\xc0\xaf") == "\"\\ufffd\\ufffd\"");      // overlong
  CHECK(json_string("\xed\xa0\x80") == "\"\\ufffd\\ufffd\\ufffd\""); // surrogate
  CHECK(json_string("\xe2\x82") == "\"\\ufffd\\ufffd\"");      // truncated
  // Random bytes always give JSON that parses back.
  NVSCOPE_SEEDED_RNG(std::mt19937, rng);
  for (int i = 0; i < 200; ++i) {
    std::string s(rng() % 40, '\0');
    for (auto& ch : s) ch = static_cast<char>(rng() & 0xff);
    auto j = nlohmann::json::parse(json_string(s));
    CHECK(j.is_string());
  }
}

// Arrows are Perfetto's flow binding on slices (its JSON importer's MaybeAddFlow; also read by
// chrome://tracing): "bind_id" with "flow_out" on the launch's slice, "flow_in" on the GPU
// work's, so each arrow is bound to those two slices and no other.
TEST_CASE("Chrome trace: metadata, well-formed X events, flows paired and bound") {
  auto t = sample_trace();
  auto j = nlohmann::json::parse(nvscope::to_chrome_trace(t));
  REQUIRE(j.contains("traceEvents"));
  const auto& ev = j["traceEvents"];
  std::map<std::uint64_t, int> starts, finishes;
  std::set<std::pair<std::uint64_t, std::uint64_t>> named_threads;
  std::set<std::uint64_t> named_processes;
  int kernels = 0, ranges = 0, marks = 0, copies = 0;
  for (const auto& e : ev) {
    const std::string ph = e["ph"];
    REQUIRE(e.contains("pid"));
    if (ph == "M") {
      if (e["name"] == "thread_name") named_threads.insert({e["pid"].get<std::uint64_t>(), e["tid"].get<std::uint64_t>()});
      if (e["name"] == "process_name") named_processes.insert(e["pid"].get<std::uint64_t>());
      continue;
    }
    REQUIRE(e.contains("tid"));
    REQUIRE(e.contains("ts"));
    CHECK(e["ts"].get<double>() >= 0.0);
    if (ph == "X") {
      REQUIRE(e.contains("dur"));
      CHECK(e["dur"].get<double>() >= 0.0);
      REQUIRE(e["name"].is_string());
      CHECK(named_processes.count(e["pid"].get<std::uint64_t>()) == 1);
      CHECK(named_threads.count({e["pid"].get<std::uint64_t>(), e["tid"].get<std::uint64_t>()}) == 1);
      if (e["cat"] == "kernel") ++kernels;
      if (e["cat"] == "nvtx") ++ranges;
      if (e["cat"] == "memcpy") ++copies;
      if (e.contains("bind_id")) {
        const bool out = e.value("flow_out", false), in = e.value("flow_in", false);
        CHECK(out != in);                         // a launch is a source, GPU work a destination
        CHECK(in == (e["pid"] != j["traceEvents"][0]["pid"])); // sources on the host, ends on a GPU
        CHECK((!e.contains("args") || e["args"].dump().find("correlation") == std::string::npos)); // API and launch slices have no args
        ++(out ? starts : finishes)[e["bind_id"].get<std::uint64_t>()];
      }
    } else if (ph == "i") {
      ++marks;
    } else {
      FAIL("unexpected phase " << ph);
    }
  }
  CHECK(kernels == 6);
  CHECK(copies == 1);
  CHECK(ranges == 4);
  CHECK(marks == 1);
  // 6 launches: 4 kernels and a copy of their own, a graph of two kernels: one source each,
  // one end per piece of GPU work
  CHECK(starts.size() == 6);
  for (const auto& [id, n] : starts) CHECK(n == 1);
  std::map<std::uint64_t, int> ends_expected;
  for (const auto& k : t.kernels) ++ends_expected[k.correlation];
  for (const auto& c : t.copies) ++ends_expected[c.correlation];
  CHECK(finishes == ends_expected);
  // each arrow's id is its launch's correlation, and it starts no later than it ends
  std::map<std::uint64_t, double> out_ts;
  for (const auto& e : ev)
    if (e.value("flow_out", false)) out_ts[e["bind_id"].get<std::uint64_t>()] = e["ts"].get<double>();
  for (const auto& e : ev)
    if (e.value("flow_in", false)) CHECK(out_ts.at(e["bind_id"].get<std::uint64_t>()) <= e["ts"].get<double>());
  // no arrows asked for: no flow fields, the slices otherwise the same
  nvscope::chrome_trace_options no_flows;
  no_flows.flows = false;
  const auto plain = nlohmann::json::parse(nvscope::to_chrome_trace(t, no_flows));
  REQUIRE(plain["traceEvents"].size() == ev.size());
  for (std::size_t i = 0; i < ev.size(); ++i) {
    auto e = ev[i];
    for (const char* k : {"bind_id", "flow_in", "flow_out"}) e.erase(k);
    CHECK(plain["traceEvents"][i] == e);
  }
  // timestamps: relative to the earliest (500 ns) in microseconds
  for (const auto& e : ev)
    if (e["ph"] == "X" && e["name"] == "step_3") {
      CHECK(e["ts"].get<double>() == doctest::Approx(0.5));
      CHECK(e["dur"].get<double>() == doctest::Approx(8.0));
    }
}


TEST_CASE("Chrome trace: each kernel's launch configuration from the trace's table; an unknown index reads as zeros") {
  nvscope::trace t;
  t.threads.push_back({100, 0});
  NVSCOPE_SEEDED_RNG(std::mt19937, rng);
  nvscope::kernel_config a, b;
  a.grid[0] = 1 + rng() % 100000, a.grid[1] = 1 + rng() % 7, a.grid[2] = 3;
  a.block[0] = static_cast<std::uint16_t>(32 * (1 + rng() % 32)), a.block[1] = 2, a.block[2] = 1;
  a.registers = static_cast<std::uint16_t>(1 + rng() % 255), a.shared_bytes = rng() % 200000, a.graph = 0;
  b = a;
  b.device = 1, b.graph = 1 + rng() % 1000;
  const auto ia = t.kernel_configs.intern(a), ib = t.kernel_configs.intern(b);
  REQUIRE(ia != ib);
  CHECK(t.kernel_configs.intern(a) == ia); // the same configuration: the same entry
  CHECK(t.kernel_configs.size() == 3);     // the all-zero one and two
  const std::uint32_t configs[] = {ia, ib, 999};
  for (std::uint32_t i = 0; i < 3; ++i) {
    nvscope::kernel_record k;
    k.name = t.strings.intern("kernel_" + std::to_string(i));
    k.start = 1000 * (i + 1), k.end = k.start + 500, k.correlation = i + 1, k.stream = 7, k.config = configs[i];
    t.kernels.push_back(k);
    t.launches.push_back({k.start - 100, k.correlation, 0});
  }
  const auto j = nlohmann::json::parse(nvscope::to_chrome_trace(t));
  std::map<std::string, nlohmann::json> args;
  std::map<std::string, std::uint64_t> pid;
  std::map<std::uint64_t, std::string> process;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name") process[e["pid"].get<std::uint64_t>()] = e["args"]["name"];
    if (e["ph"] == "X" && e["cat"] == "kernel") args[e["name"]] = e["args"], pid[e["name"]] = e["pid"].get<std::uint64_t>();
  }
  REQUIRE(args.size() == 3);
  const auto expect = [&](const std::string& name, const nvscope::kernel_config& c) {
    CAPTURE(name);
    const auto& x = args[name];
    CHECK(x["grid"] == nlohmann::json::array({c.grid[0], c.grid[1], c.grid[2]}));
    CHECK(x["block"] == nlohmann::json::array({c.block[0], c.block[1], c.block[2]}));
    CHECK(x["registers"] == c.registers);
    CHECK(x["shared_bytes"] == c.shared_bytes);
    CHECK(x.contains("graph") == (c.graph != 0));
    if (c.graph) CHECK(x["graph"] == c.graph);
    CHECK(process[pid[name]] == "GPU " + std::to_string(c.device));
  };
  expect("kernel_0", a);
  expect("kernel_1", b);
  expect("kernel_2", nvscope::kernel_config{}); // index 999: no such configuration
  CHECK(nvscope::device_of(t, t.kernels[1]) == 1);
  CHECK(nvscope::device_of(t, t.kernels[2]) == 0);
}

// speedscope names a Chrome-trace frame `name {args as JSON}` (its importer's keyForEvent), so
// two launches of one kernel are one frame only when their args are equal: the correlation,
// unique per launch, is the arrow's id (a top-level "bind_id", which speedscope ignores), not in args.
TEST_CASE("Chrome trace: launches of one kernel in one range are one speedscope frame; the correlation is on the arrow") {
  nvscope::trace t;
  t.process_id = 5;
  t.threads.push_back({5, 0});
  nvscope::range_record r;
  r.name = t.strings.intern("forward");
  r.start = 100, r.end = 10000;
  t.ranges.push_back(r);
  const auto launch_name = t.strings.intern("cudaLaunchKernel");
  for (std::uint32_t i = 0; i < 2; ++i) {
    const std::uint64_t at = 1000 + 3000 * i;
    t.api_calls.push_back({at, at + 20, launch_name, 10 + i, 0, false});
    t.launches.push_back({at + 10, 10 + i, 0});
    nvscope::kernel_record k;
    k.name = t.strings.intern("gemm");
    k.start = at + 500, k.end = at + 900 + 100 * i, k.correlation = 10 + i, k.stream = 7;
    t.kernels.push_back(k);
    t.launches.push_back({at + 15, 20 + i, 0});
    nvscope::copy_record c;
    c.kind = nvscope::copy_kind::host_to_device;
    c.bytes = 4096, c.start = at + 1000, c.end = at + 1200, c.correlation = 20 + i, c.stream = 7;
    t.copies.push_back(c);
  }
  for (const bool api_calls : {true, false}) {
    CAPTURE(api_calls);
    nvscope::chrome_trace_options o;
    o.api_calls = api_calls;
    const auto j = nlohmann::json::parse(nvscope::to_chrome_trace(t, o));
    std::map<std::string, std::set<std::string>> frames; // name -> speedscope's frame keys
    std::map<std::string, int> slices;
    std::set<std::uint64_t> arrow_correlations;
    for (const auto& e : j["traceEvents"]) {
      if (e["ph"] == "X") {
        const std::string name = e["name"];
        frames[name].insert(name + (e.contains("args") ? " " + e["args"].dump() : ""));
        ++slices[name];
      }
      if (e.contains("bind_id")) arrow_correlations.insert(e["bind_id"].get<std::uint64_t>());
    }
    CHECK(slices["gemm"] == 2);
    CHECK(frames["gemm"].size() == 1);
    CHECK(slices["[CUDA memcpy Host-to-Device]"] == 2);
    CHECK(frames["[CUDA memcpy Host-to-Device]"].size() == 1);
    const char* host = api_calls ? "cudaLaunchKernel" : "launch";
    CHECK(slices[host] == (api_calls ? 2 : 4));
    CHECK(frames[host].size() == 1);
    CHECK(arrow_correlations == std::set<std::uint64_t>{10, 11, 20, 21});
  }
}

// The structured writer the Chrome trace goes through (export/detail/json_writer.hpp).

namespace {

// Writes a random JSON value with `w` and builds the same value with nlohmann alongside.
nlohmann::json random_value(nvscope::detail::json_writer& w, std::mt19937& rng, int depth) {
  const auto pick = [&](unsigned n) { return static_cast<unsigned>(rng() % n); };
  const unsigned kind = depth > 4 ? 2 + pick(4) : pick(6);
  if (kind == 0 || kind == 1) {
    nlohmann::json j = kind == 0 ? nlohmann::json::object() : nlohmann::json::array();
    kind == 0 ? w.begin_object() : w.begin_array(pick(2) == 0);
    static const char* const keys[] = {"a", "b", "name", "args", "ts"};
    for (unsigned n = pick(5); n > 0; --n) {
      if (kind == 1) {
        j.push_back(random_value(w, rng, depth + 1));
        continue;
      }
      const unsigned k = pick(5);
      switch (k) { // keys are literals: one call per spelling
        case 0: w.key("a"); break;
        case 1: w.key("b"); break;
        case 2: w.key("name"); break;
        case 3: w.key("args"); break;
        default: w.key("ts");
      }
      j[keys[k]] = random_value(w, rng, depth + 1); // a repeated key: the last one wins in both
    }
    kind == 0 ? w.end_object() : w.end_array();
    return j;
  }
  if (kind == 2) {
    const std::uint64_t v = (static_cast<std::uint64_t>(rng()) << 32) | rng();
    w.value(v);
    return v;
  }
  if (kind == 3) {
    const std::int64_t v = -static_cast<std::int64_t>(rng());
    w.value(v);
    return v;
  }
  std::string s(pick(2) ? pick(20) : 1000 + pick(5000), 'x'); // long ones bypass the staging buffer
  for (auto& ch : s) ch = static_cast<char>(pick(3) ? 'a' + pick(26) : pick(256));
  w.string(s);
  return nlohmann::json::parse(nvscope::detail::json_string(s)); // the escaping json_text.hpp defines
}

} // namespace

TEST_CASE("json_writer: commas, nesting, escaping and numbers parse back as written") {
  NVSCOPE_SEEDED_RNG(std::mt19937, rng);
  for (int round = 0; round < 300; ++round) {
    nvscope::detail::json_writer w(round % 2 ? 0 : 1 << 16);
    w.begin_array(true);
    nlohmann::json expected = nlohmann::json::array();
    for (int n = 0; n < 1 + round % 7; ++n) expected.push_back(random_value(w, rng, 0));
    w.end_array();
    const std::string text = w.take();
    CAPTURE(text.substr(0, 200));
    CHECK(nlohmann::json::parse(text) == expected);
  }
}

TEST_CASE("json_writer: exact microseconds, keys, literals, one element a line") {
  nvscope::detail::json_writer w;
  w.begin_object().key("ts").microseconds(1234567).key("zero").microseconds(0).key("ok").value(true);
  w.key("list").begin_array(true).value(std::uint64_t{1}).literal("\"x\"").end_array();
  w.key("f").value(0.5).key("nan").value(std::nan("")).end_object().raw("\n");
  CHECK(w.take() == "{\"ts\":1234.567,\"zero\":0.000,\"ok\":true,\"list\":[\n1,\n\"x\"\n],\"f\":0.5,\"nan\":0}\n");
}

TEST_CASE("json_writer streamed: the sink gets the text in 1 MiB blocks; once it fails, the writer stops") {
  struct sink_state {
    std::string text;
    int calls = 0;
    int fail_at = -1; // the call that fails, or -1
  };
  auto sink = [](void* c, std::string_view block) {
    auto& s = *static_cast<sink_state*>(c);
    const bool ok = s.calls++ != s.fail_at;
    if (ok) s.text.append(block);
    return ok;
  };
  auto write_numbers = [](nvscope::detail::json_writer& w, std::string& expected) {
    w.begin_array();
    expected = "[";
    for (std::uint64_t i = 0; i < 1000000; ++i) { // ~7 MB
      w.value(i * 7919);
      expected += (i ? "," : "") + std::to_string(i * 7919);
    }
    w.end_array();
    expected += ']';
    w.finish_stream();
  };
  sink_state good;
  nvscope::detail::json_writer w;
  w.stream_to(sink, &good);
  std::string expected;
  write_numbers(w, expected);
  CHECK(good.calls >= 6);
  CHECK(good.text == expected);

  for (const int fail_at : {0, 3}) {
    CAPTURE(fail_at);
    sink_state failing;
    failing.fail_at = fail_at;
    nvscope::detail::json_writer f;
    f.stream_to(sink, &failing);
    CHECK_THROWS_AS(write_numbers(f, expected), nvscope::detail::json_writer::stream_stopped);
    CHECK(failing.calls == fail_at + 1); // no block made or offered after the failed one
    CHECK(failing.text == expected.substr(0, failing.text.size()));
  }
}

TEST_CASE("json_writer: past its reserved size the text moves once per doubling, unchanged (40 MB from 1 KiB)") {
  nvscope::detail::json_writer w(1024); // grows past 32 MiB, where the new buffer is advised huge pages
  std::string expected = "[";
  w.begin_array();
  for (std::uint64_t i = 0; i < 4000000; ++i) {
    w.value(i * 7919);
    if (i) expected += ',';
    expected += std::to_string(i * 7919);
  }
  w.end_array();
  expected += ']';
  const std::string text = w.take();
  CHECK(text.size() == expected.size());
  CHECK(text == expected);
}

namespace {
// sample_trace() and `extra` more kernels, each launched on thread 0 inside step_3 (its arrow
// and slice about 400 bytes of JSON): enough for several of the streamed writer's 1 MiB blocks.
nvscope::trace many_kernels(std::uint32_t extra) {
  auto t = sample_trace();
  const auto name = t.strings.intern("void gemm_kernel<float, 128, 64>(float const*, float*, int)");
  std::uint32_t corr = 1000;
  for (std::uint32_t i = 0; i < extra; ++i) {
    t.launches.push_back({1200 + i, corr, 0});
    nvscope::kernel_record k;
    k.name = name;
    k.start = 20000 + 10ull * i;
    k.end = k.start + 7;
    k.correlation = corr++;
    k.stream = 7;
    t.kernels.push_back(k);
  }
  return t;
}
} // namespace

TEST_CASE("write_chrome_trace streams to_chrome_trace's bytes into the file, over many blocks and none") {
  const std::string path = "nvscope_chrome_stream_test_" + std::to_string(::getpid()) + ".json";
  for (const std::uint32_t extra : {0u, 30000u}) {
    CAPTURE(extra);
    const auto t = many_kernels(extra);
    const auto a = nvscope::attribute(t);
    const auto whole = nvscope::to_chrome_trace(t, {}, a);
    if (extra) CHECK(whole.size() > (std::size_t{4} << 20)); // several 1 MiB blocks
    const auto w = nvscope::write_chrome_trace(path, t, {}, a);
    REQUIRE(w);
    CHECK(nvscope_test::file_text(path) == whole);
    nvscope::chrome_trace_options no_flows;
    no_flows.flows = false;
    REQUIRE(nvscope::write_chrome_trace(path, t, no_flows));
    CHECK(nvscope_test::file_text(path) == nvscope::to_chrome_trace(t, no_flows));
  }
  std::remove(path.c_str());
}

TEST_CASE("write_chrome_trace: a failing device gives one line naming it; the file contract holds") {
  const auto t = many_kernels(30000);
  const auto w = nvscope::write_chrome_trace("/dev/full", t);
  REQUIRE_FALSE(w);
  CHECK(w.error.find("/dev/full") != std::string::npos);
  CHECK(w.error.find("failed after 0 bytes") != std::string::npos); // the first block already refused
  CHECK(w.error.find('\n') == std::string::npos);
  // A planted link at the name is refused, not followed, and its target kept.
  const std::string target = "nvscope_chrome_link_target_" + std::to_string(::getpid());
  const std::string link = target + ".json";
  { std::ofstream(target) << "keep"; }
  REQUIRE(::symlink(target.c_str(), link.c_str()) == 0);
  const auto l = nvscope::write_chrome_trace(link, t);
  CHECK_FALSE(l);
  CHECK(l.error.find("symbolic link") != std::string::npos);
  CHECK(nvscope_test::file_text(target) == "keep");
  std::remove(link.c_str());
  std::remove(target.c_str());
}

// Exports parsed back: JSON summary, Chrome trace, folded stacks, JSON escaping.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>
#include <nvscope/export_folded.hpp>
#include <nvscope/export_json.hpp>

#include <map>
#include <random>
#include <set>
#include <string>

namespace {

nvscope::trace sample_trace() {
  nvscope::trace t;
  t.process_id = 77;
  t.threads.push_back({1001, t.strings.intern("main")});
  t.threads.push_back({1002, 0});
  auto range = [&](const char* name, std::uint64_t s, std::uint64_t e, std::uint32_t thread = 0, bool pp = true) {
    nvscope::range_record r;
    r.name = t.strings.intern(name);
    r.start = s;
    r.end = e;
    r.thread = thread;
    r.is_push_pop = pp;
    t.ranges.push_back(r);
  };
  range("step_3", 1000, 9000);
  range("layer_12", 1100, 4000);
  range("layer_13", 4000, 8000);
  range("load \"data\"\n", 500, 6000, 1, false);
  nvscope::range_record mark;
  mark.name = t.strings.intern("checkpoint");
  mark.start = mark.end = 2000;
  mark.is_mark = true;
  t.ranges.push_back(mark);
  std::uint32_t corr = 1;
  auto kernel = [&](const char* name, std::uint64_t launch, std::uint64_t s, std::uint64_t e, std::uint32_t stream) {
    t.launches.push_back({launch, corr, 0});
    nvscope::kernel_record k;
    k.name = t.strings.intern(name);
    k.start = s;
    k.end = e;
    k.correlation = corr++;
    k.stream = stream;
    t.kernels.push_back(k);
  };
  kernel("gemm", 1200, 10000, 10500, 7);
  kernel("gemm", 4100, 10600, 11000, 7);
  kernel("softmax", 4200, 11000, 11100, 13);
  kernel("outside", 9500, 12000, 12010, 7);
  // a graph launch: two kernels, one correlation
  t.launches.push_back({2500, corr, 0});
  for (int i = 0; i < 2; ++i) {
    nvscope::kernel_record k;
    k.name = t.strings.intern("graph_node");
    k.start = 13000 + 100 * static_cast<std::uint64_t>(i);
    k.end = k.start + 50;
    k.correlation = corr;
    k.stream = 7;
    t.kernels.push_back(k);
  }
  ++corr;
  t.launches.push_back({3000, corr, 0});
  nvscope::copy_record c;
  c.kind = nvscope::copy_kind::host_to_device;
  c.bytes = 4096;
  c.start = 9000;
  c.end = 9900;
  c.correlation = corr++;
  c.stream = 14;
  t.copies.push_back(c);
  nvscope::sync_record s;
  s.start = 8500;
  s.end = 9950;
  s.thread = 0;
  s.kind = nvscope::sync_kind::stream;
  t.syncs.push_back(s);
  t.lost.dropped_records = 3;
  return t;
}

} // namespace

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
  std::mt19937 rng(std::random_device{}());
  for (int i = 0; i < 200; ++i) {
    std::string s(rng() % 40, '\0');
    for (auto& ch : s) ch = static_cast<char>(rng() & 0xff);
    auto j = nlohmann::json::parse(json_string(s));
    CHECK(j.is_string());
  }
}

TEST_CASE("JSON summary parses and carries nsys column names, metrics, losses") {
  auto t = sample_trace();
  auto r = nvscope::analyze(t);
  auto j = nlohmann::json::parse(nvscope::to_json(r));
  REQUIRE(j["reports"].contains("cuda_gpu_kern_sum"));
  auto kern = j["reports"]["cuda_gpu_kern_sum"];
  REQUIRE(kern.size() == 4);
  CHECK(kern[0]["Name"] == "gemm");
  CHECK(kern[0]["Total Time (ns)"] == 900);
  CHECK(kern[0]["Instances"] == 2);
  CHECK(kern[0]["Med (ns)"] == 450.0);
  CHECK(j["reports"]["cuda_gpu_mem_size_sum"][0]["Operation"] == "[CUDA memcpy Host-to-Device]");
  CHECK(j["losses"]["dropped_records"] == 3);
  CHECK(j["warnings"].size() == 1);
  CHECK(j["verdict"].get<std::string>() == r.verdict);
  CHECK(j["metrics"]["kernels"] == 6);
  CHECK(j["steps"] == 1);
  // nvtx names with a quote and a newline survive the round trip
  bool found = false;
  for (const auto& row : j["reports"]["nvtx_sum"]) found = found || row["Range"] == "load \"data\"\n";
  CHECK(found);
}

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
    } else if (ph == "s") {
      ++starts[e["id"].get<std::uint64_t>()];
    } else if (ph == "f") {
      CHECK(e["bp"] == "e");
      ++finishes[e["id"].get<std::uint64_t>()];
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
  CHECK(starts.size() == 7); // 6 kernels + 1 copy, each with its own arrow
  CHECK(starts == finishes);
  for (const auto& [id, n] : starts) CHECK(n == 1);
  // every flow end lies at the start of a GPU slice on its track; every start inside a host slice
  for (const auto& e : ev) {
    if (e["ph"] != "f" && e["ph"] != "s") continue;
    bool bound = false;
    for (const auto& x : ev)
      if (x["ph"] == "X" && x["pid"] == e["pid"] && x["tid"] == e["tid"] && x["ts"].get<double>() <= e["ts"].get<double>() &&
          e["ts"].get<double>() <= x["ts"].get<double>() + x["dur"].get<double>())
        bound = true;
    CHECK(bound);
  }
  // timestamps: relative to the earliest (500 ns) in microseconds
  for (const auto& e : ev)
    if (e["ph"] == "X" && e["name"] == "step_3") {
      CHECK(e["ts"].get<double>() == doctest::Approx(0.5));
      CHECK(e["dur"].get<double>() == doctest::Approx(8.0));
    }
}

TEST_CASE("folded stacks: paths, stripping, step level") {
  auto t = sample_trace();
  auto parse = [](const std::string& s) {
    std::map<std::string, std::uint64_t> m;
    std::size_t pos = 0;
    while (pos < s.size()) {
      auto nl = s.find('\n', pos);
      auto line = s.substr(pos, nl - pos);
      auto sp = line.rfind(' ');
      m[line.substr(0, sp)] = std::stoull(line.substr(sp + 1));
      pos = nl + 1;
    }
    return m;
  };
  auto m = parse(nvscope::to_folded(t));
  CHECK(m["step_N;layer_N;gemm"] == 900); // layer_12 and layer_13 fold together
  CHECK(m["step_N;layer_N;softmax"] == 100);
  CHECK(m["step_N;layer_N;graph_node"] == 100);
  CHECK(m["step_N;layer_N;[CUDA memcpy Host-to-Device]"] == 900);
  CHECK(m["outside"] == 10);
  nvscope::folded_options keep;
  keep.strip_layer_numbers = false;
  keep.strip_step_numbers = false;
  m = parse(nvscope::to_folded(t, keep));
  CHECK(m["step_3;layer_12;gemm"] == 500);
  CHECK(m["step_3;layer_13;gemm"] == 400);
  nvscope::folded_options no_steps;
  no_steps.include_steps = false;
  m = parse(nvscope::to_folded(t, no_steps));
  CHECK(m["layer_N;gemm"] == 900);
  CHECK(m.count("step_N;layer_N;gemm") == 0);
  CHECK(nvscope::to_folded(nvscope::trace{}).empty());
}

// Exports of the analysis parsed back: JSON summary, folded stacks.
#include "sample_trace.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>
#include <nvscope/export/folded.hpp>
#include <nvscope/export/summary_json.hpp>

#include <map>
#include <random>
#include <set>
#include <string>

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
  CHECK(j["verdict"].get<std::string>() == nvscope::verdict_line(r.diagnosis.verdict));
  CHECK(j["verdict_kind"].get<std::string>() == nvscope::bottleneck_name(r.diagnosis.verdict.kind));
  const auto full = nlohmann::json::parse(nvscope::to_json(r, t)); // + the diagnosis nvscope diff reads
  CHECK(full["reports"] == j["reports"]);
  CHECK(full["diagnosis"]["verdict"].is_object());
  CHECK(full["diagnosis"]["samples"]["kernels"].is_array());
  CHECK(nvscope::to_text(r, t).find("** Diagnosis (nvscope):") != std::string::npos);
  CHECK(j["metrics"]["kernels"] == 6);
  CHECK(j["steps"] == 1);
  // nvtx names with a quote and a newline survive the round trip (a start/end range of the
  // default domain is ":name" in nvtx_sum, as nsys writes it)
  bool found = false;
  for (const auto& row : j["reports"]["nvtx_sum"]) found = found || row["Range"] == ":load \"data\"\n";
  CHECK(found);
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

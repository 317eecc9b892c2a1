// Exports of the analysis parsed back: JSON summary, folded stacks.
#include "sample_trace.hpp"
#include "../analyze/synthetic_trace.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>
#include <nvscope/analysis.hpp>
#include <nvscope/analyze/analyze.hpp> // the engine's passes, called alone
#include <nvscope/export/chrome_trace.hpp>
#include <nvscope/export/folded.hpp>
#include <nvscope/export/summary_json.hpp>

#include <map>
#include <random>
#include <set>
#include <stdexcept>
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

TEST_CASE("analyze and the exports take the trace's index or attribution made once, and refuse another trace's") {
  const auto t = synthetic::make_trace(20000), other = sample_trace();
  const nvscope::analysis_options o;
  const auto x = nvscope::index_trace(t, o.start_end);
  CHECK(nvscope::to_json(nvscope::analyze(t, x, o), t) == nvscope::to_json(nvscope::analyze(t, o), t));
  CHECK(nvscope::to_folded(t, {}, x.links) == nvscope::to_folded(t));
  CHECK(nvscope::to_chrome_trace(t, {}, x.links) == nvscope::to_chrome_trace(t));
  nvscope::folded_options no_steps;
  no_steps.include_steps = false;
  no_steps.strip_layer_numbers = false;
  CHECK(nvscope::to_folded(t, no_steps, x.links) == nvscope::to_folded(t, no_steps));
  // Another trace's: a clear one-line error, never a read past the end of its arrays.
  const auto a_other = nvscope::attribute(other);
  auto message_of = [](auto&& f) -> std::string {
    try {
      f();
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "no error";
  };
  const auto folded_error = message_of([&] { (void)nvscope::to_folded(t, {}, a_other); });
  CHECK(folded_error == "nvscope: to_folded: the attribution is not of this trace (pass attribute(t) of the same trace)");
  CHECK(message_of([&] { (void)nvscope::to_chrome_trace(t, {}, a_other); }).rfind("nvscope: to_chrome_trace: ", 0) == 0);
  CHECK(message_of([&] { (void)nvscope::analyze(other, x, o); }).rfind("nvscope: analyze: ", 0) == 0);
  auto x_cut = x; // right attribution, the rest of the index from another trace
  x_cut.launch_owner.pop_back();
  CHECK(message_of([&] { (void)nvscope::analyze(t, x_cut, o); }) ==
        "nvscope: analyze: the index is not of this trace (pass index_trace(t) of the same trace)");
}

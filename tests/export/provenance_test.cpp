// Provenance in every JSON output (issues 46 and 49): the summary and the Chrome trace say
// their format, nvscope's version, the process (host, pid, rank, local rank, world size, job
// ids, command line) and what the collector read (devices, driver, versions, clocks, overhead,
// clock reference); unknown fields are null, never guessed. Also writes the outputs the schema
// check validates (NVSCOPE_SCHEMA_SAMPLES names the folder).
#include "sample_trace.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>
#include <nvscope/analysis.hpp>
#include <nvscope/export/chrome_trace.hpp>
#include <nvscope/export/diagnosis_json.hpp>
#include <nvscope/export/provenance.hpp>
#include <nvscope/export/summary_json.hpp>
#include <nvscope/version.hpp>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

namespace {

// What the collector would have read on a GPU machine, written by hand.
nvscope::trace trace_with_context() {
  auto t = sample_trace();
  t.devices.push_back({0, t.strings.intern("NVIDIA H200"), t.strings.intern("GPU-01234567-89ab-cdef-0123-456789abcdef")});
  auto& c = t.context;
  c.driver = "570.124.06";
  c.cuda_driver_api = 12080;
  c.cuda_runtime = 12080;
  c.cupti_api = 26;
  c.clocks_locked = 1; // NVML said the SM clock was pinned (collect/detail/nvml_clocks.hpp)
  c.overhead_measured = true;
  c.overhead_ns = 4200;
  c.at_start = {1000, 1764648000123456789ull}; // 2025-12-02T04:00:00.123456789Z
  c.at_end = {13200, 1764648000123468989ull};
  return t;
}

nvscope::run_provenance launcher_process() {
  nvscope::run_provenance p;
  p.host = "node07";
  p.pid = 4242;
  p.rank = 5;
  p.local_rank = 1;
  p.world_size = 8;
  p.job_ids = {{"SLURM_JOB_ID", "912"}};
  p.command_line = {"python", "train.py", "--lr=3e-4"};
  return p;
}

struct env_guard { // sets a variable for one test, takes it back after
  std::string name;
  env_guard(const char* n, const char* v) : name(n) { ::setenv(n, v, 1); }
  ~env_guard() { ::unsetenv(name.c_str()); }
};

void write_sample(const char* name, const std::string& text) {
  if (const char* dir = std::getenv("NVSCOPE_SCHEMA_SAMPLES"); dir != nullptr && *dir)
    std::ofstream(std::string(dir) + "/" + name, std::ios::binary) << text;
}

} // namespace

TEST_CASE("summary: format, and provenance from the process and the collector's context") {
  const auto t = trace_with_context();
  const auto r = nvscope::analyze(t);
  const std::string text = nvscope::to_json(r, t, launcher_process());
  write_sample("summary_gpu.json", text);
  const auto j = nlohmann::json::parse(text);
  CHECK(j["format"]["name"] == "nvscope-summary");
  CHECK(j["format"]["version"] == 1);
  const auto& p = j["provenance"];
  CHECK(p["nvscope_version"] == std::to_string(NVSCOPE_VERSION_MAJOR) + "." + std::to_string(NVSCOPE_VERSION_MINOR) +
                                    "." + std::to_string(NVSCOPE_VERSION_PATCH));
  CHECK(p["host"] == "node07");
  CHECK(p["pid"] == 4242);
  CHECK(p["rank"] == 5);
  CHECK(p["local_rank"] == 1);
  CHECK(p["world_size"] == 8);
  CHECK(p["job_ids"]["SLURM_JOB_ID"] == "912");
  CHECK(p["command_line"] == nlohmann::json::array({"python", "train.py", "--lr=3e-4"}));
  CHECK(p["start_time_utc"] == "2025-12-02T04:00:00.123456789Z");
  REQUIRE(p["devices"].size() == 1);
  CHECK(p["devices"][0]["name"] == "NVIDIA H200");
  CHECK(p["devices"][0]["uuid"] == "GPU-01234567-89ab-cdef-0123-456789abcdef");
  CHECK(p["driver_version"] == "570.124.06");
  CHECK(p["cuda_driver_api_version"] == 12080);
  CHECK(p["cuda_runtime_version"] == 12080);
  CHECK(p["cupti_api_version"] == 26);
  CHECK(p["clocks_locked"] == true);
  CHECK(p["collector_overhead_ns"] == 4200);
  CHECK(p["clock_start"]["trace_ns"] == 1000);
  CHECK(p["clock_start"]["wall_ns"] == 1764648000123456789ull);
  CHECK(p["clock_end"]["trace_ns"] == 13200);
}

TEST_CASE("diagnosis JSON: its format named and versioned, alone and inside the summary") {
  const auto t = trace_with_context();
  const auto r = nvscope::analyze(t);
  const std::string text = nvscope::diagnosis_json(t, r.diagnosis);
  write_sample("diagnosis_gpu.json", text);
  const auto j = nlohmann::json::parse(text);
  CHECK(j["format"]["name"] == "nvscope-diagnosis");
  CHECK(j["format"]["version"] == nvscope::diagnosis_format_version);
  CHECK(j["format"]["version"] == 1);
  CHECK(j["samples"]["format"] == "nvscope-samples"); // the samples keep their own, as diff reads them
  const auto summary = nlohmann::json::parse(nvscope::to_json(r, t, launcher_process()));
  CHECK(summary["diagnosis"] == j);
}

TEST_CASE("summary of a trace made without a GPU: device, driver, versions and clocks are null, not invented") {
  const auto t = sample_trace();
  const auto r = nvscope::analyze(t);
  const std::string text = nvscope::to_json(r, t);
  write_sample("summary_cpu.json", text);
  const auto p = nlohmann::json::parse(text)["provenance"];
  for (const char* key : {"devices", "driver_version", "cuda_driver_api_version", "cuda_runtime_version",
                          "cupti_api_version", "clocks_locked", "collector_overhead_ns", "clock_start", "clock_end",
                          "start_time_utc"}) {
    INFO(key);
    REQUIRE(p.contains(key));
    CHECK(p[key].is_null());
  }
  CHECK(p["pid"] == static_cast<long long>(::getpid()));
  char host[256] = {};
  REQUIRE(::gethostname(host, sizeof host - 1) == 0);
  CHECK(p["host"] == host);
  CHECK_FALSE(p["command_line"].empty()); // this test program's own argv
}

TEST_CASE("process_provenance reads rank, local rank, world size and every launcher's job id") {
  env_guard a("RANK", "3"), b("LOCAL_RANK", "1"), c("WORLD_SIZE", "4"), d("TORCHELASTIC_RUN_ID", "abc"),
      e("SLURM_JOB_ID", "77");
  const auto p = nvscope::process_provenance();
  CHECK(p.rank == 3);
  CHECK(p.local_rank == 1);
  CHECK(p.world_size == 4);
  REQUIRE(p.job_ids.size() == 2);
  CHECK(p.job_ids[0] == std::make_pair(std::string("SLURM_JOB_ID"), std::string("77")));
  CHECK(p.job_ids[1] == std::make_pair(std::string("TORCHELASTIC_RUN_ID"), std::string("abc")));
}

TEST_CASE("process_provenance: each launcher's own variables (Slurm srun, Open MPI mpirun, MPICH/Hydra, torchrun)") {
  struct launcher {
    const char* name;
    std::vector<std::pair<const char*, const char*>> env;
    long long rank, local_rank, world_size;
    const char* job_variable; // nullptr: the launcher sets none
  };
  const std::vector<launcher> launchers = {
      {"srun", {{"SLURM_PROCID", "5"}, {"SLURM_LOCALID", "1"}, {"SLURM_NTASKS", "8"}, {"SLURM_JOB_ID", "4711"}}, 5, 1, 8, "SLURM_JOB_ID"},
      {"mpirun (Open MPI)", {{"OMPI_COMM_WORLD_RANK", "6"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "2"}, {"OMPI_COMM_WORLD_SIZE", "16"}}, 6, 2, 16, nullptr},
      {"mpiexec (MPICH/Hydra)", {{"PMI_RANK", "7"}, {"MPI_LOCALRANKID", "3"}, {"PMI_SIZE", "12"}}, 7, 3, 12, nullptr},
      {"torchrun", {{"RANK", "9"}, {"LOCAL_RANK", "0"}, {"WORLD_SIZE", "10"}, {"TORCHELASTIC_RUN_ID", "run-1"}}, 9, 0, 10, "TORCHELASTIC_RUN_ID"},
  };
  for (const auto& l : launchers) {
    INFO(l.name);
    std::vector<std::unique_ptr<env_guard>> set;
    for (const auto& [k, v] : l.env) set.push_back(std::make_unique<env_guard>(k, v));
    const auto p = nvscope::process_provenance();
    CHECK(p.rank == l.rank);
    CHECK(p.local_rank == l.local_rank);
    CHECK(p.world_size == l.world_size);
    if (l.job_variable == nullptr) CHECK(p.job_ids.empty());
    else {
      REQUIRE(p.job_ids.size() == 1);
      CHECK(p.job_ids[0].first == l.job_variable);
    }
  }
}

TEST_CASE("process_provenance: LOCAL_RANK alone is the local rank, not the rank; a word is not a number") {
  env_guard a("LOCAL_RANK", "2"), b("RANK", "two");
  const auto p = nvscope::process_provenance();
  CHECK(p.rank == -1);
  CHECK(p.local_rank == 2);
}

TEST_CASE("summary: each step's start and end on the trace clock, with its GPU busy time") {
  const auto t = sample_trace();
  const auto r = nvscope::analyze(t);
  const auto steps = nlohmann::json::parse(nvscope::to_json(r, t))["step_times"];
  REQUIRE(steps.size() == 1); // step_3, 1000 to 9000 on its host thread
  REQUIRE(r.step_details.size() == 1);
  CHECK(steps[0]["name"] == "step_3");
  CHECK(steps[0]["start_ns"] == 1000);
  CHECK(steps[0]["end_ns"] == 9000);
  CHECK(steps[0]["kernels"] == r.step_details[0].kernels); // the export writes the analysis' figures
  CHECK(steps[0]["gpu_busy_ns"] == r.step_details[0].activity.busy_ns);
}

TEST_CASE("Chrome trace: otherData says its format and provenance; the devices name the GPU process") {
  const auto t = trace_with_context();
  const auto p = launcher_process();
  nvscope::chrome_trace_options o;
  o.provenance = &p;
  const std::string text = nvscope::to_chrome_trace(t, o);
  write_sample("trace_gpu.trace.json", text);
  write_sample("trace_cpu.trace.json", nvscope::to_chrome_trace(sample_trace()));
  const auto j = nlohmann::json::parse(text);
  CHECK(j["otherData"]["producer"] == "nvscope");
  CHECK(j["otherData"]["format"]["name"] == "nvscope-chrome-trace");
  CHECK(j["otherData"]["format"]["version"] == 1);
  CHECK(j["otherData"]["provenance"]["rank"] == 5);
  CHECK(j["otherData"]["provenance"]["devices"][0]["uuid"] == "GPU-01234567-89ab-cdef-0123-456789abcdef");
  CHECK(j["otherData"]["provenance"]["clock_start"]["wall_ns"] == 1764648000123456789ull);
  // "ts" counts from time_origin_ns: the first gemm (10000 to 10500 ns on the trace clock)
  const auto origin = j["otherData"]["time_origin_ns"].get<std::uint64_t>();
  bool found = false;
  for (const auto& e : j["traceEvents"])
    if (e.value("name", "") == "gemm" && !found) {
      found = true;
      CHECK(origin + static_cast<std::uint64_t>(std::llround(e["ts"].get<double>() * 1000.0)) == 10000);
      CHECK(std::llround(e["dur"].get<double>() * 1000.0) == 500);
    }
  CHECK(found);
}

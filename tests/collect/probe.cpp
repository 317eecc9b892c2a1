// A known program for process-level checks of the collector (bench/collect/run.sh):
//   collector_probe                  the workload, collected; prints a per-kernel table
//   collector_probe --csv FILE       ... and writes name,instances,median_ns to FILE
//   collector_probe --plain          the workload, not collected (to run under nsys)
//   collector_probe --no-stop        starts a collector that is never stopped, then exits
// Under ncu or compute-sanitizer the collector must refuse in one line and the program must
// still finish its work correctly (exit 0).
#include <nvscope/collector.hpp>

#include "workloads.hpp"

#include <nvtx3/nvtx3.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace {

int workload() {
  // Three spin lengths (distinct, stable durations) and a real kernel, inside ranges.
  const long long cycles[] = {20000, 80000, 200000};
  const int reps = 50;
  for (int step = 0; step < reps; ++step) {
    nvtx3::scoped_range r{"step"};
    for (long long c : cycles) {
      std::string e = wl::spin(c);
      if (!e.empty()) {
        std::fprintf(stderr, "probe: %s\n", e.c_str());
        return 1;
      }
    }
  }
  std::string e = wl::check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  if (!e.empty()) {
    std::fprintf(stderr, "probe: %s\n", e.c_str());
    return 1;
  }
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("SKIP: no CUDA device\n");
    return 77;
  }
  std::string csv;
  bool plain = false, no_stop = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--csv") == 0 && i + 1 < argc) csv = argv[++i];
    else if (std::strcmp(argv[i], "--plain") == 0) plain = true;
    else if (std::strcmp(argv[i], "--no-stop") == 0) no_stop = true;
    else {
      std::fprintf(stderr, "probe: unknown argument '%s'\n", argv[i]);
      return 2;
    }
  }
  if (plain) return workload();
  if (no_stop) {
    static nvscope::collector forgotten; // destroyed after exit began: must touch no CUDA
    if (!forgotten.start()) return 1;
    if (workload() != 0) return 1;
    std::printf("probe: exiting without stop()\n");
    return 0;
  }
  nvscope::collector c;
  const bool collecting = c.start();
  std::printf("probe: collector %s\n", collecting ? "started" : "refused (program runs on un-collected)");
  if (workload() != 0) return 1;
  nvtxRangePushA("plain_push_a");
  nvtxRangePop();
  nvtxMarkA("plain_mark");
  { nvtx3::scoped_range r{"cpp_scoped"}; }
  if (!collecting) return 0;
  c.stop();
  const auto& t = c.result();
  std::map<std::string, std::vector<double>> by_name;
  for (const auto& k : t.kernels) by_name[std::string(t.strings[k.name])].push_back(static_cast<double>(k.end - k.start));
  std::FILE* f = csv.empty() ? nullptr : std::fopen(csv.c_str(), "w");
  if (!csv.empty() && f == nullptr) {
    std::fprintf(stderr, "probe: cannot write %s\n", csv.c_str());
    return 1;
  }
  if (f != nullptr) std::fprintf(f, "name,instances,median_ns\n");
  for (auto& kv : by_name) {
    auto& v = kv.second;
    std::sort(v.begin(), v.end());
    const double med = v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
    std::printf("probe: %-50s %6zu  median %10.0f ns\n", kv.first.c_str(), v.size(), med);
    if (f != nullptr) std::fprintf(f, "\"%s\",%zu,%.1f\n", kv.first.c_str(), v.size(), med);
  }
  std::printf("probe: %zu ranges, %llu dropped, %llu records not decoded, %llu decoded\n",
              t.ranges.size(), static_cast<unsigned long long>(t.lost.dropped_records),
              static_cast<unsigned long long>(c.stats().records_not_decoded),
              static_cast<unsigned long long>(c.stats().records_decoded));
  const char* inj = std::getenv("NVTX_INJECTION64_PATH");
  std::printf("probe: NVTX_INJECTION64_PATH=%s, NVTX initialised without a tool: %d\n", inj ? inj : "(unset)",
              nvscope::detail::nvtx_initialised_without_tool() ? 1 : 0);
  for (const auto& r : t.ranges) std::printf("probe: range '%s'\n", std::string(t.strings[r.name]).c_str());
  if (f != nullptr) std::fclose(f);
  return 0;
}

/* The corners of the six tables where nvscope's reading of nsys's report scripts could differ
 * from nsys itself (issue 48, "to the letter in the corners too"), each provoked on purpose so
 * that bench/fidelity/corners.py can set nsys's rows beside nvscope's:
 *   1. one-decimal figures on a half: Avg Range Lvl, Avg GPU Ops and Avg Num Child of 1.25
 *      (four instances: 1, 1, 1, 2), where printf rounds half to even and SQLite's round()
 *      half away from zero;
 *   2. a kernel launched outside every range (nvtx_kern_sum's outer join);
 *   3. push/pop ranges inside a start/end range and a start/end range inside a push/pop range
 *      on one thread (the nesting of nvtx_gpu_proj_sum);
 *   4. two ranges that print the same label: `:q` in the default domain and `q` in a domain
 *      named `:` (grouping by label or by domain and name);
 *   6. two instances of one start/end range open around the same kernel (Kern Inst).
 * Corners 5, 7 and 8 need two NVTX events on one thread at the same nanosecond or a table
 * whose total time is 0, which real timestamps never give; corners.py says so.
 * --plain runs it (under nsys); --collect PREFIX runs it under nvscope's collector and writes
 * the six reports as PREFIX_<report>.csv, as bench/fidelity/workload.cu does.
 */
#define NVSCOPE_IMPLEMENTATION // this program's one file with the analysis definitions (docs/analysis.md, "Building")
#include <nvscope/analysis.hpp>
#include <nvscope/collector.hpp>
#include <nvscope/export.hpp>

#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#define CORNER_CHECK(call)                                                                                  \
  do {                                                                                                      \
    cudaError_t e_ = (call);                                                                                \
    if (e_ != cudaSuccess) {                                                                                \
      std::fprintf(stderr, "corners: %s failed: %s (%s:%d)\n", #call, cudaGetErrorString(e_), __FILE__, __LINE__); \
      std::exit(1);                                                                                         \
    }                                                                                                       \
  } while (0)

__global__ void corner_touch(int* p) { p[threadIdx.x] += 1; }
__global__ void corner_lonely(int* p) { p[threadIdx.x] += 2; }

namespace {

int* buffer = nullptr;

void touch() {
  corner_touch<<<1, 32>>>(buffer);
  CORNER_CHECK(cudaGetLastError());
}

// Corner 1: levels 1, 1, 1, 2 (Avg Range Lvl 1.25), GPU ops 1, 1, 1, 2 (Avg GPU Ops 1.25),
// children 1, 1, 1, 2 (Avg Num Child 1.25).
void halves() {
  for (int i = 0; i < 4; ++i) {
    nvtxRangePushA("c1_outer");
    if (i == 3) nvtxRangePushA("c1_middle");
    nvtxRangePushA("c1_level");
    touch();
    nvtxRangePop();
    if (i == 3) nvtxRangePop();
    nvtxRangePop();
  }
  for (int i = 0; i < 4; ++i) {
    nvtxRangePushA("c1_ops");
    touch();
    if (i == 3) touch();
    nvtxRangePop();
  }
  for (int i = 0; i < 4; ++i) {
    nvtxRangePushA("c1_parent");
    for (int c = 0; c < (i == 3 ? 2 : 1); ++c) {
      nvtxRangePushA("c1_child");
      touch();
      nvtxRangePop();
    }
    nvtxRangePop();
  }
}

// Corner 2: a kernel with no range open anywhere.
void outside() {
  corner_lonely<<<1, 32>>>(buffer);
  CORNER_CHECK(cudaGetLastError());
}

// Corner 3: push/pop inside start/end, start/end inside push/pop, on this thread.
void mixed_nesting() {
  const nvtxRangeId_t outer = nvtxRangeStartA("c3_se_outer");
  nvtxRangePushA("c3_pp_inner");
  touch();
  nvtxRangePop();
  nvtxRangeEnd(outer);
  nvtxRangePushA("c3_pp_outer");
  const nvtxRangeId_t inner = nvtxRangeStartA("c3_se_inner");
  touch();
  nvtxRangeEnd(inner);
  nvtxRangePop();
}

// Corner 4: `:q` in the default domain, `q` in the domain named `:`.
void same_label() {
  nvtxRangePushA(":q");
  touch();
  nvtxRangePop();
  const nvtxDomainHandle_t colon = nvtxDomainCreateA(":");
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = "q";
  nvtxDomainRangePushEx(colon, &a);
  touch();
  nvtxDomainRangePop(colon);
}

// Corner 6: two instances of one start/end range around one kernel.
void twice_open() {
  const nvtxRangeId_t a = nvtxRangeStartA("c6_twice");
  const nvtxRangeId_t b = nvtxRangeStartA("c6_twice");
  touch();
  nvtxRangeEnd(a);
  nvtxRangeEnd(b);
}

int run() {
  CORNER_CHECK(cudaMalloc(&buffer, 32 * sizeof(int)));
  CORNER_CHECK(cudaMemset(buffer, 0, 32 * sizeof(int)));
  CORNER_CHECK(cudaDeviceSynchronize());
  halves();
  outside();
  mixed_nesting();
  same_label();
  twice_open();
  CORNER_CHECK(cudaDeviceSynchronize());
  int host[32];
  CORNER_CHECK(cudaMemcpy(host, buffer, sizeof host, cudaMemcpyDeviceToHost));
  CORNER_CHECK(cudaFree(buffer));
  // corner_touch ran 4 + 5 + 5 + 2 + 2 + 1 = 19 times, corner_lonely once: every element 21.
  for (int v : host)
    if (v != 21) {
      std::fprintf(stderr, "corners: an element is %d, want 21\n", v);
      return 1;
    }
  return 0;
}

int collect(const std::string& prefix) {
  nvscope::collector c;
  if (!c.start()) {
    std::fprintf(stderr, "corners: the collector did not start (see the line above)\n");
    return 1;
  }
  if (run() != 0) return 1;
  c.stop();
  const auto report = nvscope::analyze(c.result());
  for (auto which : nvscope::all_reports) {
    const std::string path = prefix + "_" + nvscope::report_name(which) + ".csv";
    const auto w = nvscope::write_file(path, nvscope::to_csv(report, which));
    if (!w) {
      std::fprintf(stderr, "%s\n", w.error.c_str());
      return 1;
    }
  }
  std::printf("corners: %zu kernels collected, tables written to %s_*.csv\n", c.result().kernels.size(), prefix.c_str());
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("corners: no CUDA device; nothing run\n");
    return 77;
  }
  if (argc == 2 && std::strcmp(argv[1], "--plain") == 0) return run();
  if (argc == 3 && std::strcmp(argv[1], "--collect") == 0) return collect(argv[2]);
  std::fprintf(stderr, "usage: fidelity_corners --plain | --collect PREFIX\n");
  return 2;
}

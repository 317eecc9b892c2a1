/* The fidelity workload (issue 9): one varied CUDA program run once under
 * `nsys profile --trace=cuda,nvtx` (with --plain) and once under nvscope's collector (with
 * --collect DIR, which writes the six nsys reports as DIR_<report>.csv, the names nsys stats
 * gives them), so that compare.py can join the tables row by row on nsys's own keys;
 * --reports PREFIX LIST writes any of nsys's reports nvscope computes, for compare_reports.py;
 * --recipes PREFIX LIST the recipes (export/recipes.hpp), for compare_recipes.py.
 *
 * It has what real programs have: two threads with their own streams, a CUDA graph, pinned
 * and pageable copies both ways, device-to-device copies, memsets, stream and device syncs,
 * templated, namespaced, anonymous-namespace and bf16 kernels, nested push/pop ranges, a
 * custom domain, marks, and start/end ranges (one opened on the main thread and ended on the
 * worker while main keeps launching). Every count is fixed, so the tables are comparable.
 */
#define NVSCOPE_IMPLEMENTATION // this program's one file with the analysis definitions (docs/analysis.md, "Building")
#include <nvscope/analysis.hpp>
#include <nvscope/collector.hpp>
#include <nvscope/export.hpp>
#include <nvscope/export/recipes.hpp>

#include <cuda_bf16.h>
#include <cuda_runtime_api.h>
#include <nvtx3/nvtx3.hpp>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#define FID_CHECK(call)                                                                            \
  do {                                                                                             \
    cudaError_t fid_err_ = (call);                                                                 \
    if (fid_err_ != cudaSuccess) {                                                                 \
      std::fprintf(stderr, "fidelity: %s failed: %s (%s:%d)\n", #call, cudaGetErrorString(fid_err_), \
                   __FILE__, __LINE__);                                                            \
      std::exit(1);                                                                                \
    }                                                                                              \
  } while (0)

template <typename T, int N>
__global__ void axpy_t(T* y, const T* x, T a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  for (int r = 0; r < N; ++r)
    if (i < n) y[i] = a * x[i] + y[i];
}

template <int N>
__global__ void tmpl_spin(long long cycles) {
  long long start = clock64();
  while (clock64() - start < cycles * N) {
  }
}

template <typename T, bool Accumulate>
__global__ void bias_kernel(T* out, const T* bias, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = Accumulate ? out[i] + bias[i % 64] : bias[i % 64];
}

namespace fid {
__global__ void scale_kernel(float* y, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] *= s;
}
} // namespace fid

namespace {
__global__ void anon_kernel(int n) {
  if (threadIdx.x == 0 && blockIdx.x == 0 && n < 0) printf("never\n");
}
} // namespace

__global__ void encoder_forward_kernel(__nv_bfloat16* out, const int* tokens, const __nv_bfloat16* table, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = table[tokens[i] & 63];
}

struct fidelity_domain {
  static constexpr const char* name = "fidelity";
};

namespace {

constexpr int n = 1 << 20;
constexpr int steps = 8;
constexpr unsigned blocks = (n + 255) / 256;

struct buffers {
  float* x = nullptr;
  float* y = nullptr;
  float* bias = nullptr;
  __nv_bfloat16* table = nullptr;
  __nv_bfloat16* enc = nullptr;
  int* tokens = nullptr;
  float* pinned = nullptr;
  std::vector<float> pageable;
};

buffers allocate() {
  buffers b;
  FID_CHECK(cudaMalloc(&b.x, n * sizeof(float)));
  FID_CHECK(cudaMalloc(&b.y, n * sizeof(float)));
  FID_CHECK(cudaMalloc(&b.bias, 64 * sizeof(float)));
  FID_CHECK(cudaMalloc(&b.table, 64 * sizeof(__nv_bfloat16)));
  FID_CHECK(cudaMalloc(&b.enc, n * sizeof(__nv_bfloat16)));
  FID_CHECK(cudaMalloc(&b.tokens, n * sizeof(int)));
  FID_CHECK(cudaMallocHost(&b.pinned, n * sizeof(float)));
  b.pageable.assign(n, 1.0f);
  for (int i = 0; i < n; ++i) b.pinned[i] = static_cast<float>(i % 97);
  return b;
}

void release(buffers& b) {
  FID_CHECK(cudaFree(b.x));
  FID_CHECK(cudaFree(b.y));
  FID_CHECK(cudaFree(b.bias));
  FID_CHECK(cudaFree(b.table));
  FID_CHECK(cudaFree(b.enc));
  FID_CHECK(cudaFree(b.tokens));
  FID_CHECK(cudaFreeHost(b.pinned));
}

cudaGraphExec_t make_graph(buffers& b, cudaStream_t s) {
  cudaGraph_t g = nullptr;
  cudaGraphExec_t exec = nullptr;
  FID_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  axpy_t<float, 1><<<blocks, 256, 0, s>>>(b.y, b.x, 0.5f, n);
  fid::scale_kernel<<<blocks, 256, 0, s>>>(b.y, 0.99f, n);
  tmpl_spin<2><<<1, 32, 0, s>>>(5000);
  FID_CHECK(cudaStreamEndCapture(s, &g));
  FID_CHECK(cudaGraphInstantiate(&exec, g, 0));
  FID_CHECK(cudaGraphDestroy(g));
  return exec;
}

// One main-thread step: nested ranges, copies both ways, memsets, a graph, a sync.
void main_step(int step, buffers& b, cudaStream_t s, cudaGraphExec_t graph) {
  char name[32];
  std::snprintf(name, sizeof name, "step_%d", step);
  nvtx3::scoped_range step_range{name};
  {
    nvtx3::scoped_range copies{"copies"};
    FID_CHECK(cudaMemcpy(b.x, b.pageable.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    FID_CHECK(cudaMemcpyAsync(b.y, b.pinned, n * sizeof(float), cudaMemcpyHostToDevice, s));
    FID_CHECK(cudaMemsetAsync(b.tokens, step, n * sizeof(int), s));
    FID_CHECK(cudaMemset(b.enc, 0, n * sizeof(__nv_bfloat16)));
  }
  {
    nvtx3::scoped_range forward{"forward"};
    for (int layer = 0; layer < 3; ++layer) {
      nvtx3::scoped_range l{"layer"};
      axpy_t<float, 4><<<blocks, 256, 0, s>>>(b.y, b.x, 2.0f, n);
      bias_kernel<float, true><<<blocks, 256, 0, s>>>(b.y, b.bias, n);
      encoder_forward_kernel<<<blocks, 256, 0, s>>>(b.enc, b.tokens, b.table, n);
      tmpl_spin<3><<<1, 32, 0, s>>>(20000);
    }
    FID_CHECK(cudaGetLastError());
  }
  {
    nvtx3::scoped_range_in<fidelity_domain> g{"graph"};
    FID_CHECK(cudaGraphLaunch(graph, s));
  }
  nvtx3::mark("step_end");
  FID_CHECK(cudaMemcpyAsync(b.pinned, b.y, n * sizeof(float), cudaMemcpyDeviceToHost, s));
  FID_CHECK(cudaMemcpyAsync(b.x, b.y, n * sizeof(float), cudaMemcpyDeviceToDevice, s));
  FID_CHECK(cudaStreamSynchronize(s));
  FID_CHECK(cudaMemcpy(b.pageable.data(), b.y, n * sizeof(float), cudaMemcpyDeviceToHost));
}

// The worker: its own stream and ranges; ends the start/end range main opened.
void worker(buffers& b, nvtxRangeId_t handoff, std::atomic<int>& phase) {
  cudaStream_t s = nullptr;
  FID_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  for (int i = 0; i < 6; ++i) {
    nvtx3::scoped_range w{"worker_iter"};
    anon_kernel<<<1, 32, 0, s>>>(i);
    bias_kernel<float, false><<<blocks, 256, 0, s>>>(b.y, b.bias, n);
    tmpl_spin<1><<<1, 32, 0, s>>>(40000);
    FID_CHECK(cudaGetLastError());
    if (i == 2) {
      while (phase.load() < 1) std::this_thread::yield();
      nvtxRangeEnd(handoff);
    }
  }
  FID_CHECK(cudaStreamSynchronize(s));
  FID_CHECK(cudaStreamDestroy(s));
}

int workload() {
  buffers b = allocate();
  cudaStream_t s = nullptr;
  FID_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaGraphExec_t graph = make_graph(b, s);
  FID_CHECK(cudaDeviceSynchronize());

  const nvtxRangeId_t epoch = nvtxRangeStartA("epoch");
  const nvtxRangeId_t handoff = nvtxRangeStartA("handoff");
  std::atomic<int> phase{0};
  std::thread w(worker, std::ref(b), handoff, std::ref(phase));
  for (int step = 0; step < steps; ++step) {
    main_step(step, b, s, graph);
    if (step == 1) phase.store(1);
  }
  w.join();
  nvtxRangeEnd(epoch);
  FID_CHECK(cudaDeviceSynchronize());
  FID_CHECK(cudaGraphExecDestroy(graph));
  FID_CHECK(cudaStreamDestroy(s));
  release(b);
  return 0;
}

int collect(const std::string& prefix) {
  nvscope::collector c;
  if (!c.start()) {
    std::fprintf(stderr, "fidelity: the collector did not start (see the line above)\n");
    return 1;
  }
  workload();
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
  for (const auto& line : nvscope::warning_lines(report)) std::fprintf(stderr, "fidelity: warning: %s\n", line.c_str());
  std::printf("fidelity: %zu kernels collected, tables written to %s_*.csv\n", c.result().kernels.size(), prefix.c_str());
  return 0;
}

// --reports PREFIX LIST: the reports of LIST (nsys's names, export/reports.hpp) as
// PREFIX_NAME.csv, as `nsys stats --format csv --output PREFIX --report LIST` names its files,
// with CUDA API calls recorded (runtime and driver; FIDELITY_API=runtime: the runtime's only).
int collect_reports(const std::string& prefix, const char* list) {
  const auto chosen = nvscope::parse_reports(list);
  if (!chosen.error.empty()) {
    std::fprintf(stderr, "%s\n", chosen.error.c_str());
    return 2;
  }
  nvscope::collector_options o;
  const char* api = std::getenv("FIDELITY_API");
  o.kinds = nvscope::activity::standard | nvscope::activity::runtime_api |
            (api != nullptr && std::strcmp(api, "runtime") == 0 ? nvscope::activity::none : nvscope::activity::driver_api);
  nvscope::collector c(o);
  if (!c.start()) {
    std::fprintf(stderr, "fidelity: the collector did not start (see the line above)\n");
    return 1;
  }
  workload();
  c.stop();
  const auto& t = c.result();
  const auto report = nvscope::analyze(t);
  for (const auto& which : chosen.reports) {
    const auto w = nvscope::write_file(prefix + "_" + nvscope::choice_name(which) + ".csv", nvscope::report_csv(t, report, which));
    if (!w) {
      std::fprintf(stderr, "%s\n", w.error.c_str());
      return 1;
    }
  }
  std::printf("fidelity: %zu API calls, %zu kernels collected, reports written to %s_*.csv\n", t.api_calls.size(), t.kernels.size(), prefix.c_str());
  return 0;
}

// --recipes PREFIX LIST: the recipes of LIST (nsys's names and options, export/recipes.hpp) as
// PREFIX_NAME.csv (a pace recipe: PREFIX_NAME.FILE.csv per file nsys writes), with the runtime's API calls recorded (the rules join them).
int collect_recipes(const std::string& prefix, const char* list) {
  const auto chosen = nvscope::parse_recipes(list);
  if (!chosen.error.empty()) {
    std::fprintf(stderr, "%s\n", chosen.error.c_str());
    return 2;
  }
  nvscope::collector_options o;
  o.kinds = nvscope::activity::standard | nvscope::activity::runtime_api;
  nvscope::collector c(o);
  if (!c.start()) {
    std::fprintf(stderr, "fidelity: the collector did not start (see the line above)\n");
    return 1;
  }
  workload();
  c.stop();
  const auto& t = c.result();
  for (std::size_t i = 0; i < chosen.recipes.size(); ++i) {
    const auto which = chosen.recipes[i];
    for (const auto& f : nvscope::recipe_files(t, which, chosen.params[i])) { // PREFIX_NAME.csv, or PREFIX_NAME.pace_start.csv ...
      const auto w = nvscope::write_file(prefix + "_" + nvscope::recipe_name(which) + f.suffix + ".csv", f.csv);
      if (!w) {
        std::fprintf(stderr, "%s\n", w.error.c_str());
        return 1;
      }
    }
  }
  std::printf("fidelity: %zu API calls, %zu kernels collected, recipes written to %s_*.csv\n", t.api_calls.size(), t.kernels.size(), prefix.c_str());
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("fidelity: no CUDA device; nothing run\n");
    return 77;
  }
  if (argc == 2 && std::strcmp(argv[1], "--plain") == 0) return workload();
  if (argc == 3 && std::strcmp(argv[1], "--collect") == 0) return collect(argv[2]);
  if (argc == 4 && std::strcmp(argv[1], "--reports") == 0) return collect_reports(argv[2], argv[3]);
  if (argc == 4 && std::strcmp(argv[1], "--recipes") == 0) return collect_recipes(argv[2], argv[3]);
  std::fprintf(stderr, "usage: fidelity_workload --plain | --collect PREFIX | --reports PREFIX LIST | --recipes PREFIX LIST\n");
  return 2;
}

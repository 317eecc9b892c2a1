/* 03_in_process: record a small training-like loop in-process, with no external tool.
 *
 * Five steps (`step_0` .. `step_4`), each with an upload, three layers (`layer_K`) of three
 * small kernels and a download, run under nvscope's CUPTI collector. The program then prints
 * the nsys-style tables (nvtx_sum, cuda_gpu_kern_sum, memory tables, kernels per range, GPU
 * projection), the metrics and the verdict, and writes:
 *   trace.json           Chrome trace: open in https://ui.perfetto.dev or chrome://tracing
 *   cuda_gpu_kern_sum.csv the kernel table, nsys's columns
 *   summary.json         every table and metric as JSON
 *   stacks.folded        GPU time by NVTX path, for flamegraph.pl or speedscope
 * Without a GPU it says "no CUDA device" and exits 0. */
#define NVSCOPE_IMPLEMENTATION // this program's one file with the analysis definitions (docs/analysis.md, "Building")
#include <nvscope/analysis.hpp>
#include <nvscope/collector.hpp>
#include <nvscope/export.hpp>

#include <nvtx3/nvtx3.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

__global__ void scale(float* x, int n, float a) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}
__global__ void add_bias(float* x, int n, float b) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += b;
}
__global__ void relu(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] > 0.f ? x[i] : 0.f;
}

static bool ok(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return true;
  std::fprintf(stderr, "03_in_process: %s: %s\n", what, cudaGetErrorString(e));
  return false;
}

static bool save(const char* path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
  if (!f) std::fprintf(stderr, "03_in_process: cannot write %s\n", path);
  return static_cast<bool>(f);
}

int main() {
  nvscope::collector collector; // first: routes NVTX to CUPTI before any range is opened
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("03_in_process: no CUDA device; nothing to record\n");
    return 0;
  }
  const int n = 1 << 20, layers = 3, steps = 5;
  const unsigned blocks = (n + 255) / 256;
  std::vector<float> host(n), back(n);
  std::mt19937 rng{std::random_device{}()};
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  for (auto& v : host) v = u(rng);
  float* d = nullptr;
  if (!ok(cudaMalloc(reinterpret_cast<void**>(&d), sizeof(float) * n), "cudaMalloc")) return 1;

  if (!collector.start()) std::printf("03_in_process: running un-collected (see the line above)\n");
  for (int s = 0; s < steps; ++s) {
    std::string step = "step_" + std::to_string(s);
    nvtx3::scoped_range step_range{step.c_str()};
    if (!ok(cudaMemcpy(d, host.data(), sizeof(float) * n, cudaMemcpyHostToDevice), "upload")) return 1;
    for (int l = 0; l < layers; ++l) {
      std::string layer = "layer_" + std::to_string(l);
      nvtx3::scoped_range layer_range{layer.c_str()};
      scale<<<blocks, 256>>>(d, n, 0.5f);
      add_bias<<<blocks, 256>>>(d, n, 0.25f);
      relu<<<blocks, 256>>>(d, n);
      if (!ok(cudaGetLastError(), "kernel launch")) return 1;
    }
    if (!ok(cudaMemcpy(back.data(), d, sizeof(float) * n, cudaMemcpyDeviceToHost), "download")) return 1;
  }
  // The result against a double-precision reference: the example computes what it claims.
  double worst = 0;
  for (int i = 0; i < n; ++i) {
    double x = host[i];
    for (int l = 0; l < layers; ++l) x = std::fmax(0.0, x * 0.5 + 0.25);
    worst = std::fmax(worst, std::fabs(x - back[i]));
  }
  cudaFree(d);
  if (worst > 1e-5) {
    std::fprintf(stderr, "03_in_process: wrong result (max error %g)\n", worst);
    return 1;
  }
  if (!collector.active()) return 0;
  collector.stop();
  const nvscope::trace& t = collector.result();
  nvscope::analysis_report report = nvscope::analyze(t);
  std::fputs(nvscope::to_text(report, t).c_str(), stdout);
  bool written = save("trace.json", nvscope::to_chrome_trace(t)) &&
                 save("cuda_gpu_kern_sum.csv", nvscope::to_csv(report, nvscope::report::cuda_gpu_kern_sum)) &&
                 save("summary.json", nvscope::to_json(report, t)) && save("stacks.folded", nvscope::to_folded(t));
  if (!written) return 1;
  std::printf("\nwrote trace.json, cuda_gpu_kern_sum.csv, summary.json, stacks.folded (%zu kernels, %zu ranges)\n",
              t.kernels.size(), t.ranges.size());
  return 0;
}

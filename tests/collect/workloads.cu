// Known GPU programs for the collector's tests, the probe and the benchmark: each launches an
// exact number of kernels, copies and memsets so that counts can be checked exactly.
#include "workloads.hpp"

#include <cuda.h>
#include <cudaTypedefs.h>

#include <cstdio>
#include <string>

namespace wl {

__global__ void fill_kernel(float* out, int n, float v) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = v;
}

__global__ void axpy_kernel(float* y, const float* x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

// Spins for about `cycles` clock cycles: kernels of known, distinct lengths for the nsys check.
__global__ void spin_kernel(long long cycles, int* sink) {
  long long start = clock64();
  while (clock64() - start < cycles) {
  }
  if (threadIdx.x == 0 && blockIdx.x == 0 && sink != nullptr) *sink = 1;
}

__global__ void empty_kernel() {}

std::string check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return {};
  return std::string(what) + ": " + cudaGetErrorString(e);
}

static unsigned blocks(int n) { return static_cast<unsigned>((n + 255) / 256); }

std::string fill(float* d, int n, float v, cudaStream_t s) {
  fill_kernel<<<blocks(n), 256, 0, s>>>(d, n, v);
  return check(cudaGetLastError(), "fill_kernel launch");
}

std::string axpy(float* y, const float* x, float a, int n, cudaStream_t s) {
  axpy_kernel<<<blocks(n), 256, 0, s>>>(y, x, a, n);
  return check(cudaGetLastError(), "axpy_kernel launch");
}

std::string spin(long long cycles, cudaStream_t s) {
  spin_kernel<<<1, 32, 0, s>>>(cycles, nullptr);
  return check(cudaGetLastError(), "spin_kernel launch");
}

std::string empty(cudaStream_t s) {
  empty_kernel<<<1, 1, 0, s>>>();
  return check(cudaGetLastError(), "empty_kernel launch");
}

std::string axpy_driver(float* y, const float* x, float a, int n) {
  cudaFunction_t f = nullptr;
  std::string e = check(cudaGetFuncBySymbol(&f, reinterpret_cast<const void*>(&axpy_kernel)), "cudaGetFuncBySymbol");
  if (!e.empty()) return e;
  void* args[] = {&y, const_cast<float**>(&x), &a, &n};
  // The driver API through the runtime's entry-point lookup: the test binaries do not link
  // libcuda, so that on a machine without a driver they load and skip instead of failing.
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  e = check(cudaGetDriverEntryPointByVersion("cuLaunchKernel", &fn, 4000, cudaEnableDefault, &found),
            "cudaGetDriverEntryPointByVersion(cuLaunchKernel)");
  if (!e.empty()) return e;
  if (found != cudaDriverEntryPointSuccess || fn == nullptr) return "cuLaunchKernel: entry point not found";
  auto launch = reinterpret_cast<PFN_cuLaunchKernel_v4000>(fn);
  CUresult r = launch(reinterpret_cast<CUfunction>(f), blocks(n), 1, 1, 256, 1, 1, 0, nullptr, args, nullptr);
  if (r != CUDA_SUCCESS) return "cuLaunchKernel failed: CUresult " + std::to_string(static_cast<int>(r));
  return {};
}

std::string profiler_driver(bool start) {
  const char* name = start ? "cuProfilerStart" : "cuProfilerStop";
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  std::string e = check(cudaGetDriverEntryPointByVersion(name, &fn, 4000, cudaEnableDefault, &found),
                        "cudaGetDriverEntryPointByVersion(cuProfilerStart/Stop)");
  if (!e.empty()) return e;
  if (found != cudaDriverEntryPointSuccess || fn == nullptr) return std::string(name) + ": entry point not found";
  CUresult r = reinterpret_cast<CUresult (*)()>(fn)();
  if (r != CUDA_SUCCESS) return std::string(name) + " failed: CUresult " + std::to_string(static_cast<int>(r));
  return {};
}

std::string make_axpy_graph(int kernels, float* y, const float* x, float a, int n, cudaStream_t s,
                            cudaGraphExec_t* exec) {
  cudaGraph_t graph = nullptr;
  std::string e = check(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), "cudaStreamBeginCapture");
  if (!e.empty()) return e;
  for (int i = 0; i < kernels; ++i) axpy_kernel<<<blocks(n), 256, 0, s>>>(y, x, a, n);
  e = check(cudaStreamEndCapture(s, &graph), "cudaStreamEndCapture");
  if (!e.empty()) return e;
  e = check(cudaGraphInstantiate(exec, graph, 0), "cudaGraphInstantiate");
  cudaGraphDestroy(graph);
  return e;
}

} // namespace wl

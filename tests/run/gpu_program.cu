// A small CUDA program for `nvscope run` on the GPU machine: `steps` steps, each an NVTX range
// step_N holding two kernels and a copy, a cudaProfilerStart/Stop pair around steps 2 and 3,
// and an exit status of its own. Built into no test binary: the run tests start it.
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <cstdio>
#include <cstdlib>
#include <string>

__global__ void scale(float* x, int n, float a) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}

__global__ void offset(float* x, int n, float b) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += b;
}

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 6;
  const int status = argc > 2 ? std::atoi(argv[2]) : 0;
  const int n = 1 << 20;
  float* d = nullptr;
  if (cudaMalloc(&d, n * sizeof(float)) != cudaSuccess) {
    std::printf("gpu_program: no CUDA device\n");
    return status;
  }
  float* h = static_cast<float*>(std::calloc(n, sizeof(float)));
  for (int s = 0; s < steps; ++s) {
    if (s == 2) cudaProfilerStart();
    nvtxRangePushA(("step_" + std::to_string(s)).c_str());
    nvtxRangePushA("compute");
    scale<<<(n + 255) / 256, 256>>>(d, n, 1.5f);
    offset<<<(n + 255) / 256, 256>>>(d, n, 0.5f);
    nvtxRangePop();
    cudaMemcpy(h, d, n * sizeof(float), cudaMemcpyDeviceToHost);
    nvtxRangePop();
    if (s == 3) cudaProfilerStop();
  }
  std::printf("gpu_program: %d steps done\n", steps);
  std::free(h);
  cudaFree(d);
  return status;
}

// A CUDA program built by the host compiler against the CUDA runtime (no nvcc, no kernel),
// for the run tests on machines without a GPU: it asks for devices, says what it got, and
// exits with status 5 so that the test sees the status pass through.
#include <cuda_runtime_api.h>

#include <cstdio>

int main() {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) std::printf("cudart_program: no device (%s)\n", cudaGetErrorString(e));
  else std::printf("cudart_program: %d devices\n", n);
  return 5;
}

// nvscope-target: cupti
#pragma once

// CUPTI's first GPU operation after its activity kinds are enabled waits for CUPTI (once per
// start, whatever the operation, not once per kernel; milliseconds on an H200), a wait that
// would land on the program's first kernel. A 4-byte memset on a private non-blocking stream
// takes it at start instead: no device-wide sync, so work the program has queued is not
// waited on. Its records fall before the trace's begin and are dropped at stop.

#include <cuda_runtime_api.h>

#include <string>

namespace nvscope {
inline namespace v1 {
namespace detail {

// Empty when it went well; else one line saying what failed.
inline std::string absorb_first_gpu_operation() {
  cudaStream_t s = nullptr;
  if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess)
    return std::string("could not create the collector's warm-up stream (") + cudaGetErrorString(cudaGetLastError()) +
           "); the first kernel may carry CUPTI's start-up wait";
  void* p = nullptr;
  cudaError_t e = cudaMallocAsync(&p, 4, s);
  if (e == cudaSuccess) e = cudaMemsetAsync(p, 0, 4, s);
  if (p != nullptr) {
    const cudaError_t f = cudaFreeAsync(p, s);
    if (e == cudaSuccess) e = f;
  }
  const cudaError_t w = cudaStreamSynchronize(s);
  if (e == cudaSuccess) e = w;
  const cudaError_t d = cudaStreamDestroy(s);
  if (e == cudaSuccess) e = d;
  if (e == cudaSuccess) return {};
  cudaGetLastError(); // not sticky: clear it, so the program's next check does not see it
  return std::string("the collector's warm-up memset failed (") + cudaGetErrorString(e) +
         "); the first kernel may carry CUPTI's start-up wait";
}

} // namespace detail
} // namespace v1
} // namespace nvscope

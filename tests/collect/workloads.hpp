// Host entry points of workloads.cu. Each returns "" or a one-line error naming the failed call.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

namespace wl {

std::string check(cudaError_t e, const char* what);
std::string fill(float* d, int n, float v, cudaStream_t s = nullptr);           // kernel "fill_kernel"
std::string axpy(float* y, const float* x, float a, int n, cudaStream_t s = nullptr); // "axpy_kernel"
std::string spin(long long cycles, cudaStream_t s = nullptr);                   // "spin_kernel"
std::string empty(cudaStream_t s = nullptr);                                    // "empty_kernel"
std::string axpy_driver(float* y, const float* x, float a, int n);              // through cuLaunchKernel
std::string profiler_driver(bool start);                                         // cuProfilerStart/Stop
// A graph of `kernels` axpy kernels captured on `s`.
std::string make_axpy_graph(int kernels, float* y, const float* x, float a, int n, cudaStream_t s,
                            cudaGraphExec_t* exec);

} // namespace wl

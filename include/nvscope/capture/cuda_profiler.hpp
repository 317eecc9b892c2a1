// nvscope-target: capture
#pragma once

/// \file capture/cuda_profiler.hpp
/// The `cudaProfilerStart/Stop` backend that `nsys profile --capture-range=cudaProfilerApi`
/// and `ncu --profile-from-start off` follow. Link `nvscope::capture` (it adds the CUDA
/// runtime).
///
/// \code
///   nvscope::use_cuda_profiler_capture();   // capture guards now call cudaProfilerStart/Stop
/// \endcode

#include <nvscope/capture/guard.hpp>

#include <cuda_profiler_api.h>
#include <cuda_runtime_api.h>

#include <string>

namespace nvscope {
inline namespace v1 {

/// The backend that calls `cudaProfilerStart` and `cudaProfilerStop`. A failure (no
/// device, a broken context) becomes one `capture_error` whose `native` is the
/// cudaError_t; the non-sticky error is cleared so that it does not surface later in the
/// program's own `cudaGetLastError()`.
///
/// \code
///   nvscope::add_capture_backend(nvscope::cuda_profiler_capture());
/// \endcode
class cuda_profiler_backend : public capture_backend {
 public:
  const char* name() const noexcept override { return "cudaProfiler"; }
  capture_error start() override { return check(cudaProfilerStart(), "cudaProfilerStart"); }
  capture_error stop() override { return check(cudaProfilerStop(), "cudaProfilerStop"); }

 private:
  static capture_error check(cudaError_t err, const char* call) {
    if (err == cudaSuccess) return {};
    (void)cudaGetLastError();
    return {capture_errc::backend_failed, static_cast<int>(err),
            std::string("nvscope: ") + call + "() failed: " + cudaGetErrorName(err) + " (" +
                cudaGetErrorString(err) + "); the profiler was not told, the program goes on"};
  }
};

/// The process's cudaProfiler backend.
///
/// \code
///   nvscope::add_capture_backend(nvscope::cuda_profiler_capture());
/// \endcode
inline cuda_profiler_backend& cuda_profiler_capture() {
  static cuda_profiler_backend b;
  return b;
}

/// Shorthand: makes capture call `cudaProfilerStart/Stop` (idempotent).
///
/// \code
///   nvscope::use_cuda_profiler_capture();
///   nvscope::capture_guard g;     // cudaProfilerStart()
/// \endcode
inline capture_error use_cuda_profiler_capture() { return add_capture_backend(cuda_profiler_capture()); }

} // namespace v1
} // namespace nvscope

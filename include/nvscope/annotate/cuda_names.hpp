// nvscope-target: capture
#pragma once

/// \file annotate/cuda_names.hpp
/// Names for CUDA streams and devices, shown by Nsight Systems on their rows. Needs the
/// CUDA runtime's headers (link `nvscope::capture`, which defines NVSCOPE_HAS_CUDART).
///
/// \code
///   cudaStream_t copy_stream;
///   cudaStreamCreate(&copy_stream);
///   nvscope::name_stream(copy_stream, "h2d_copies");
///   nvscope::name_device(0, "trainer_gpu");
/// \endcode

#if !defined(NVSCOPE_HAS_CUDART) && defined(__has_include)
#if __has_include(<cuda_runtime_api.h>)
#define NVSCOPE_HAS_CUDART 1
#endif
#endif

#if defined(NVSCOPE_HAS_CUDART)

#include <cuda_runtime_api.h>

#include <nvscope/annotate/switch.hpp>
#include <nvscope/annotate/message.hpp>

#if NVSCOPE_DETAIL_ENABLED
#include <nvscope/annotate/detail/nvtx_core.hpp>
#include <nvtx3/nvToolsExtCudaRt.h>
#endif

namespace nvscope {
inline namespace v1 {
inline namespace NVSCOPE_DETAIL_MODE {

/// Names a CUDA stream (name.hpp's rules apply). Calls no CUDA function.
inline void name_stream(cudaStream_t stream, name_ref name) noexcept {
#if NVSCOPE_DETAIL_ENABLED
  if (!enabled()) return;
  char buffer[max_name_length + 1];
  detail::sanitize_name(name, buffer);
  nvtxNameCudaStreamA(stream, buffer);
#else
  (void)stream;
  (void)name;
#endif
}

/// Names CUDA device `device` (its runtime ordinal). Calls no CUDA function.
inline void name_device(int device, name_ref name) noexcept {
#if NVSCOPE_DETAIL_ENABLED
  if (!enabled()) return;
  char buffer[max_name_length + 1];
  detail::sanitize_name(name, buffer);
  nvtxNameCudaDeviceA(device, buffer);
#else
  (void)device;
  (void)name;
#endif
}

} // namespace NVSCOPE_DETAIL_MODE
} // namespace v1
} // namespace nvscope

#else
#error "nvscope: <nvscope/annotate/cuda_names.hpp> needs the CUDA runtime headers: add -I<CUDA>/include (pkg-config --cflags nvscope-capture), or link nvscope::capture in CMake"
#endif

// nvscope-target: capture
#pragma once

/// \file capture.hpp
/// The capture layer in one include: nesting guards (capture/guard.hpp), the step schedule
/// (capture/schedule.hpp), the `NVSCOPE_CAPTURE` parser (capture/env.hpp), the NVTX capture
/// range (capture/nvtx_range.hpp), listeners (capture/listener.hpp) and the
/// `cudaProfilerStart/Stop` backend (capture/cuda_profiler.hpp). Link `nvscope::capture`.
/// Only `capture/cuda_profiler.hpp` needs the CUDA runtime; include the others alone to
/// stay CUDA-free. Full guide: docs/capture.md.
///
/// \code
///   #include <nvscope/capture.hpp>
///
///   int main() {
///     nvscope::use_cuda_profiler_capture();              // cudaProfilerStart/Stop
///     nvscope::capture_schedule schedule(nvscope::capture_options_from_env(
///         "NVSCOPE_CAPTURE", nvscope::schedule_options{}.skip_first(5).active(10)));
///     for (int i = 0; i < 100; ++i) {
///       auto step = schedule.step_scope();
///       train_step();
///     }
///   }
/// \endcode

#if !__has_include(<cuda_runtime_api.h>)
#error "nvscope: <nvscope/capture.hpp> needs the CUDA runtime's headers: add -I<CUDA>/include (pkg-config --cflags nvscope-capture, or link nvscope::capture in CMake), or include the CUDA-free capture/guard.hpp, capture/schedule.hpp and capture/env.hpp alone"
#endif

#include <nvscope/capture/backend.hpp>
#include <nvscope/capture/cuda_profiler.hpp>
#include <nvscope/capture/env.hpp>
#include <nvscope/capture/guard.hpp>
#include <nvscope/capture/listener.hpp>
#include <nvscope/capture/nvtx_range.hpp>
#include <nvscope/capture/schedule.hpp>

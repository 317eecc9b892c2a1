// nvscope-target: nvscope
#pragma once

/// \file nvscope.hpp
/// \mainpage nvscope
/// The umbrella header: everything nvscope offers that this build can compile. Annotation,
/// the CUDA-free capture parts, the trace, analysis and export always; the
/// `cudaProfilerStart/Stop` backend and stream/device naming when the CUDA runtime's headers
/// are on the include path; the collector when CUPTI's headers are too. No define is needed:
/// the headers are looked for with `__has_include`. `NVSCOPE_HAS_CUDART=0` or
/// `NVSCOPE_HAS_CUPTI=0` leaves a part out although its headers are there. The analysis and
/// export definitions compile in the one file of the program that defines
/// `NVSCOPE_IMPLEMENTATION` first (analysis.hpp).
///
/// It is the expensive include (about 2.7 times the parse time of annotate.hpp): annotated
/// files should include only `<nvscope/annotate.hpp>`, the file that drives the collector
/// `<nvscope/collector.hpp>`, and so on.
///
/// \code
///   #include <nvscope/nvscope.hpp>
///
///   void train_step(int step) {
///     NVSCOPE_FUNC_RANGE();                  // "train_step(int)", colour from the name
///     NVSCOPE_RANGE_F("step_%d", step);      // formatted on the stack, no heap
///     forward();                             // ...
///   }
/// \endcode
///
/// `collect/benchmark.hpp` (the Google Benchmark adapter) is not included here: it needs Google
/// Benchmark's headers; include it where you write benchmarks.

#include <nvscope/version.hpp>

// Annotation: NVTX3 headers only.
#include <nvscope/annotate.hpp>

// Capture control and the listener hook; the CUDA-free parts are always available.
#include <nvscope/capture/listener.hpp>
#include <nvscope/capture/guard.hpp>
#include <nvscope/capture/schedule.hpp>
#include <nvscope/capture/env.hpp>
#include <nvscope/capture/nvtx_range.hpp>

// Trace, analysis and export: plain C++ over plain records.
#include <nvscope/trace.hpp>
#include <nvscope/analysis.hpp>
#include <nvscope/export.hpp>

// The CUDA runtime's parts: wanted unless NVSCOPE_HAS_CUDART is 0, present when its headers are.
#if !defined(NVSCOPE_HAS_CUDART) && __has_include(<cuda_runtime_api.h>)
#define NVSCOPE_DETAIL_UMBRELLA_CUDART 1
#elif defined(NVSCOPE_HAS_CUDART) && (NVSCOPE_HAS_CUDART + 0)
#if !__has_include(<cuda_runtime_api.h>)
#error "nvscope: NVSCOPE_HAS_CUDART is set but <cuda_runtime_api.h> is not on the include path: add -I<CUDA>/include (pkg-config --cflags nvscope-capture, or link nvscope::capture in CMake)"
#endif
#define NVSCOPE_DETAIL_UMBRELLA_CUDART 1
#endif

#if defined(NVSCOPE_DETAIL_UMBRELLA_CUDART)
#include <nvscope/capture/cuda_profiler.hpp>
#include <nvscope/annotate/cuda_names.hpp>

// The collector: wanted unless NVSCOPE_HAS_CUPTI is 0, present when CUPTI's headers are.
#if !defined(NVSCOPE_HAS_CUPTI) && __has_include(<cupti.h>)
#include <nvscope/collector.hpp>
#elif defined(NVSCOPE_HAS_CUPTI) && (NVSCOPE_HAS_CUPTI + 0)
#if !__has_include(<cupti.h>)
#error "nvscope: NVSCOPE_HAS_CUPTI is set but <cupti.h> is not on the include path: add -I<CUDA>/include, or -I<CUDA>/extras/CUPTI/include on older toolkits (pkg-config --cflags nvscope-cupti, or link nvscope::cupti in CMake)"
#endif
#include <nvscope/collector.hpp>
#endif
#undef NVSCOPE_DETAIL_UMBRELLA_CUDART
#endif

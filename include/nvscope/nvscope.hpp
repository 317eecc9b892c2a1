// nvscope-target: nvscope
#pragma once

/// \file nvscope.hpp
/// \mainpage nvscope
/// The umbrella header. It brings in the annotation API always; the capture API when the
/// program links `nvscope::capture`, and the collector when it links `nvscope::cupti`
/// (those targets define `NVSCOPE_HAS_CUDART` and `NVSCOPE_HAS_CUPTI`).
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

#if defined(NVSCOPE_HAS_CUDART)
#include <nvscope/capture/cuda_profiler.hpp>
#include <nvscope/annotate/cuda_names.hpp>
#endif

#if defined(NVSCOPE_HAS_CUPTI)
#include <nvscope/collector.hpp>
#endif

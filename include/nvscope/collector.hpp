// nvscope-target: cupti
#pragma once

/// \file collector.hpp
/// The collect layer: `nvscope::collector`, an in-process CUPTI client that records kernels,
/// copies, memsets, synchronisations, NVTX ranges and launches into a `trace`. Link
/// `nvscope::cupti`; libcupti is loaded at run time. Full guide: docs/collector.md.
///
/// \code
///   #define NVSCOPE_IMPLEMENTATION   // in one file of the program (analysis.hpp says why)
///   #include <nvscope/collector.hpp>
///   #include <nvscope/analysis.hpp>
///
///   nvscope::collector c;
///   c.start();
///   run_workload();
///   c.stop();
///   auto report = nvscope::analyze(c.result());
/// \endcode

#if defined(__has_include)
#if !__has_include(<cupti.h>) || !__has_include(<cuda_runtime_api.h>)
#error "nvscope: <nvscope/collector.hpp> needs the CUDA runtime's and CUPTI's headers: add -I<CUDA>/include (and -I<CUDA>/extras/CUPTI/include on older toolkits), use pkg-config --cflags nvscope-cupti, or link nvscope::cupti in CMake"
#endif
#endif

#include <nvscope/collect/collector.hpp>

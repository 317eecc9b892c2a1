// nvscope-target: cupti
#pragma once

/// \file collector.hpp
/// The collect layer: `nvscope::collector`, an in-process CUPTI client that records kernels,
/// copies, memsets, synchronisations, NVTX ranges and launches into a `trace`. Link
/// `nvscope::cupti`; libcupti is loaded at run time. Full guide: docs/collector.md.
///
/// \code
///   #include <nvscope/collector.hpp>
///   #include <nvscope/analysis.hpp>
///
///   nvscope::collector c;
///   c.start();
///   run_workload();
///   c.stop();
///   auto report = nvscope::analyze(c.result());
/// \endcode

#include <nvscope/collect/collector.hpp>

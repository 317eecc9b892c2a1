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
///     NVSCOPE_FUNC_RANGE();                  // "train_step", colour from the name
///     forward();                             // ...
///   }
/// \endcode

#include <nvscope/version.hpp>
#include <nvscope/trace.hpp>

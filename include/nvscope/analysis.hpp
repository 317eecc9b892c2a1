// nvscope-target: nvscope
#pragma once

/// \file analysis.hpp
/// The analyze layer: `nvscope::analyze(trace)` and the report it returns (the tables
/// `nsys stats` prints, GPU time per range, activity metrics, steps, verdict, losses).
/// Plain C++ over the plain records of trace.hpp. Full guide: docs/analysis.md.
///
/// \code
///   #include <nvscope/analysis.hpp>
///
///   nvscope::analysis_report r = nvscope::analyze(t);
///   for (const auto& k : r.kernels) std::printf("%s %llu\n", k.name.c_str(), (unsigned long long)k.time.total);
/// \endcode

#include <nvscope/analyze/analyze.hpp>

// nvscope-target: nvscope
#pragma once

/// \file analysis.hpp
/// The analyze layer: `nvscope::analyze(trace)` and the report it returns (the tables
/// `nsys stats` prints, GPU time per range, activity metrics, steps, verdict, losses).
/// Plain C++ over the plain records of trace.hpp. Full guide: docs/analysis.md.
///
/// A file that includes this header sees the report's types and the declaration of
/// `analyze`, and compiles in about a second. The definitions, with the engine behind them,
/// are compiled where the program defines `NVSCOPE_IMPLEMENTATION` before the include: in
/// exactly one file (as doctest's and stb's single-file libraries do; nothing to build or
/// link besides). A program without that file fails to link with "undefined reference to
/// nvscope::v1::analyze"; two of them, with "multiple definition".
///
/// \code
///   #define NVSCOPE_IMPLEMENTATION   // one file of the program
///   #include <nvscope/analysis.hpp>
///   #include <nvscope/export.hpp>
///
///   nvscope::analysis_report r = nvscope::analyze(t);
///   for (const auto& k : r.kernels) std::printf("%s %llu\n", k.name.c_str(), (unsigned long long)k.time.total);
/// \endcode

#include <nvscope/analyze/entry.hpp>

#if defined(NVSCOPE_IMPLEMENTATION)
#include <nvscope/analyze/analyze.hpp>
#endif

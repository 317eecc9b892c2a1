// nvscope-target: nvscope
#pragma once

/// \file version.hpp
/// The one place nvscope's version lives; CMake parses these three lines.
/// \code
///   static_assert(NVSCOPE_VERSION >= 100, "needs nvscope 0.1");
/// \endcode
#define NVSCOPE_VERSION_MAJOR 0
#define NVSCOPE_VERSION_MINOR 1
#define NVSCOPE_VERSION_PATCH 0

#define NVSCOPE_VERSION \
  (NVSCOPE_VERSION_MAJOR * 10000 + NVSCOPE_VERSION_MINOR * 100 + NVSCOPE_VERSION_PATCH)

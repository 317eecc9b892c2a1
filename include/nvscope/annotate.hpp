// nvscope-target: nvscope
#pragma once

/// \file annotate.hpp
/// The annotation layer in one include: ranges, domains, colours, categories, payloads,
/// marks, names and the kill switches. Stream/device naming (CUDA runtime) is in
/// cuda_naming.hpp. Full guide: docs/annotate.md.
///
/// \code
///   #include <nvscope/annotate.hpp>
///
///   struct my_lib { static constexpr const char* name = "my_lib"; };
///
///   void step(int i) {
///     NVSCOPE_FUNC_RANGE();                        // "step(int)", automatic colour
///     NVSCOPE_RANGE_F("step_%d", i);               // formatted, no heap
///     NVSCOPE_RANGE_IN(my_lib, "solve", nvscope::colors::red, nvscope::payload{i});
///     nvscope::mark("checkpoint");
///   }
/// \endcode

#include <nvscope/attributes.hpp>
#include <nvscope/color.hpp>
#include <nvscope/config.hpp>
#include <nvscope/domain.hpp>
#include <nvscope/mark.hpp>
#include <nvscope/name.hpp>
#include <nvscope/naming.hpp>
#include <nvscope/range.hpp>

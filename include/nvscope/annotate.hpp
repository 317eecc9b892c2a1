// nvscope-target: nvscope
#pragma once

/// \file annotate.hpp
/// The annotation layer in one include: ranges, domains, colours, categories, payloads,
/// marks, names and the kill switches. Stream/device naming (CUDA runtime) is in
/// annotate/cuda_names.hpp. Full guide: docs/annotate.md.
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

#include <nvscope/annotate/attributes.hpp>
#include <nvscope/annotate/color.hpp>
#include <nvscope/annotate/switch.hpp>
#include <nvscope/annotate/domain.hpp>
#include <nvscope/annotate/mark.hpp>
#include <nvscope/annotate/message.hpp>
#include <nvscope/annotate/thread_names.hpp>
#include <nvscope/annotate/range.hpp>

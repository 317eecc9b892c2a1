// nvscope-target: nvscope
#pragma once

/// \file analyze/sketch.hpp
/// `duration_sketch` lives in trace/sketch.hpp: the collector folds into it while it records
/// (collect may read the trace layer, not analyze), and analysis reads it. Kept here so that
/// code written against this path still compiles.

#include <nvscope/trace/sketch.hpp>

// nvscope-target: nvscope
#pragma once

/// \file analyze/recipe_rows.hpp
/// The rows of the `nsys recipe` recipes nvscope computes in-process, with nsys's names and
/// default parameters: `gpu_gaps`, `gpu_time_util`, `cuda_api_sync`, `cuda_memcpy_async`,
/// `cuda_memcpy_sync`, `cuda_memset_sync`, `cuda_gpu_kern_hist`, `cuda_gpu_kern_pace`, `nvtx_pace`,
/// `nvtx_gpu_proj_pace`, `nccl_gpu_overlap_trace`, `cuda_gpu_time_util_map`, `nccl_gpu_time_util_map`, and the two roundings nsys's figures go
/// through (SQLite's and pandas'). Numbers, enums and the names nsys prints; computed
/// by analyze/recipes.hpp, defined plainly by analyze/reference/recipes.hpp, printed by
/// export/recipes.hpp. docs/analysis.md ("Recipes") gives each definition.
///
/// \code
///   nvscope::recipe_params p;
///   p.gap_ms = 100; // gpu_gaps --gap=100
///   for (const auto& g : nvscope::gpu_gaps(t, p)) { /* g.duration, g.start, g.device */ }
/// \endcode

#include <nvscope/detail/sqlite_round.hpp>
#include <nvscope/trace.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace nvscope {
inline namespace v1 {

/// The recipes' parameters, by nsys's option names and defaults.
struct recipe_params {
  std::uint64_t gap_ms = 500;       ///< gpu_gaps `--gap`: a gap longer than this many milliseconds is reported
  std::uint32_t threshold = 50;     ///< gpu_time_util `--threshold`: chunks used less than this percent are reported
  std::uint32_t chunks = 30;        ///< gpu_time_util `--chunks`: equal chunks of each device's busy span
  std::string name;                 ///< cuda_gpu_kern_pace and nvtx_pace `--name` (required): the kernel or range that marks an iteration
  std::uint32_t bins = 30;          ///< cuda_gpu_time_util_map and nccl_gpu_time_util_map `--bins` (nsys's `Option.BINS`): equal bins of the session
  bool align = true;                ///< the heatmaps of several ranks: each rank's session placed by its wall-clock start (false: nsys's `--disable-alignment`, every rank from 0)
};

/// The traces of the ranks a recipe combines (nsys's `--input` reports), in nsys's order: it
/// sorts its reports by file name, and the caller gives them in that order.
using rank_traces = std::vector<const trace*>;

/// nsys's kernel kind in its NCCL recipes (`lib/nccl.py`'s `add_kernel_type`): "nccl" when the
/// kernel's shortName (the base name, without parameters) starts with "nccl", case and all;
/// "compute" otherwise.
inline bool is_nccl_short_name(std::string_view short_name) noexcept { return short_name.substr(0, 4) == "nccl"; }

/// One row of `cuda_gpu_time_util_map` or `nccl_gpu_time_util_map`: one bin of one device of one
/// rank, the percent of the bin in which kernels ran (their union, so at most 100), rounded to
/// one decimal as pandas rounds.
struct util_map_row {
  std::uint64_t duration = 0; ///< "Duration": where the bin starts, from the earliest rank's session start
  bool in_session = true;     ///< false: the bin lies outside the rank's session (nsys: NaN, an empty cell)
  double all = 0.0;           ///< every kernel: cuda_gpu_time_util_map's "Kernel", nccl_gpu_time_util_map's "All"
  double nccl = 0.0;          ///< communication kernels (nccl_gpu_time_util_map only)
  double compute = 0.0;       ///< the other kernels
  double overlap = 0.0;       ///< communication and compute kernels at once
  std::uint64_t pid = 0;
  std::uint16_t device = 0;
  std::uint32_t rank = 0;     ///< "Rank": the trace's place among those that had rows
};

/// One row of `gpu_gaps`: a stretch of one device with no GPU operation running.
struct gpu_gap_row {
  std::uint64_t duration = 0;
  timestamp_ns start = 0;   ///< the end of the operation before the gap
  timestamp_ns end = 0;     ///< the start of the operation after it
  std::uint64_t pid = 0;
  std::uint16_t device = 0;
  std::uint32_t context = 0; ///< the context of the operation whose end opens the gap
};

/// One row of `gpu_time_util`: a run of consecutive chunks of a device's span, each used less
/// than the threshold, coalesced.
struct gpu_util_row {
  double in_use = 0.0;      ///< the chunks' time-weighted average of the percent their operations ran (summed, so above 100 where they overlap), rounded to one decimal as nsys's SQL rounds it
  std::uint64_t duration = 0; ///< from the first chunk's start to the last chunk's end
  timestamp_ns start = 0;
  std::uint64_t pid = 0;
  std::uint16_t device = 0;
  std::uint32_t context = 0; ///< the device's context as nsys's rule picks it (reference/recipes.hpp)
};

/// SQLite's `round(v, decimals)`: the nearest value of that many decimals, an exact half (in
/// decimal) away from zero; the rounded figures nsys's rules sort by.
inline double sqlite_round(double v, int decimals) { return std::strtod(detail::sqlite_round_text(v, decimals).c_str(), nullptr); }

/// One row of `cuda_api_sync`: one call of cudaDeviceSynchronize or cudaStreamSynchronize.
struct api_sync_row {
  std::uint64_t duration = 0;
  timestamp_ns start = 0;
  std::uint64_t pid = 0;
  std::uint64_t tid = 0;
  std::string api_name;     ///< as recorded (a `_vNNNN` suffix kept, as nsys prints StringIds' value)
};

/// One row of `cuda_memcpy_async` or `cuda_memcpy_sync`: a copy joined with the runtime call
/// of its correlation id.
struct memcpy_rule_row {
  std::uint64_t duration = 0;
  timestamp_ns start = 0;
  memory_kind src = memory_kind::unknown;
  memory_kind dst = memory_kind::unknown;
  std::uint64_t bytes = 0;
  std::uint64_t pid = 0;
  std::uint16_t device = 0;
  std::uint32_t context = 0;
  std::uint32_t stream = 0;
  std::string api_name;
};

/// One row of `cuda_memset_sync`: a memset joined with the runtime call of its correlation id.
struct memset_rule_row {
  std::uint64_t duration = 0;
  timestamp_ns start = 0;
  memory_kind memory = memory_kind::unknown;
  std::uint64_t bytes = 0;
  std::uint64_t pid = 0;
  std::uint16_t device = 0;
  std::uint32_t context = 0;
  std::uint32_t stream = 0;
  std::string api_name;
};

/// One row of `cuda_gpu_kern_hist`: one kernel run, the values its histogram counts.
struct kernel_duration_row {
  std::string name;         ///< the base name (nsys's shortName)
  std::uint64_t duration = 0;
};

/// One row of `cuda_gpu_kern_pace`, `nvtx_pace` or `nvtx_gpu_proj_pace`: one instance of the
/// named kernel or range, an iteration, with the running sums that show the application's pace
/// (nsys writes each column as a file: pace_start, pace_end, ...).
struct pace_row {
  std::uint64_t iteration = 0;      ///< 0 for the first instance
  timestamp_ns start = 0;           ///< from the session's start (`trace::begin`), as nsys offsets its times
  timestamp_ns end = 0;
  std::uint64_t duration = 0;
  std::uint64_t duration_accum = 0; ///< the durations of this and every earlier instance
  std::int64_t delta = 0;           ///< start - the previous instance's end (the first: its start); negative where they overlap
  std::int64_t delta_accum = 0;
};

/// A pace recipe's `stats`: the instances' durations summarised as pandas' `describe()` gives
/// them (quantiles interpolated linearly, the sample deviation), each rounded to one decimal;
/// nsys's "(approx)" columns combine the ranks' figures, which for one rank are its own.
struct pace_stats {
  std::string text;         ///< the name the instances were chosen by
  std::uint64_t count = 0;
  double mean = 0, std = 0, q1 = 0, median = 0, q3 = 0;
  bool has_std = false;     ///< false for a single instance (pandas: NaN, printed empty)
  std::uint64_t min = 0, max = 0, sum = 0;
};

/// One row of `nccl_gpu_overlap_trace`'s rank_trace: a kernel, communication or compute, with
/// the time the other kernels of each kind ran beside it (each kind's time counted once).
struct overlap_trace_row {
  std::string name;                    ///< the base name (nsys's shortName)
  timestamp_ns start = 0, end = 0;
  std::uint64_t pid = 0;
  std::uint16_t device = 0;
  std::uint32_t rank = 0;              ///< "Rank": the trace's place among those that had rows
  bool communication = false;          ///< its base name starts with "nccl" (is_nccl_short_name)
  std::uint64_t communication_sum = 0; ///< the time within it that another communication kernel of its device ran (their union)
  std::uint64_t compute_sum = 0;       ///< the same for the compute kernels
  double communication_overlap = 0;    ///< communication_sum / (end - start) * 100, rounded to one decimal (pandas)
  double compute_overlap = 0;
  bool has_overlap = false;            ///< false for a kernel of no duration (nsys: NaN, printed empty)
};

/// One row of `nccl_gpu_overlap_trace`'s grouped_trace: the kernels of one name together.
struct overlap_group_row {
  std::string name;
  std::uint64_t count = 0;
  std::uint64_t duration = 0, communication_sum = 0, compute_sum = 0;
  double communication_overlap = 0; ///< communication_sum / duration * 100, rounded to one decimal
  double compute_overlap = 0;
  bool has_overlap = false;         ///< false where the kernels have no duration
};

/// pandas' (numpy's) `round(v, decimals)`: `rint(v * 10^decimals) / 10^decimals`, ties to even.
inline double pandas_round(double v, int decimals) {
  const double scale = std::pow(10.0, decimals);
  return std::nearbyint(v * scale) / scale;
}

} // namespace v1
} // namespace nvscope

// nvscope-target: nvscope
#pragma once

/// \file analyze/report_rows.hpp
/// The rows of the `nsys stats` reports beyond the six tables of `analysis_report`: CUDA API
/// calls (`cuda_api_sum`, `cuda_api_trace`), every GPU operation (`cuda_gpu_trace`,
/// `cuda_gpu_sum`, `cuda_api_gpu_sum`, `cuda_gpu_kern_gb_sum`), kernel launch and execution times (`cuda_kern_exec_trace`,
/// `cuda_kern_exec_sum`) and NVTX ranges by style (`nvtx_pushpop_sum`, `nvtx_pushpop_trace`,
/// `nvtx_startend_sum`, `nvtx_gpu_proj_trace`). Numbers, enums and the names nsys prints as keys; the reports are
/// computed by analyze/reports.hpp, defined plainly by analyze/reference/reports.hpp, and
/// printed by export/reports.hpp. docs/analysis.md gives each definition.
///
/// \code
///   std::vector<nvscope::api_summary_row> rows = nvscope::cuda_api_sum(t);
///   if (!rows.empty() && rows[0].name == "cudaStreamSynchronize") { /* the host waits */ }
/// \endcode

#include <nvscope/analyze/stats.hpp>
#include <nvscope/trace.hpp>

#include <cstdint>
#include <string>

namespace nvscope {
inline namespace v1 {

/// One row of `cuda_api_sum`: CUDA runtime and driver API calls grouped by function.
struct api_summary_row {
  double time_percent = 0.0; ///< of the total API time in the table
  duration_stats time;       ///< count is "Num Calls"
  std::string name;          ///< nsys's spelling: a `_vNNNN` suffix cut (`cuGraphLaunch_v10000` prints `cuGraphLaunch`)
};

/// One row of `cuda_api_trace`: one API call.
struct api_trace_row {
  timestamp_ns start = 0;
  std::uint64_t duration = 0;
  std::string name;
  std::uint32_t correlation = 0;
  std::uint64_t pid = 0;
  std::uint64_t tid = 0;     ///< the OS thread id (the thread's index when the trace does not describe it)
  std::string thread_name;   ///< empty when the thread was not named
};

/// What a GPU operation is.
enum class gpu_operation : std::uint8_t { kernel, copy, memset };

/// One row of `cuda_gpu_trace`: one kernel, copy or memset. Launch-configuration fields are
/// for kernels, byte fields for copies and memsets (nsys prints the others empty).
struct gpu_trace_row {
  timestamp_ns start = 0;
  std::uint64_t duration = 0;
  std::uint32_t correlation = 0;
  gpu_operation op = gpu_operation::kernel;
  std::uint32_t grid[3] = {0, 0, 0};
  std::uint16_t block[3] = {0, 0, 0};
  std::uint16_t registers = 0;
  std::uint32_t shared_bytes = 0;   ///< static + dynamic (the trace keeps their sum)
  std::uint64_t bytes = 0;
  bool has_throughput = false;      ///< false for kernels and for a copy or memset of 0 ns (nsys: NULL)
  std::uint64_t throughput = 0;     ///< bytes a second, nsys's `bytes * (1000000000 / duration)` in integers
  memory_kind src = memory_kind::unknown; ///< a memset's memory
  memory_kind dst = memory_kind::unknown; ///< copies only
  std::uint16_t device = 0;
  std::string device_name;          ///< empty when the trace does not describe the device
  std::uint32_t context = 0;
  std::uint32_t stream = 0;
  std::string name;                 ///< the kernel's in the chosen form, `[CUDA memcpy ...]`, `[CUDA memset]`
};

/// The Category column of `cuda_gpu_sum` and `cuda_api_gpu_sum`.
enum class operation_category : std::uint8_t { cuda_api, cuda_kernel, memory_oper };

/// One row of `cuda_gpu_sum` (kernels, copies and memsets) or `cuda_api_gpu_sum` (API calls too),
/// grouped by name.
struct gpu_summary_row {
  double time_percent = 0.0;
  duration_stats time; ///< count is "Instances"
  operation_category category = operation_category::cuda_kernel; ///< of the group's first operation
  std::string name;    ///< "Operation"
};

/// One row of `cuda_gpu_kern_gb_sum`: kernels grouped by name, grid and block.
struct kernel_grid_summary_row {
  double time_percent = 0.0;
  duration_stats time; ///< count is "Instances"
  std::uint32_t grid[3] = {0, 0, 0};
  std::uint16_t block[3] = {0, 0, 0};
  std::string name;
};

/// One row of `cuda_kern_exec_trace`: a kernel joined with the API call of its correlation id.
struct kernel_exec_trace_row {
  timestamp_ns api_start = 0;
  std::uint64_t api_duration = 0;
  bool queued = false;               ///< the kernel started at or after the API call returned
  timestamp_ns queue_start = 0;      ///< the API call's end, when queued
  std::uint64_t queue_duration = 0;  ///< kernel start - API end, when queued
  timestamp_ns kernel_start = 0;
  std::uint64_t kernel_duration = 0;
  std::uint64_t total_duration = 0;  ///< max(API end, kernel end) - API start
  std::uint64_t pid = 0;
  std::uint64_t tid = 0;
  std::uint16_t device = 0;
  std::string api_name;
  std::uint32_t grid[3] = {0, 0, 0};
  std::uint16_t block[3] = {0, 0, 0};
  std::string kernel;
};

/// One row of `cuda_kern_exec_sum`: the trace's rows grouped by (PID, TID, device, API, kernel).
struct kernel_exec_summary_row {
  std::uint64_t pid = 0;
  std::uint64_t tid = 0;
  std::uint16_t device = 0;
  duration_stats total;  ///< count is "Count"
  duration_stats api;
  duration_stats queue;  ///< of the queued rows only; count is "QCount" (0: nsys prints the queue columns empty)
  duration_stats kernel;
  std::string api_name;
  std::string kernel_name;
};

/// One row of `nvtx_pushpop_sum` or `nvtx_startend_sum`: ranges of one style grouped by label.
struct range_style_summary_row {
  double time_percent = 0.0;
  duration_stats time; ///< count is "Instances"
  std::string range;   ///< "domain:name", ":name" in the default domain
};

/// One row of `nvtx_pushpop_trace`: one push/pop range with its place in the stack.
struct range_trace_row {
  timestamp_ns start = 0;
  timestamp_ns end = 0;            ///< start + duration
  std::uint64_t duration = 0;
  std::uint64_t child_duration = 0; ///< "DurChild": the children's durations summed
  std::uint64_t self_duration = 0;  ///< "DurNonChild": duration - child_duration (0 if the children sum to more)
  std::string name;                 ///< the label, "domain:name"
  std::uint64_t pid = 0;
  std::uint64_t tid = 0;
  std::uint32_t level = 0;          ///< 0 for an outermost range
  std::uint64_t children = 0;
  std::uint32_t range = 0;          ///< "RangeId": the index in `trace::ranges`
  std::uint32_t parent = no_index;  ///< "ParentId", `no_index` for an outermost range
  std::string stack;                ///< "RangeStack": ":outer:...:range" by RangeId
  std::string name_tree;            ///< "NameTree": the name after "--" per level
};

/// One row of `nvtx_gpu_proj_trace`: one range instance that launched GPU work, projected onto
/// the GPU (first start to last end of that work).
struct range_projection_trace_row {
  std::string name;                    ///< the label, "domain:name"
  timestamp_ns projected_start = 0;
  std::uint64_t projected_duration = 0;
  timestamp_ns start = 0;              ///< "Orig Start"
  std::uint64_t duration = 0;          ///< "Orig Duration"
  bool push_pop = true;                ///< Style: PushPop or StartEnd
  std::uint64_t pid = 0;
  std::uint64_t tid = 0;
  std::uint64_t gpu_ops = 0;           ///< "NumGPUOps": launches (a graph launch is one)
  std::uint32_t level = 0;
  std::uint64_t children = 0;          ///< children that launched GPU work
  std::uint32_t range = 0;             ///< "RangeId": the index in `trace::ranges`
  std::uint32_t parent = no_index;     ///< "ParentId"
  std::string stack;                   ///< "RangeStack"
};

} // namespace v1
} // namespace nvscope

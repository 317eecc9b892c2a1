// nvscope-target: cupti
#pragma once

/// \file collect/options.hpp
/// What the collector records and how (`collector_options`), and what it saw besides the
/// trace (`collector_stats`). Plain types: no CUPTI here.
///
/// \code
///   #include <nvscope/collect/options.hpp>
///
///   nvscope::collector_options o;
///   o.kinds = nvscope::activity::kernels | nvscope::activity::nvtx;
///   o.only_in_capture = true;
/// \endcode

#include <nvscope/trace/totals.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <string_view>

namespace nvscope {
inline namespace v1 {

/// `collector_options::memory_limit` for "keep every record raw, however long the run".
inline constexpr std::size_t no_memory_limit = std::numeric_limits<std::size_t>::max();

/// What the collector records; combine with `|`.
///
/// \code
///   nvscope::collector_options o;
///   o.kinds = nvscope::activity::kernels | nvscope::activity::nvtx;
/// \endcode
enum class activity : std::uint32_t {
  none = 0,
  kernels = 1u << 0,     ///< CUPTI CONCURRENT_KERNEL
  copies = 1u << 1,      ///< MEMCPY
  memsets = 1u << 2,     ///< MEMSET
  syncs = 1u << 3,       ///< host waits: sync callbacks, or SYNCHRONIZATION (see `sync_source`)
  nvtx = 1u << 4,        ///< NVTX ranges, marks, domain and thread names (CUPTI's NVTX callbacks)
  runtime_api = 1u << 5, ///< RUNTIME: every CUDA runtime call as an `api_record`
  driver_api = 1u << 6,  ///< DRIVER: every driver call as an `api_record`
  overhead = 1u << 7,    ///< OVERHEAD: CUPTI's own cost, reported in `collector_stats`
  /// The default: what the summaries and exports need.
  standard = kernels | copies | memsets | syncs | nvtx,
};
constexpr activity operator|(activity a, activity b) noexcept {
  return static_cast<activity>(static_cast<std::uint32_t>(a) | static_cast<std::uint32_t>(b));
}
constexpr bool has(activity set, activity one) noexcept {
  return (static_cast<std::uint32_t>(set) & static_cast<std::uint32_t>(one)) != 0;
}

/// Where the collector learns which thread launched each kernel, copy and memset, and when
/// (needed to tie GPU work to the NVTX range open on that thread). Measured on an H200 in
/// bench/results/collector.json.
enum class launch_source : std::uint8_t {
  /// A CUPTI callback on entry to the launch and sync calls of the driver API only. Runtime
  /// launches reach the driver through these calls with the runtime call's correlation id, so
  /// one callback per launch covers runtime, driver and graph launches. The default.
  driver_callbacks,
  /// Callbacks in both the runtime and the driver API domain (up to two per runtime launch).
  runtime_and_driver_callbacks,
  /// No launch callbacks: CUPTI's RUNTIME and DRIVER activity records, decoded from the
  /// buffers (every runtime and driver call becomes a record inside CUPTI).
  api_activity,
};

/// Where the collector's synchronisations (`trace::syncs`, with `activity::syncs`) come from.
/// Measured on an H200 in bench/results/collector.json.
enum class sync_source : std::uint8_t {
  /// CUPTI callbacks on entry to and exit from the sync calls (cudaDeviceSynchronize,
  /// cudaStreamSynchronize, cudaEventSynchronize, cudaStreamWaitEvent and the driver's
  /// cuCtxSynchronize, cuStreamSynchronize, cuEventSynchronize, cuStreamWaitEvent), in the API
  /// domains of `launches`: each record spans the call, i.e. the time the host thread was
  /// blocked, with its thread, kind and (for stream calls) stream. No cost on launches. A
  /// runtime sync and the driver call inside it are one record. The default.
  host_callbacks,
  /// CUPTI's SYNCHRONIZATION activity kind: CUPTI's own start and end of each wait, with
  /// stream and context ids. Enabling it adds to the cost of every kernel launch.
  activity,
};

/// How the collector runs.
///
/// \code
///   nvscope::collector_options o;
///   o.buffer_size = 4 << 20; o.buffer_count = 4;   // at most 16 MiB of CUPTI buffers
///   o.only_in_capture = true;                       // keep only what capture guards select
///   nvscope::collector c(o);
/// \endcode
struct collector_options {
  activity kinds = activity::standard;
  /// CUPTI activity buffers: `buffer_count` of `buffer_size` bytes, allocated at start, never
  /// more. When all are full before CUPTI hands one back, records are dropped and counted.
  std::size_t buffer_size = std::size_t{8} << 20;
  std::size_t buffer_count = 8;
  /// Record launch threads and times (CUPTI callbacks on launch and sync calls): needed to tie
  /// kernels to the NVTX range open on the launching thread.
  bool record_launches = true;
  /// How launches are recorded when `record_launches` is on.
  launch_source launches = launch_source::driver_callbacks;
  /// Where synchronisations come from when `kinds` has `activity::syncs`.
  sync_source syncs = sync_source::host_callbacks;
  /// Keep only what was launched inside `trace::capture_windows`: between the program's
  /// cudaProfilerStart/Stop (or cuProfilerStart/Stop) calls, whoever makes them, and inside
  /// nvscope's capture guards (capture/listener.hpp). Profiler calls are followed whenever the
  /// collector subscribes to CUPTI callbacks (the default) and always with this option.
  bool only_in_capture = false;
  /// Kernel names demangled (see docs/collector.md for the demangler); false keeps the mangled names.
  bool demangle = true;
  /// Print each problem as one line on stderr (always also in `collector::errors()`).
  bool print_errors = true;

  /// Bytes of raw records held at most, all together (docs/collector.md, "Long runs"); a
  /// collection never aborts for it. Without `bounded`, every record is kept raw while they
  /// fit (a short run's trace is exactly what `no_memory_limit` gives); past the limit, later
  /// GPU records, syncs and API calls are folded into running totals (`collector::folded()`)
  /// instead, said in one line. With `bounded`, kept steps are given up (the fastest of the
  /// slowest first), then the windows keep no more, each said in one line; the summaries and
  /// totals stay whole. `no_memory_limit`: keep everything, however long the run.
  std::size_t memory_limit = std::size_t{1} << 30;

  /// A long run in bounded memory (docs/collector.md, "Long runs"): each buffer's records are
  /// sorted as it is decoded (GPU records, syncs, API calls, and NVTX ranges and marks as they
  /// close); those inside a window are kept raw, those of a step are held until the step is
  /// summarised, the rest are folded into running totals (`collector::folded()`) and released. `result()` then holds the flight recorder (the
  /// last `keep_steps` and the `keep_slowest` slowest steps) and the windows' records. The
  /// windows: with `only_in_capture`, capture guards and the program's profiler starts and
  /// stops as they happen; `keep_step_raw`'s steps; `collector::keep_raw_between`.
  bool bounded = false;
  std::size_t keep_steps = 3;   ///< with `bounded`: the last N steps kept raw
  std::size_t keep_slowest = 3; ///< with `bounded`: the K slowest steps (by wall time) kept raw
  /// With `bounded`: which NVTX push/pop range names are steps. nullptr: `step`, `step_N`,
  /// `step N`, `iteration N` (pass `nvscope::is_step_name` of analyze/step_names.hpp for the
  /// analysis' full rule; collect does not read analysis).
  bool (*is_step_name)(std::string_view) = nullptr;
  /// With `bounded`: steps (numbered from 0 in the order they begin) whose raw records are kept
  /// as a capture window's are, beside the flight recorder (a step schedule's active steps).
  std::function<bool(std::uint64_t)> keep_step_raw;
  /// With `bounded`: the first NVTX range this selects (by its name and its domain's name,
  /// empty in the default domain) is a window of raw records, opened and closed as its push or
  /// start and its pop or end are seen (nvscope run's --nvtx-capture). Names given as
  /// registered strings are not matched while recording.
  std::function<bool(std::string_view name, std::string_view domain)> keep_range_raw;
  /// With `bounded`: each step's summary as it ends, on CUPTI's buffer thread.
  std::function<void(const step_totals&)> on_step;
};

/// What the collector saw besides the trace: losses, buffer use, calibration.
struct collector_stats {
  std::uint64_t records_decoded = 0;
  std::uint64_t dropped_records = 0;    ///< CUPTI had no buffer space (also in trace::lost)
  std::uint64_t incomplete_records = 0; ///< GPU records with no end: counted, not reported
  std::uint64_t buffers_refused = 0;    ///< requests CUPTI made while every buffer was out
  std::uint64_t buffers_completed = 0;
  std::size_t buffers_high_water = 0;
  std::uint64_t host_calls_lost = 0;    ///< launch records not kept (no memory; trace::lost.launches_lost)
  std::uint64_t buffer_errors = 0;      ///< buffers not read to their end (trace::lost.buffer_errors)
  std::uint64_t late_buffers = 0;       ///< buffers delivered while no collector recorded (trace::lost.late_buffers)
  std::uint64_t foreign_releases = 0;   ///< buffers handed back that the pool never lent (trace::lost.foreign_releases)
  bool nvtx_too_early = false;          ///< NVTX started before the collector routed it (trace::lost.nvtx_too_early)
  std::uint64_t records_outside_capture = 0;
  std::uint64_t records_before_start = 0; ///< the collector's own warm-up operation (see start()): dropped
  std::uint64_t overhead_ns = 0;        ///< CUPTI's OVERHEAD records, summed, when enabled
  std::uint64_t unmatched_range_ends = 0; ///< NVTX pops and ends with no open range
  std::uint64_t records_not_decoded = 0; ///< records of kinds not turned into trace records
  std::int64_t clock_offset_ns = 0;     ///< trace clock minus host steady_clock, at start
  std::int64_t clock_drift_ns = 0;      ///< how much that offset moved by stop
  std::uint64_t launch_calls_runtime = 0; ///< launch and sync calls recorded in the runtime API
  std::uint64_t launch_calls_driver = 0;  ///< ... and in the driver API
  std::uint64_t sync_calls_nested = 0;    ///< sync calls inside another (the driver call of a runtime sync): folded
  std::uint64_t sync_calls_unpaired = 0;  ///< sync calls with an entry and no exit at stop (or the reverse): not reported
  std::uint64_t records_folded = 0;       ///< GPU records, syncs (and API calls past `memory_limit`) folded into `collector::folded()`
  bool memory_limit_reached = false;      ///< without `bounded`: records past `memory_limit` were folded, not kept
  std::uint64_t calls_past_limit = 0;     ///< without `bounded`: launch and sync calls past `memory_limit`, not kept
  std::uint64_t steps_summarised = 0;     ///< `bounded`: steps summarised as they ended
  std::uint64_t steps_lossy = 0;          ///< `bounded`: ... of which some loss was noticed while they ran
  std::uint64_t steps_given_up = 0;       ///< `bounded`: kept steps released to stay within `memory_limit`
  std::size_t raw_bytes_high_water = 0;   ///< `bounded`: most bytes of raw records held at once
};

} // namespace v1
} // namespace nvscope

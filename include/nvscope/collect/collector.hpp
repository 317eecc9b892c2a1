// nvscope-target: cupti
#pragma once

/// \file collect/collector.hpp
/// The in-process collector: kernels, copies, memsets, synchronisations and NVTX ranges
/// recorded through CUPTI with no external tool, delivered as a plain `nvscope::trace`.
///
/// \code
///   #include <nvscope/collect/collector.hpp>
///
///   int main() {
///     nvscope::collector c;            // before the first NVTX call: routes NVTX to CUPTI
///     c.start();                       // false (and one line on stderr) when it cannot run
///     run_workload();
///     c.stop();                        // device sync, forced flush, records decoded
///     const nvscope::trace& t = c.result();
///     std::printf("%zu kernels, %llu dropped\n", t.kernels.size(),
///                 (unsigned long long)t.lost.dropped_records);
///   }
/// \endcode
///
/// One collector runs at a time in a process (CUPTI's subscription is per process). Call
/// start, stop, flush and drain from one thread; the recorded program may use any number.

#include <nvscope/capture/listener.hpp>
#include <nvscope/collect/detail/buffer_pool.hpp>
#include <nvscope/collect/detail/finish.hpp>
#include <nvscope/collect/detail/launch_log.hpp>
#include <nvscope/collect/detail/nvtx_listener.hpp>
#include <nvscope/collect/detail/cupti_api.hpp>
#include <nvscope/collect/detail/decode.hpp>
#include <nvscope/trace.hpp>

#include <cuda_runtime_api.h>
#include <cupti.h>
#include <nvtx3/nvToolsExt.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <unistd.h>
#include <utility>
#include <vector>

namespace nvscope {
inline namespace v1 {

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
/// bench/results/collector.md.
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
/// Measured on an H200 in bench/results/collector.md.
enum class sync_source : std::uint8_t {
  /// CUPTI callbacks on entry to and exit from the sync calls (cudaDeviceSynchronize,
  /// cudaStreamSynchronize, cudaEventSynchronize, cudaStreamWaitEvent and the driver's
  /// cuCtxSynchronize, cuStreamSynchronize, cuEventSynchronize, cuStreamWaitEvent), in the API
  /// domains of `launches`: each record spans the call, i.e. the time the host thread was
  /// blocked, with its thread, kind and (for stream calls) stream. No cost on launches. A
  /// runtime sync and the driver call inside it are one record. The default.
  host_callbacks,
  /// CUPTI's SYNCHRONIZATION activity kind: CUPTI's own start and end of each wait, with
  /// stream and context ids. Enabling it slows every kernel launch (0.16 us on the H200).
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
  /// Keep only what was launched between capture start and stop (capture_listener.hpp).
  bool only_in_capture = false;
  /// Kernel names as `abi::__cxa_demangle` gives them; false keeps the mangled names.
  bool demangle = true;
  /// Print each problem as one line on stderr (always also in `collector::errors()`).
  bool print_errors = true;
};

/// What the collector saw besides the trace: losses, buffer use, calibration.
struct collector_stats {
  std::uint64_t records_decoded = 0;
  std::uint64_t dropped_records = 0;    ///< CUPTI had no buffer space (also in trace::lost)
  std::uint64_t incomplete_records = 0; ///< GPU records with no end: counted, not reported
  std::uint64_t buffers_refused = 0;    ///< requests CUPTI made while every buffer was out
  std::uint64_t buffers_completed = 0;
  std::size_t buffers_high_water = 0;
  std::uint64_t host_calls_lost = 0;    ///< launch records not kept (no memory)
  std::uint64_t records_outside_capture = 0;
  std::uint64_t records_before_start = 0; ///< the collector's own warm-up operation (see start()): dropped
  std::uint64_t overhead_ns = 0;        ///< CUPTI's OVERHEAD records, summed, when enabled
  std::uint64_t markers_seen = 0;       ///< NVTX MARKER records CUPTI delivered (MARKER is not enabled by default)
  std::uint64_t unmatched_range_ends = 0; ///< NVTX pops and ends with no open range
  std::uint64_t records_not_decoded = 0; ///< records of kinds (or marker flags) not turned into trace records
  std::int64_t clock_offset_ns = 0;     ///< trace clock minus host steady_clock, at start
  std::int64_t clock_drift_ns = 0;      ///< how much that offset moved by stop
  std::uint64_t launch_calls_runtime = 0; ///< launch and sync calls recorded in the runtime API
  std::uint64_t launch_calls_driver = 0;  ///< ... and in the driver API
  std::uint64_t sync_calls_nested = 0;    ///< sync calls inside another (the driver call of a runtime sync): folded
  std::uint64_t sync_calls_unpaired = 0;  ///< sync calls with an entry and no exit at stop (or the reverse): not reported
};

class collector;

namespace detail {

// Which CUDA calls the launch callback records, by name prefix (covers _v2, _ptsz, ... forms).
struct host_call_prefixes {
  // Calls that launch GPU work: their correlation id is the one on the kernel, copy or memset
  // (for a graph launch, on every node it runs).
  static constexpr const char* launches[] = {"cudaLaunch", "cudaGraphLaunch", "cudaMemcpy", "cudaMemset",
                                             "cuLaunch",   "cuGraphLaunch",   "cuMemcpy",   "cuMemset"};
  // Calls that wait: their correlation id is the one on the SYNCHRONIZATION record; with
  // sync_source::host_callbacks their entry and exit make the sync record.
  static constexpr const char* syncs[] = {"cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize",
                                          "cudaStreamWaitEvent",   "cuCtxSynchronize",      "cuStreamSynchronize",
                                          "cuEventSynchronize",    "cuStreamWaitEvent"};
  // What each of `syncs` waits on.
  static constexpr sync_kind sync_kinds[] = {sync_kind::context, sync_kind::stream, sync_kind::event,
                                             sync_kind::stream_wait_event, sync_kind::context, sync_kind::stream,
                                             sync_kind::event, sync_kind::stream_wait_event};
  static_assert(sizeof(syncs) / sizeof(syncs[0]) == sizeof(sync_kinds) / sizeof(sync_kinds[0]), "one kind per sync call");
};

// The flags of one callback id, by its name: launch or sync, the sync's kind, per-thread
// stream (_ptsz), driver domain. `sync_spans`: syncs are recorded from their callbacks (entry
// and exit), not only for their thread.
inline std::uint8_t host_call_flags_for(const char* name, bool is_driver, bool want_launches, bool want_syncs,
                                        bool sync_spans) {
  auto starts_with = [](const char* s, const char* prefix) { return std::strncmp(s, prefix, std::strlen(prefix)) == 0; };
  std::uint32_t flags = 0;
  if (want_launches)
    for (const char* pre : host_call_prefixes::launches)
      if (starts_with(name, pre)) flags = host_call_launch;
  if (want_syncs)
    for (std::size_t i = 0; i < sizeof(host_call_prefixes::syncs) / sizeof(host_call_prefixes::syncs[0]); ++i)
      if (starts_with(name, host_call_prefixes::syncs[i])) {
        flags = host_call_sync | (static_cast<std::uint32_t>(host_call_prefixes::sync_kinds[i]) << host_call_kind_shift);
        if (sync_spans) flags |= host_call_sync_span;
        if (std::strstr(name, "_ptsz") != nullptr) flags |= host_call_per_thread;
      }
  if (flags != 0 && is_driver) flags |= host_call_driver;
  return static_cast<std::uint8_t>(flags);
}

// The activity kinds, in the order they are enabled (and disabled in reverse).
struct activity_kind_entry {
  activity option;
  CUpti_ActivityKind kind;
  bool optional; // a failure to enable it is reported but does not stop the collector
};
struct activity_kind_list {
  static constexpr activity_kind_entry entries[] = {
      // CONCURRENT_KERNEL, not KERNEL: KERNEL serialises kernels; the two exclude each other.
      {activity::kernels, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, false},
      {activity::copies, CUPTI_ACTIVITY_KIND_MEMCPY, false},
      {activity::memsets, CUPTI_ACTIVITY_KIND_MEMSET, false},
      // Host waits, with sync_source::activity only (it slows every launch); their thread comes
      // from the sync callback's correlation id.
      {activity::syncs, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, false},
      // NVTX is not here: CUPTI 13's MARKER activity misses nvtxDomain* calls, so ranges come
      // from the NVTX callback domain instead (detail/collector_nvtx.hpp).
      {activity::runtime_api, CUPTI_ACTIVITY_KIND_RUNTIME, false},
      {activity::driver_api, CUPTI_ACTIVITY_KIND_DRIVER, false},
      {activity::overhead, CUPTI_ACTIVITY_KIND_OVERHEAD, true},
  };
};

// Process-wide collector state: one CUPTI subscription per process. Leaked on purpose, so that
// CUPTI callbacks arriving during process exit find it alive.
struct collector_process {
  std::mutex control;   // start/stop of collectors
  std::mutex decode;    // the running collector's trace, while buffers are decoded
  collector* owner = nullptr;
  buffer_pool pool;
  std::atomic<bool> recording{false};
  std::atomic<bool> exiting{false};
  std::atomic<std::uint64_t> host_calls_lost{0};
  std::atomic<std::uint64_t> late_buffers{0};
  std::vector<std::uint8_t> runtime_flags; // host_call_flags by runtime callback id
  std::vector<std::uint8_t> driver_flags;  // by driver callback id
  CUpti_SubscriberHandle subscriber = nullptr;
  bool atexit_registered = false;
};

inline collector_process& collector_state() {
  static auto* p = new collector_process();
  return *p;
}

inline const char* cupti_api_name(bool is_driver, std::uint32_t cbid) {
  const char* name = nullptr;
  if (cupti().cuptiGetCallbackName(is_driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API, cbid,
                                   &name) != CUPTI_SUCCESS)
    return nullptr;
  return name;
}

// The launch callback: on entry to a recorded call, a thread-local append.
inline void CUPTIAPI on_host_call(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  if (domain == CUPTI_CB_DOMAIN_NVTX) {
    if (collector_state().recording.load(std::memory_order_relaxed)) {
      try {
        record_nvtx_call(cbid, static_cast<const CUpti_NvtxData*>(data));
      } catch (...) {
        collector_state().host_calls_lost.fetch_add(1, std::memory_order_relaxed);
      }
    }
    return;
  }
  const auto* d = static_cast<const CUpti_CallbackData*>(data);
  auto& p = collector_state();
  if (!p.recording.load(std::memory_order_relaxed)) return;
  const auto& table = domain == CUPTI_CB_DOMAIN_DRIVER_API ? p.driver_flags : p.runtime_flags;
  std::uint32_t flags = cbid < table.size() ? table[cbid] : 0u;
  if (flags == 0) return;
  if (d->callbackSite != CUPTI_API_ENTER) {
    // Exits matter only for syncs recorded from callbacks: the end of the wait.
    if ((flags & host_call_sync_span) == 0) return;
    const std::uint64_t now = steady_ns();
    flags |= host_call_exit;
    const bool stream_call = (flags & host_call_kind_mask) == (static_cast<std::uint32_t>(sync_kind::stream) << host_call_kind_shift) ||
                             (flags & host_call_kind_mask) == (static_cast<std::uint32_t>(sync_kind::stream_wait_event) << host_call_kind_shift);
    auto get_stream = cupti().cuptiGetStreamIdEx;
    if (stream_call && get_stream != nullptr && d->functionParams != nullptr) {
      // Every stream sync and stream wait call takes the stream first.
      CUstream stream = *static_cast<const CUstream*>(d->functionParams);
      std::uint32_t id = 0;
      if (get_stream(d->context, stream, (flags & host_call_per_thread) != 0 ? 1 : 0, &id) == CUPTI_SUCCESS)
        flags |= host_call_stream_bits(id);
    }
    if (!record_host_call(now, d->correlationId, flags)) p.host_calls_lost.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  if (!record_host_call(steady_ns(), d->correlationId, flags))
    p.host_calls_lost.fetch_add(1, std::memory_order_relaxed);
}

inline void CUPTIAPI on_buffer_requested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) {
  auto& p = collector_state();
  *max_records = 0;
  *buffer = p.pool.acquire();
  *size = *buffer != nullptr ? p.pool.buffer_size() : 0;
}

inline void CUPTIAPI on_buffer_completed(CUcontext ctx, std::uint32_t stream, std::uint8_t* buffer, std::size_t,
                                         std::size_t valid);

// Says once per process that NVTX was initialised before the collector could route it.
inline void report_nvtx_too_late(bool print) {
  static std::atomic<bool> said{false};
  if (said.exchange(true)) return;
  if (print)
    std::fprintf(stderr,
                 "nvscope: collector: NVTX was initialised before the collector set NVTX_INJECTION64_PATH; "
                 "NVTX ranges of this run are not recorded (construct the collector, or call "
                 "nvscope::prepare_collector(), before the first NVTX call)\n");
}

// True when this shared object's NVTX has initialised with no tool behind it.
inline bool nvtx_initialised_without_tool() noexcept {
  const auto& g = NVTX_VERSIONED_IDENTIFIER(nvtxGlobals);
  return g.initState == NVTX_INIT_STATE_COMPLETE && g.nvtxRangePushA_impl_fnptr == nullptr &&
         g.nvtxMarkA_impl_fnptr == nullptr;
}

} // namespace detail

/// Routes NVTX to CUPTI so that the collector sees ranges: sets `NVTX_INJECTION64_PATH` to the
/// loaded libcupti unless a value is already there (under nsys it names nsys's own tool, and
/// is left alone). Must run before the program's first NVTX call; the collector's constructor
/// calls it. Returns false when libcupti cannot be loaded.
///
/// \code
///   int main() {
///     nvscope::prepare_collector();   // first thing, if the collector is created later
///     ...
///   }
/// \endcode
inline bool prepare_collector() {
  auto& api = detail::cupti();
  if (!api.loaded || api.path.empty()) return false;
  ::setenv("NVTX_INJECTION64_PATH", api.path.c_str(), 0);
  return true;
}

/// The in-process CUPTI collector. RAII: the destructor stops a running collection, except
/// during process exit, where it touches neither CUDA nor CUPTI and says what was lost.
///
/// \code
///   nvscope::collector c;
///   if (!c.start()) return;            // c.errors() holds the one-line reason
///   { nvtx3::scoped_range r{"step"}; my_kernel<<<g, b>>>(); }
///   c.stop();
///   for (const auto& k : c.result().kernels) use(k);
/// \endcode
class collector final : public capture_listener {
 public:
  explicit collector(collector_options options = {}) : options_(options) {
    if (has(options_.kinds, activity::nvtx)) prepare_collector();
  }
  collector(const collector&) = delete;
  collector& operator=(const collector&) = delete;

  ~collector() override {
    if (!active_) return;
    if (detail::collector_state().exiting.load()) {
      abandon();
      return;
    }
    stop();
  }

  /// Starts recording. False when it cannot (no GPU, no libcupti, another profiler holds
  /// CUPTI, another collector runs): the program then runs on un-collected, and `errors()`
  /// says why in one line (also printed unless `print_errors` is false).
  bool start() {
    if (active_) return true;
    auto& p = detail::collector_state();
    std::lock_guard<std::mutex> control(p.control);
    trace_ = trace{};
    stats_ = collector_stats{};
    windows_.clear();
    sync_calls_.clear();
    decoder_ = std::make_unique<detail::activity_decoder>(trace_, options_.demangle, &detail::cupti_api_name);
    if (p.owner != nullptr) return fail("another nvscope collector is already running in this process");
    if (p.exiting.load()) return fail("the process is exiting");
    int devices = 0;
    cudaError_t ce = cudaGetDeviceCount(&devices);
    if (ce != cudaSuccess || devices == 0)
      return fail(std::string("no CUDA device or driver (cudaGetDeviceCount: ") +
                  (ce != cudaSuccess ? cudaGetErrorString(ce) : "0 devices") + ")");
    auto& api = detail::cupti();
    if (!api.loaded) return fail(api.error);
    if (has(options_.kinds, activity::nvtx)) {
      prepare_collector();
    }
    if (options_.buffer_count == 0) return fail("collector_options::buffer_count is 0");
    if (!p.pool.reserve(options_.buffer_size, options_.buffer_count))
      return fail("could not allocate " + std::to_string(options_.buffer_count) + " activity buffers of " +
                  std::to_string(options_.buffer_size) + " bytes");
    if (!begin_instrumentation()) {
      p.pool.release_all();
      return false;
    }
    if (has(options_.kinds, activity::nvtx)) {
      const char* inj = std::getenv("NVTX_INJECTION64_PATH");
      if (detail::nvtx_initialised_without_tool()) detail::report_nvtx_too_late(options_.print_errors);
      else if (inj != nullptr && api.path != inj)
        note(std::string("NVTX_INJECTION64_PATH names another tool (") + inj +
             "); NVTX ranges go to it, not to the collector");
    }
    absorb_first_gpu_operation();
    {
      auto& log = detail::nvtx_log();
      std::lock_guard<std::mutex> lock(log.mutex);
      log.events.clear();
    }
    detail::drain_host_calls([](std::uint64_t, const detail::host_call&) {}); // calls of earlier runs
    detail::clock_calibration::measure([] { return now(); }, calibration_.host0, calibration_.offset0);
    calibration_.has_end = false;
    trace_.process_id = static_cast<std::uint64_t>(::getpid());
    trace_.begin = now();
    {
      std::lock_guard<std::mutex> lock(p.decode);
      p.owner = this;
    }
    p.host_calls_lost.store(0);
    if (!p.atexit_registered) {
      p.atexit_registered = std::atexit(&collector::at_process_exit) == 0;
    }
    active_ = true;
    p.recording.store(true);
    if (options_.only_in_capture) add_capture_listener(*this);
    return true;
  }

  /// Delivers every buffer CUPTI holds, partly filled ones too, and decodes it now.
  void flush() {
    if (!active_) return;
    check(NVSCOPE_CUPTI_CALL(cuptiActivityFlushAll, (CUPTI_ACTIVITY_FLAG_FLUSH_FORCED)));
  }

  /// Stops recording: waits for the device, flushes every buffer (forced), ends the CUPTI
  /// subscription, joins launches to GPU records and nests the ranges. Then `result()` holds
  /// the trace. Safe to call twice. False when something was lost or failed (see `errors()`).
  bool stop() {
    if (!active_) return errors_.empty();
    auto& p = detail::collector_state();
    std::lock_guard<std::mutex> control(p.control);
    if (options_.only_in_capture) {
      remove_capture_listener(*this);
      capture_stopped();
    }
    const timestamp_ns stop_called = now(); // what starts from here on is the collector's own
    cudaError_t ce = cudaDeviceSynchronize();
    if (ce != cudaSuccess)
      note(std::string("cudaDeviceSynchronize failed before the final flush (") + cudaGetErrorString(ce) +
           "); work still on the GPU may be missing");
    trace_.finish = now();
    detail::clock_calibration::measure([] { return now(); }, calibration_.host1, calibration_.offset1);
    calibration_.has_end = true;
    p.recording.store(false);
    end_instrumentation();
    {
      std::lock_guard<std::mutex> lock(p.decode);
      p.owner = nullptr;
    }
    collect_host_calls();
    if (!sync_calls_.empty()) {
      detail::sync_pairing_counts sc;
      auto host_syncs = detail::syncs_from_host_calls(std::move(sync_calls_), &sc);
      sync_calls_.clear();
      stats_.sync_calls_nested = sc.nested;
      stats_.sync_calls_unpaired = sc.unpaired;
      trace_.syncs.insert(trace_.syncs.end(), host_syncs.begin(), host_syncs.end());
    }
    {
      std::vector<detail::nvtx_event> events;
      {
        auto& log = detail::nvtx_log();
        std::lock_guard<std::mutex> lock(log.mutex);
        events.swap(log.events);
      }
      stats_.unmatched_range_ends = detail::nvtx_events_to_ranges(
          std::move(events), trace_, [this](std::uint64_t h) { return calibration_.to_trace(h); },
          [this](std::uint64_t os) { return decoder_->thread_index(os); }, detail::registered_nvtx_names());
    }
    // What ran before start() returned is not the program's recorded work: the operation
    // absorb_first_gpu_operation() issued (and its sync, under sync_source::activity).
    auto before_start = [this](const auto& r) { return r.start < trace_.begin; };
    auto drop_before_start = [&](auto& records) {
      const auto n = records.size();
      records.erase(std::remove_if(records.begin(), records.end(), before_start), records.end());
      stats_.records_before_start += n - records.size();
    };
    drop_before_start(trace_.kernels);
    drop_before_start(trace_.copies);
    drop_before_start(trace_.memsets);
    drop_before_start(trace_.syncs);
    drop_before_start(trace_.api_calls);
    std::vector<detail::time_window> windows = windows_;
    auto fc = detail::finish_trace(trace_, std::move(host_calls_), options_.only_in_capture ? &windows : nullptr);
    host_calls_.clear();
    for (auto& s : trace_.syncs)
      if (s.thread == detail::activity_decoder::no_thread) s.thread = decoder_->thread_index(0);
    // The device synchronisation of stop() itself is not the program's: it began after
    // stop() was called (trace_.finish is later, once the GPU has drained).
    auto own = [stop_called](const auto& r) { return r.start >= stop_called; };
    trace_.syncs.erase(std::remove_if(trace_.syncs.begin(), trace_.syncs.end(), own), trace_.syncs.end());
    trace_.api_calls.erase(std::remove_if(trace_.api_calls.begin(), trace_.api_calls.end(), own), trace_.api_calls.end());
    const auto& dc = decoder_->counts();
    stats_.records_decoded = dc.records;
    stats_.incomplete_records = dc.incomplete;
    stats_.overhead_ns = dc.overhead_ns;
    stats_.markers_seen = dc.markers;
    stats_.records_not_decoded = dc.unknown_kinds;
    stats_.records_outside_capture = fc.records_outside_capture;
    stats_.buffers_refused = p.pool.refusals();
    stats_.buffers_high_water = p.pool.high_water();
    stats_.host_calls_lost += p.host_calls_lost.load();
    stats_.clock_offset_ns = calibration_.offset0;
    stats_.clock_drift_ns = calibration_.offset1 - calibration_.offset0;
    trace_.lost.dropped_records = stats_.dropped_records;
    trace_.lost.incomplete_records = stats_.incomplete_records;
    if (p.pool.in_use() == 0) p.pool.release_all(); // else CUPTI still holds one: keep all
    if (stats_.dropped_records > 0)
      note(std::to_string(stats_.dropped_records) + " activity records dropped: all " +
           std::to_string(options_.buffer_count) + " buffers of " + std::to_string(options_.buffer_size) +
           " bytes were full (" + std::to_string(stats_.buffers_refused) +
           " buffer requests refused); raise buffer_size or buffer_count");
    if (stats_.host_calls_lost > 0)
      note(std::to_string(stats_.host_calls_lost) + " launch records lost (out of memory)");
    if (trace_.lost.unclosed_ranges > 0 && options_.print_errors)
      note(std::to_string(trace_.lost.unclosed_ranges) + " NVTX ranges were still open at stop");
    active_ = false;
    return errors_.empty();
  }

  /// Flushes and hands over the GPU records (kernels, copies, memsets, syncs) decoded since the
  /// last drain, with a copy of the string table, while recording goes on. Ranges, launches and
  /// API calls stay for `stop()`. For per-iteration measurement (nvscope/collect/benchmark.hpp).
  trace drain() {
    trace out;
    if (!active_) return out;
    flush();
    auto& p = detail::collector_state();
    std::lock_guard<std::mutex> lock(p.decode);
    out.strings = trace_.strings;
    out.kernels.swap(trace_.kernels);
    out.copies.swap(trace_.copies);
    out.memsets.swap(trace_.memsets);
    out.syncs.swap(trace_.syncs);
    out.lost.dropped_records = stats_.dropped_records - drained_dropped_;
    drained_dropped_ = stats_.dropped_records;
    return out;
  }

  /// True between a successful start() and stop().
  bool active() const noexcept { return active_; }

  /// The trace of the last collection (complete after stop()).
  const trace& result() const& noexcept { return trace_; }
  /// Moves the trace out.
  trace take() { return std::move(trace_); }

  const collector_stats& stats() const noexcept { return stats_; }

  /// Every problem met, one line each, oldest first; empty when all went well.
  const std::vector<std::string>& errors() const noexcept { return errors_; }

  const collector_options& options() const noexcept { return options_; }

  /// Now, on the trace clock (CUPTI's timestamp; steady_clock when CUPTI is not loaded).
  static timestamp_ns now() noexcept {
    auto& api = detail::cupti();
    std::uint64_t t = 0;
    if (api.loaded && api.cuptiGetTimestamp(&t) == CUPTI_SUCCESS) return t;
    return detail::steady_ns();
  }

  /// A host steady_clock time (ns since its epoch) on the trace clock, by the calibration
  /// measured at start and stop (see docs/collector.md).
  timestamp_ns to_trace_clock(std::uint64_t steady_clock_ns) const noexcept { return calibration_.to_trace(steady_clock_ns); }

  // capture_listener: windows of capture, on the trace clock.
  void capture_started() noexcept override {
    std::lock_guard<std::mutex> lock(windows_mutex_);
    try {
      windows_.push_back(detail::time_window{now(), ~timestamp_ns{0}});
    } catch (...) {
    }
  }
  void capture_stopped() noexcept override {
    std::lock_guard<std::mutex> lock(windows_mutex_);
    if (!windows_.empty() && windows_.back().end == ~timestamp_ns{0}) windows_.back().end = now();
  }

 private:
  friend void CUPTIAPI detail::on_buffer_completed(CUcontext, std::uint32_t, std::uint8_t*, std::size_t, std::size_t);

  // CUPTI's first GPU operation after its activity kinds are enabled waits about 3 ms (seen on
  // an H200, 2026-11-21: once per start, whatever the operation, not once per kernel), which
  // would land on the program's first kernel. A 4-byte memset on a private non-blocking stream
  // takes it here instead: no device-wide sync, so work the program has queued is not waited
  // on. Its records fall before trace_.begin and are dropped at stop().
  void absorb_first_gpu_operation() {
    cudaStream_t s = nullptr;
    if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) {
      note(std::string("could not create the collector's warm-up stream (") + cudaGetErrorString(cudaGetLastError()) +
           "); the first kernel may carry CUPTI's start-up wait");
      return;
    }
    void* p = nullptr;
    cudaError_t e = cudaMallocAsync(&p, 4, s);
    if (e == cudaSuccess) e = cudaMemsetAsync(p, 0, 4, s);
    if (p != nullptr) {
      const cudaError_t f = cudaFreeAsync(p, s);
      if (e == cudaSuccess) e = f;
    }
    const cudaError_t w = cudaStreamSynchronize(s);
    if (e == cudaSuccess) e = w;
    const cudaError_t d = cudaStreamDestroy(s);
    if (e == cudaSuccess) e = d;
    if (e != cudaSuccess) {
      cudaGetLastError(); // not sticky: clear it, so the program's next check does not see it
      note(std::string("the collector's warm-up memset failed (") + cudaGetErrorString(e) +
           "); the first kernel may carry CUPTI's start-up wait");
    }
  }

  bool fail(std::string message) {
    note(std::move(message));
    return false;
  }
  void note(std::string message) {
    if (options_.print_errors) std::fprintf(stderr, "nvscope: collector: %s\n", message.c_str());
    errors_.push_back(std::move(message));
  }
  bool check(const detail::call_status& s) {
    if (!s) note(s.message);
    return static_cast<bool>(s);
  }

  // Subscribe, enable the callbacks, register the buffers, enable the kinds: end_instrumentation
  // undoes them in reverse. A failure part way undoes what was done.
  bool begin_instrumentation() {
    auto& p = detail::collector_state();
    stage_ = 0;
    if (options_.record_launches || host_sync_callbacks()) build_host_call_tables();
    if (host_callbacks() || has(options_.kinds, activity::nvtx)) {
      if (!check(NVSCOPE_CUPTI_CALL(cuptiSubscribe, (&p.subscriber, &detail::on_host_call, nullptr)))) return false;
      stage_ = 1;
      if (host_callbacks() && !enable_host_call_callbacks(1)) {
        end_instrumentation();
        return false;
      }
      if (has(options_.kinds, activity::nvtx))
        for (CUpti_CallbackId id : detail::nvtx_callback_list::ids)
          if (!check(NVSCOPE_CUPTI_CALL(cuptiEnableCallback, (1, p.subscriber, CUPTI_CB_DOMAIN_NVTX, id)))) {
            end_instrumentation();
            return false;
          }
    }
    stage_ = 2;
    CUpti_ActivityThreadIdType prior{};
    if (detail::cupti().cuptiGetThreadIdType(&prior) == CUPTI_SUCCESS) prior_thread_type_ = prior;
    // System thread ids (gettid), as the launch log records them.
    if (!check(NVSCOPE_CUPTI_CALL(cuptiSetThreadIdType, (CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM)))) {
      end_instrumentation();
      return false;
    }
    stage_ = 3;
    if (!check(NVSCOPE_CUPTI_CALL(cuptiActivityRegisterCallbacks,
                                  (&detail::on_buffer_requested, &detail::on_buffer_completed)))) {
      end_instrumentation();
      return false;
    }
    stage_ = 4;
    enabled_.clear();
    const bool api_launches = options_.record_launches && options_.launches == launch_source::api_activity;
    if (api_launches)
      decoder_->take_api_calls(&p.runtime_flags, &p.driver_flags, has(options_.kinds, activity::runtime_api),
                               has(options_.kinds, activity::driver_api));
    for (const auto& e : detail::activity_kind_list::entries) {
      const bool for_launches =
          api_launches && (e.kind == CUPTI_ACTIVITY_KIND_RUNTIME || e.kind == CUPTI_ACTIVITY_KIND_DRIVER);
      if (!has(options_.kinds, e.option) && !for_launches) continue;
      if (e.kind == CUPTI_ACTIVITY_KIND_SYNCHRONIZATION && host_sync_callbacks()) continue; // from callbacks
      auto s = NVSCOPE_CUPTI_CALL(cuptiActivityEnable, (e.kind));
      if (s) {
        enabled_.push_back(e.kind);
      } else if (e.optional) {
        note(s.message + " (optional kind " + std::to_string(static_cast<int>(e.kind)) + "; going on without it)");
      } else {
        note(s.message);
        end_instrumentation();
        return false;
      }
    }
    return true;
  }

  void end_instrumentation() {
    auto& p = detail::collector_state();
    if (stage_ >= 4) {
      check(NVSCOPE_CUPTI_CALL(cuptiActivityFlushAll, (CUPTI_ACTIVITY_FLAG_FLUSH_FORCED)));
      for (auto it = enabled_.rbegin(); it != enabled_.rend(); ++it) check(NVSCOPE_CUPTI_CALL(cuptiActivityDisable, (*it)));
      enabled_.clear();
      // What was still in flight when the kinds went off.
      check(NVSCOPE_CUPTI_CALL(cuptiActivityFlushAll, (CUPTI_ACTIVITY_FLAG_FLUSH_FORCED)));
      std::size_t dropped = 0;
      if (detail::cupti().cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped) == CUPTI_SUCCESS)
        stats_.dropped_records += dropped;
    }
    // stage 3: CUPTI offers no way to unregister buffer callbacks; they find no owner from now.
    if (stage_ >= 3) detail::cupti().cuptiSetThreadIdType(prior_thread_type_);
    if (stage_ >= 2 && host_callbacks()) enable_host_call_callbacks(0);
    if (stage_ >= 1) {
      if (has(options_.kinds, activity::nvtx))
        for (CUpti_CallbackId id : detail::nvtx_callback_list::ids)
          detail::cupti().cuptiEnableCallback(0, p.subscriber, CUPTI_CB_DOMAIN_NVTX, id);
      check(NVSCOPE_CUPTI_CALL(cuptiUnsubscribe, (p.subscriber)));
      p.subscriber = nullptr;
    }
    stage_ = 0;
  }

  // True when launches come from CUPTI callbacks (not from API activity records).
  bool launch_callbacks() const noexcept {
    return options_.record_launches && options_.launches != launch_source::api_activity;
  }

  // True when syncs are recorded from the sync calls' callbacks (sync_source::host_callbacks).
  bool host_sync_callbacks() const noexcept {
    return has(options_.kinds, activity::syncs) && options_.syncs == sync_source::host_callbacks;
  }

  // True when any launch or sync callback is enabled.
  bool host_callbacks() const noexcept { return launch_callbacks() || host_sync_callbacks(); }

  // Finds the launch and sync calls by name in both API domains: flags by callback id.
  void build_host_call_tables() {
    auto& p = detail::collector_state();
    const bool want_launches = options_.record_launches;
    // Sync calls: the wait itself (host_callbacks), or the thread of a SYNCHRONIZATION record.
    const bool want_syncs = host_sync_callbacks() || (has(options_.kinds, activity::syncs) && options_.record_launches);
    const bool driver_domain[] = {false, true};
    for (bool is_driver : driver_domain) {
      auto& table = is_driver ? p.driver_flags : p.runtime_flags;
      const auto size = is_driver ? static_cast<std::uint32_t>(CUPTI_DRIVER_TRACE_CBID_SIZE)
                                  : static_cast<std::uint32_t>(CUPTI_RUNTIME_TRACE_CBID_SIZE);
      table.assign(size, 0);
      for (std::uint32_t cbid = 1; cbid < size; ++cbid) {
        const char* name = detail::cupti_api_name(is_driver, cbid);
        if (name == nullptr) continue;
        table[cbid] = detail::host_call_flags_for(name, is_driver, want_launches, want_syncs, host_sync_callbacks());
      }
    }
  }

  // Turns the launch and sync callbacks on or off, in the domains `options_.launches` names.
  bool enable_host_call_callbacks(std::uint32_t enable) {
    auto& p = detail::collector_state();
    struct domain_info {
      CUpti_CallbackDomain domain;
      const std::vector<std::uint8_t>* table;
    };
    const domain_info all[] = {
        {CUPTI_CB_DOMAIN_DRIVER_API, &p.driver_flags},
        {CUPTI_CB_DOMAIN_RUNTIME_API, &p.runtime_flags},
    };
    // Both domains only for runtime_and_driver_callbacks; else the driver domain, whose calls
    // the runtime makes too (a runtime sync fires the driver sync call's callbacks).
    const std::size_t domains =
        options_.record_launches && options_.launches == launch_source::runtime_and_driver_callbacks ? 2 : 1;
    const bool launches = launch_callbacks();
    for (std::size_t i = 0; i < domains; ++i) {
      const auto& d = all[i];
      for (std::uint32_t cbid = 1; cbid < d.table->size(); ++cbid) {
        const std::uint8_t flags = (*d.table)[cbid];
        // Without launch callbacks (api_activity, or record_launches off) only sync spans.
        if (flags == 0 || (!launches && (flags & detail::host_call_sync_span) == 0)) continue;
        auto s = NVSCOPE_CUPTI_CALL(cuptiEnableCallback, (enable, p.subscriber, d.domain, cbid));
        if (!s && enable) {
          note(s.message);
          return false;
        }
      }
    }
    return true;
  }

  void collect_host_calls() {
    stats_.host_calls_lost += detail::drain_host_calls([this](std::uint64_t os_thread, const detail::host_call& c) {
      if ((c.flags & detail::host_call_sync_span) != 0) { // entry or exit of a sync: paired at stop
        sync_calls_.push_back(detail::sync_call{calibration_.to_trace(c.time), c.correlation,
                                                decoder_->thread_index(os_thread), c.flags});
        if ((c.flags & detail::host_call_exit) == 0)
          ++((c.flags & detail::host_call_driver) != 0 ? stats_.launch_calls_driver : stats_.launch_calls_runtime);
        return;
      }
      detail::timed_host_call t;
      t.time = calibration_.to_trace(c.time);
      t.correlation = c.correlation;
      t.thread = decoder_->thread_index(os_thread);
      t.is_sync = (c.flags & detail::host_call_sync) != 0;
      ++((c.flags & detail::host_call_driver) != 0 ? stats_.launch_calls_driver : stats_.launch_calls_runtime);
      host_calls_.push_back(t);
    });
    // Launches taken from RUNTIME/DRIVER activity records: already on the trace clock.
    for (const auto& c : decoder_->api_host_calls()) {
      detail::timed_host_call t;
      t.time = c.time;
      t.correlation = c.correlation;
      t.thread = c.thread;
      t.is_sync = (c.flags & detail::host_call_sync) != 0;
      ++((c.flags & detail::host_call_driver) != 0 ? stats_.launch_calls_driver : stats_.launch_calls_runtime);
      host_calls_.push_back(t);
    }
    decoder_->api_host_calls().clear();
  }

  // Called under collector_state().decode, on CUPTI's thread.
  void decode_buffer(CUcontext ctx, std::uint32_t stream, std::uint8_t* buffer, std::size_t valid) {
    CUpti_Activity* rec = nullptr;
    for (;;) {
      CUptiResult r = detail::cupti().cuptiActivityGetNextRecord(buffer, valid, &rec);
      if (r == CUPTI_ERROR_MAX_LIMIT_REACHED) break;
      if (r != CUPTI_SUCCESS) {
        ++buffer_errors_;
        break;
      }
      try {
        decoder_->decode(rec);
      } catch (...) {
        ++buffer_errors_; // out of memory while growing the trace
      }
    }
    std::size_t dropped = 0;
    if (detail::cupti().cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS)
      stats_.dropped_records += dropped;
    ++stats_.buffers_completed;
  }

  // Process exit with a collector still running: no CUDA, no CUPTI; say what is lost.
  static void at_process_exit() {
    auto& p = detail::collector_state();
    p.exiting.store(true);
    p.recording.store(false);
    std::lock_guard<std::mutex> lock(p.decode);
    if (p.owner != nullptr && p.owner->options_.print_errors)
      std::fprintf(stderr,
                   "nvscope: collector: still running at exit (stop() was never called): its %zu kernel, %zu copy "
                   "and %zu range records and the buffers still inside CUPTI are discarded\n",
                   p.owner->trace_.kernels.size(), p.owner->trace_.copies.size(), p.owner->trace_.ranges.size());
  }

  // The destructor during exit: detach without calling CUDA or CUPTI.
  void abandon() noexcept {
    auto& p = detail::collector_state();
    std::lock_guard<std::mutex> lock(p.decode);
    if (p.owner == this) p.owner = nullptr;
    active_ = false;
  }

  collector_options options_;
  bool active_ = false;
  int stage_ = 0;
  CUpti_ActivityThreadIdType prior_thread_type_ = CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT;
  std::vector<CUpti_ActivityKind> enabled_;
  trace trace_;
  std::unique_ptr<detail::activity_decoder> decoder_;
  collector_stats stats_;
  std::uint64_t drained_dropped_ = 0;
  std::uint64_t buffer_errors_ = 0;
  std::vector<std::string> errors_;
  std::vector<detail::timed_host_call> host_calls_;
  std::vector<detail::sync_call> sync_calls_; // sync_source::host_callbacks: entries and exits
  detail::clock_calibration calibration_;
  std::mutex windows_mutex_;
  std::vector<detail::time_window> windows_;
};

namespace detail {
inline void CUPTIAPI on_buffer_completed(CUcontext ctx, std::uint32_t stream, std::uint8_t* buffer, std::size_t,
                                         std::size_t valid) {
  auto& p = collector_state();
  {
    std::lock_guard<std::mutex> lock(p.decode);
    if (p.owner != nullptr && valid > 0) p.owner->decode_buffer(ctx, stream, buffer, valid);
    else if (valid > 0) p.late_buffers.fetch_add(1, std::memory_order_relaxed);
  }
  if (buffer != nullptr) p.pool.release(buffer);
}
} // namespace detail

} // namespace v1
} // namespace nvscope

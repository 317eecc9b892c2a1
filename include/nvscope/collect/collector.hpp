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
#include <nvscope/collect/detail/activity_kinds.hpp>
#include <nvscope/collect/detail/buffer_decoder.hpp>
#include <nvscope/collect/detail/context.hpp>
#include <nvscope/collect/detail/cupti_api.hpp>
#include <nvscope/collect/detail/decode.hpp>
#include <nvscope/collect/detail/finish.hpp>
#include <nvscope/collect/detail/host_call_table.hpp>
#include <nvscope/collect/detail/instrumentation.hpp>
#include <nvscope/collect/detail/launch_log.hpp>
#include <nvscope/collect/detail/long_run.hpp>
#include <nvscope/collect/detail/nvtx_listener.hpp>
#include <nvscope/collect/detail/process_state.hpp>
#include <nvscope/collect/detail/warmup.hpp>
#include <nvscope/collect/detail/bounded.hpp>
#include <nvscope/collect/detail/budget.hpp>
#include <nvscope/collect/options.hpp>
#include <nvscope/trace.hpp>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unistd.h>
#include <utility>
#include <vector>

namespace nvscope {
inline namespace v1 {

namespace detail {
// True while NVTX_INJECTION64_PATH holds the value this process put there.
inline std::atomic<bool>& nvtx_route_is_ours() noexcept {
  static std::atomic<bool> ours{false};
  return ours;
}

// Takes NVTX_INJECTION64_PATH back when this process set it and it still names libcupti, so
// that child processes started from now on do not load libcupti for nothing. NVTX in this
// process, once initialised, keeps its tool: only children read the variable again. Left
// alone while a collector records.
inline void release_nvtx_route() noexcept {
  if (collector_state().recording.load() || !nvtx_route_is_ours().exchange(false)) return; // another collector records
  const char* value = std::getenv("NVTX_INJECTION64_PATH");
  if (value != nullptr && cupti().path == value) ::unsetenv("NVTX_INJECTION64_PATH");
}

// Whether a collection could start here: libcupti loads and a CUDA device is present.
inline bool recording_possible() noexcept {
  int devices = 0;
  return cupti().loaded && cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0;
}
} // namespace detail

/// Routes NVTX to CUPTI so that the collector sees ranges: sets `NVTX_INJECTION64_PATH` to the
/// loaded libcupti unless a value is already there (under nsys it names nsys's own tool, and
/// is left alone). Must run before the program's first NVTX call; the collector's constructor
/// calls it when a collection could start (libcupti loads, a CUDA device is present), and the
/// collector takes the variable back when start() fails and at stop(), so that child processes
/// inherit it only while recording (see docs/collector.md). Returns false when libcupti
/// cannot be loaded.
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
  if (std::getenv("NVTX_INJECTION64_PATH") == nullptr && ::setenv("NVTX_INJECTION64_PATH", api.path.c_str(), 0) == 0)
    detail::nvtx_route_is_ours().store(true);
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
  explicit collector(collector_options options = {})
      : options_(options), plan_(detail::instrumentation_plan::from(options)) {
    if (plan_.nvtx && detail::recording_possible()) prepare_collector();
  }
  collector(const collector&) = delete;
  collector& operator=(const collector&) = delete;

  ~collector() override {
    if (!active_) {
      detail::release_nvtx_route();
      return;
    }
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
    std::lock_guard<std::mutex> control(detail::collector_state().control);
    reset();
    if (!can_start() || !reserve_buffers() || !begin_instrumentation()) {
      detail::release_nvtx_route();
      return false;
    }
    check_nvtx_route();
    const std::string warmup = detail::absorb_first_gpu_operation();
    if (!warmup.empty()) note(warmup);
    begin_recording();
    return true;
  }

  /// Delivers every buffer CUPTI holds, partly filled ones too, and decodes it now.
  void flush() {
    if (!active_) return;
    check(NVSCOPE_CUPTI_CALL(cuptiActivityFlushAll, (CUPTI_ACTIVITY_FLAG_FLUSH_FORCED)));
  }

  /// Stops recording: waits for the device, flushes every buffer (forced), ends the CUPTI
  /// subscription, joins launches to GPU records and builds the ranges. Then `result()` holds
  /// the trace. Safe to call twice. False when something was lost or failed (see `errors()`).
  bool stop() {
    if (!active_) return errors_.empty();
    std::lock_guard<std::mutex> control(detail::collector_state().control);
    const timestamp_ns stop_called = wait_for_device();
    end_recording();
    finish_bounded();
    collect_host_calls();
    pair_host_syncs();
    build_ranges();
    drop_before_start();
    finish(stop_called);
    fill_stats();
    report_losses();
    detail::release_nvtx_route();
    active_ = false;
    return errors_.empty();
  }

  /// Flushes and hands over the GPU records (kernels, copies, memsets, syncs) decoded since the
  /// last drain, with copies of the string and kernel configuration tables, while recording
  /// goes on. Ranges, launches and API calls stay for `stop()`. For per-iteration measurement
  /// (nvscope/collect/benchmark.hpp).
  trace drain() {
    trace out;
    if (!active_) return out;
    flush();
    std::lock_guard<std::mutex> lock(detail::collector_state().decode);
    copy_tables(out);
    out.kernels.swap(trace_.kernels);
    out.copies.swap(trace_.copies);
    out.memsets.swap(trace_.memsets);
    out.syncs.swap(trace_.syncs);
    const std::uint64_t dropped = buffers_->counts().dropped;
    out.lost.dropped_records = dropped - drained_dropped_;
    drained_dropped_ = dropped;
    budget_.drained();
    return out;
  }

  /// True between a successful start() and stop().
  bool active() const noexcept { return active_; }

  /// The running totals of every record not in `result()` (folded as buffers arrived): with
  /// `collector_options::bounded`, or past `memory_limit`; empty otherwise. Complete after stop().
  totals folded() const {
    std::lock_guard<std::mutex> lock(detail::collector_state().decode);
    return folder_ ? folder_->folded() : budget_.folded();
  }

  /// With `collector_options::bounded`: records launched inside `w` (trace clock) are kept raw
  /// as a capture window's; for a window known in advance (nvscope run's --delay/--duration).
  void keep_raw_between(time_window w) {
    if (!folder_) return;
    std::lock_guard<std::mutex> lock(detail::collector_state().decode);
    folder_->window_begun(w.begin);
    folder_->window_ended(w.end);
  }

  /// With `collector_options::bounded`, while recording: a trace of the flight recorder as it
  /// stands (the kept steps' and the windows' GPU records, syncs, API calls and closed NVTX
  /// ranges, their launches, the string and configuration tables; ranges still open are left
  /// to stop()), without stopping. Empty otherwise.
  trace snapshot() {
    trace out;
    if (!active_ || !folder_) return out;
    flush();
    std::lock_guard<std::mutex> lock(detail::collector_state().decode);
    copy_tables(out);
    out.threads = trace_.threads;
    detail::bounded_records(*folder_, out);
    bounded_.launches_into(out);
    out.begin = trace_.begin;
    out.finish = now();
    return out;
  }

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

  // capture_listener: windows of capture, on the trace clock (a bounded collection keeps
  // their records raw).
  void capture_started() noexcept override {
    const timestamp_ns t = now();
    {
      std::lock_guard<std::mutex> lock(windows_mutex_);
      try {
        windows_.push_back(time_window{t, ~timestamp_ns{0}});
      } catch (...) {
      }
    }
    if (!folder_ || !options_.only_in_capture) return;
    std::lock_guard<std::mutex> decode(detail::collector_state().decode);
    try {
      folder_->window_begun(t);
    } catch (...) {
    }
  }
  void capture_stopped() noexcept override {
    const timestamp_ns t = now();
    {
      std::lock_guard<std::mutex> lock(windows_mutex_);
      if (!windows_.empty() && windows_.back().end == ~timestamp_ns{0}) windows_.back().end = t;
    }
    if (!folder_ || !options_.only_in_capture) return;
    std::lock_guard<std::mutex> decode(detail::collector_state().decode);
    folder_->window_ended(t);
  }

 private:
  // ---- start() ----

  void reset() {
    trace_ = trace{};
    stats_ = collector_stats{};
    windows_.clear();
    sync_calls_.clear();
    host_calls_.clear();
    drained_dropped_ = 0;
    decoder_ = std::make_unique<detail::activity_decoder>(trace_, options_.demangle, &detail::cupti_api_name);
    buffers_ = std::make_unique<detail::buffer_decoder>(*decoder_);
    folder_.reset();
    ranges_.reset();
    bounded_ = detail::bounded_state{};
    budget_ = detail::raw_budget(options_.bounded ? no_memory_limit : options_.memory_limit);
    if (!options_.bounded) {
      if (options_.memory_limit != no_memory_limit)
        buffers_->after_each_buffer([](void* self) { static_cast<collector*>(self)->weigh_buffer(); }, this);
      return;
    }
    detail::long_run_limits limits;
    limits.keep_steps = options_.keep_steps;
    limits.keep_slowest = options_.keep_slowest;
    limits.memory_limit = options_.memory_limit;
    limits.keep_raw = options_.keep_step_raw;
    folder_ = std::make_unique<detail::long_run_folder>(limits, options_.on_step, [this](std::string line) {
      if (options_.print_errors) std::fprintf(stderr, "nvscope: collector: %s\n", line.c_str());
      bounded_.notes.push_back(std::move(line)); // into errors() at stop: this runs on CUPTI's thread
    });
    buffers_->after_each_buffer([](void* self) { static_cast<collector*>(self)->fold_buffer(); }, this);
  }

  // ---- a bounded collection, after each buffer (CUPTI's thread, decode lock held) ----

  // The NVTX log is emptied into steps, windows and ranges; ranges and sync waits are placed as
  // they close, before the GPU records, so that a step's are placed before it is summarised.
  void fold_buffer() {
    if (options_.only_in_capture) follow_profiler_calls();
    const auto events = detail::scan_step_events(bounded_, *folder_, options_.is_step_name,
                                                 [this](std::uint64_t h) { return calibration_.to_trace(h); }, options_.keep_range_raw);
    live_ranges().add(events);
    folder_->take_ranges(live_ranges().closed(), live_ranges().closed_names(), trace_.strings, live_ranges().step_marker());
    drain_launches();
    pair_ended_syncs();
    folder_->losses_seen(detail::new_losses(bounded_, buffers_->counts(), detail::collector_state().host_calls_lost.load()));
    folder_->take(trace_, [this](std::uint32_t correlation, timestamp_ns start) { return bounded_.launched_at(correlation, start); });
    bounded_.prune(*folder_);
  }

  // The range builder of a bounded collection, made at its first use (names registered until
  // then are known to it).
  detail::live_ranges& live_ranges() {
    if (!ranges_)
      ranges_ = std::make_unique<detail::live_ranges>(
          trace_, [this](std::uint64_t h) { return calibration_.to_trace(h); },
          [this](std::uint64_t os) { return decoder_->thread_index(os); }, registered_nvtx_names(), options_.is_step_name);
    return *ranges_;
  }

  // sync_source::host_callbacks in a bounded collection: each wait paired as it ends, into the
  // live trace for the folder; a wait still going on stays for the next buffer.
  void pair_ended_syncs() {
    if (sync_calls_.empty()) return;
    detail::sync_pairing_counts sc;
    const auto syncs = detail::syncs_from_host_calls(detail::complete_sync_calls(sync_calls_), &sc);
    stats_.sync_calls_nested += sc.nested;
    stats_.sync_calls_unpaired += sc.unpaired;
    trace_.syncs.insert(trace_.syncs.end(), syncs.begin(), syncs.end());
  }

  // ---- an unbounded collection's memory limit, after each buffer (CUPTI's thread, decode lock held) ----

  void weigh_buffer() {
    std::string line = budget_.after_buffer(trace_);
    if (!line.empty()) {
      if (options_.print_errors) std::fprintf(stderr, "nvscope: collector: %s\n", line.c_str());
      bounded_.notes.push_back(std::move(line)); // into errors() at stop
    }
    if (budget_.over()) drain_calls_past_limit();
  }

  // Past the limit the launch log would grow with the run: its calls are drained now, those of
  // kept records (correlations up to the last kept) for stop(), the rest counted and dropped.
  void drain_calls_past_limit() {
    stats_.host_calls_lost += detail::drain_host_calls([this](std::uint64_t os_thread, const detail::host_call& c) {
      if (c.correlation > budget_.last_kept_correlation()) return budget_.count_call_dropped();
      const std::uint32_t thread = decoder_->thread_index(os_thread);
      if ((c.flags & detail::host_call_sync_span) != 0) {
        sync_calls_.push_back(detail::sync_call{calibration_.to_trace(c.time), c.correlation, thread, c.flags});
        if ((c.flags & detail::host_call_exit) == 0) count_host_call(c.flags);
        return;
      }
      add_host_call(calibration_.to_trace(c.time), c.correlation, thread, c.flags);
    });
  }

  // With only_in_capture: the program's profiler starts and stops open and close windows of
  // raw records as they come (kept for stop()'s capture windows).
  void follow_profiler_calls() {
    detail::follow_profiler_switches(bounded_, *folder_, detail::collector_state().take_profiler_calls(),
                                     [this](std::uint64_t h) { return calibration_.to_trace(h); });
  }

  // Launch calls into the bounded state (joined to their records as these arrive); sync calls
  // kept for stop() as an unbounded collection keeps them.
  void drain_launches() {
    stats_.host_calls_lost += detail::drain_host_calls([this](std::uint64_t os_thread, const detail::host_call& c) {
      const std::uint32_t thread = decoder_->thread_index(os_thread);
      if ((c.flags & detail::host_call_sync_span) != 0) {
        sync_calls_.push_back(detail::sync_call{calibration_.to_trace(c.time), c.correlation, thread, c.flags});
        if ((c.flags & detail::host_call_exit) == 0) count_host_call(c.flags);
        return;
      }
      bounded_.add_call(detail::timed_host_call{calibration_.to_trace(c.time), c.correlation, thread, (c.flags & detail::host_call_sync) != 0});
      count_host_call(c.flags);
    });
    // launch_source::api_activity: launches from RUNTIME/DRIVER records, on the trace clock already
    for (const auto& c : decoder_->api_host_calls()) {
      bounded_.add_call(detail::timed_host_call{c.time, c.correlation, c.thread, (c.flags & detail::host_call_sync) != 0});
      count_host_call(c.flags);
    }
    decoder_->api_host_calls().clear();
  }

  // stop(): every step summarised; the flight recorder's records back into the trace, with
  // the launch calls they need.
  void finish_bounded() {
    if (!folder_) return finish_budget();
    std::lock_guard<std::mutex> lock(detail::collector_state().decode);
    fold_buffer(); // what came after the last buffer: NVTX events, launch and sync calls
    folder_->finish(trace_.finish);
    for (auto& line : bounded_.notes) errors_.push_back(std::move(line));
    bounded_.notes.clear();
    detail::bounded_records(*folder_, trace_);
    trace_.lossy_steps = folder_->lossy_steps();
    std::sort(trace_.lossy_steps.begin(), trace_.lossy_steps.end(), [](const time_window& a, const time_window& b) { return a.begin < b.begin; });
    bounded_.calls_into(host_calls_);
    const auto& c = folder_->counts();
    stats_.records_folded = c.records_folded;
    stats_.steps_summarised = c.steps_summarised;
    stats_.steps_lossy = c.steps_lossy;
    stats_.steps_given_up = c.steps_given_up;
    stats_.raw_bytes_high_water = c.bytes_high_water;
  }

  // stop() of an unbounded collection: what its memory limit folded, said and counted.
  void finish_budget() {
    std::lock_guard<std::mutex> lock(detail::collector_state().decode);
    for (auto& line : bounded_.notes) errors_.push_back(std::move(line));
    bounded_.notes.clear();
    stats_.memory_limit_reached = budget_.over();
    stats_.records_folded = budget_.records_folded();
    stats_.calls_past_limit = budget_.calls_dropped();
  }

  void copy_tables(trace& out) const {
    out.strings = trace_.strings;
    out.kernel_names = trace_.kernel_names;
    out.kernel_name_spelling = trace_.kernel_name_spelling;
    out.kernel_configs = trace_.kernel_configs;
  }

  bool can_start() {
    auto& p = detail::collector_state();
    if (p.decoder != nullptr || p.recording.load()) return fail("another nvscope collector is already running in this process");
    if (p.exiting.load()) return fail("the process is exiting");
    int devices = 0;
    const cudaError_t ce = cudaGetDeviceCount(&devices);
    if (ce != cudaSuccess || devices == 0)
      return fail(std::string("no CUDA device or driver (cudaGetDeviceCount: ") +
                  (ce != cudaSuccess ? cudaGetErrorString(ce) : "0 devices") + ")");
    auto& api = detail::cupti();
    if (!api.loaded) return fail(api.error);
    if (options_.buffer_count == 0) return fail("collector_options::buffer_count is 0");
    if (plan_.nvtx) prepare_collector();
    return true;
  }

  bool reserve_buffers() {
    if (detail::collector_state().pool.reserve(options_.buffer_size, options_.buffer_count)) return true;
    return fail("could not allocate " + std::to_string(options_.buffer_count) + " activity buffers of " +
                std::to_string(options_.buffer_size) + " bytes");
  }

  // Host-call tables, the decoder attached, then CUPTI (instrumentation.hpp). On failure
  // everything is undone and the buffers freed.
  bool begin_instrumentation() {
    auto& p = detail::collector_state();
    p.tables = detail::host_call_tables{}; // nothing left from an earlier collection's options
    if (plan_.launch_flags || plan_.sync_callbacks)
      p.tables.build(plan_.launch_flags, plan_.sync_flags, plan_.sync_callbacks);
    if (plan_.api_launches)
      decoder_->take_api_calls(&p.tables.runtime, &p.tables.driver, has(options_.kinds, activity::runtime_api),
                               has(options_.kinds, activity::driver_api));
    p.attach(buffers_.get());
    const bool ok = instrumentation_.begin(plan_);
    for (auto& problem : instrumentation_.take_problems()) note(std::move(problem));
    if (ok) return true;
    p.attach(nullptr);
    p.pool.release_all();
    return false;
  }

  // NVTX reaches the collector only when NVTX loaded libcupti as its tool.
  void check_nvtx_route() {
    if (!plan_.nvtx) return;
    const char* inj = std::getenv("NVTX_INJECTION64_PATH");
    if (detail::nvtx_initialised_without_tool()) {
      stats_.nvtx_too_early = true;
      note_once_per_process("NVTX was initialised before the collector set NVTX_INJECTION64_PATH; NVTX ranges of "
                            "this run are not recorded (construct the collector, or call "
                            "nvscope::prepare_collector(), before the first NVTX call)");
    } else if (inj != nullptr && detail::cupti().path != inj) {
      note(std::string("NVTX_INJECTION64_PATH names another tool (") + inj +
           "); NVTX ranges go to it, not to the collector");
    }
  }

  void begin_recording() {
    auto& p = detail::collector_state();
    {
      auto& log = detail::nvtx_log();
      std::lock_guard<std::mutex> lock(log.mutex);
      log.events.clear();
    }
    // Devices and versions, before the trace begins: their CUDA calls are not the program's
    // (records before begin are dropped at stop); trace/analysis/export never see CUDA's types.
    detail::read_recording_context(trace_);
    detail::drain_host_calls([](std::uint64_t, const detail::host_call&) {}); // calls of earlier runs
    detail::clock_calibration::measure([] { return now(); }, calibration_.host0, calibration_.offset0);
    calibration_.has_end = false;
    trace_.process_id = static_cast<std::uint64_t>(::getpid());
    trace_.begin = now();
    trace_.context.at_start = detail::read_clock_reference([] { return now(); });
    p.host_calls_lost.store(0);
    p.print_at_exit = options_.print_errors;
    if (!p.atexit_registered) p.atexit_registered = std::atexit(&detail::report_recording_at_exit) == 0;
    active_ = true;
    p.recording.store(true);
    p.take_profiler_calls(); // calls of earlier runs
    add_capture_listener(*this);
  }

  // ---- stop() ----

  // Closes the capture window, waits for the device; returns when stop() was called (what
  // starts from then on is the collector's own).
  timestamp_ns wait_for_device() {
    remove_capture_listener(*this);
    const timestamp_ns stop_called = now();
    const cudaError_t ce = cudaDeviceSynchronize();
    if (ce != cudaSuccess)
      note(std::string("cudaDeviceSynchronize failed before the final flush (") + cudaGetErrorString(ce) +
           "); work still on the GPU may be missing");
    trace_.finish = now();
    trace_.context.at_end = detail::read_clock_reference([] { return now(); });
    detail::clock_calibration::measure([] { return now(); }, calibration_.host1, calibration_.offset1);
    calibration_.has_end = true;
    return stop_called;
  }

  // Callbacks off, final flush, CUPTI instrumentation undone, decoder detached.
  void end_recording() {
    auto& p = detail::collector_state();
    p.recording.store(false);
    buffers_->add_dropped(instrumentation_.end());
    for (auto& problem : instrumentation_.take_problems()) note(std::move(problem));
    p.attach(nullptr);
  }

  void collect_host_calls() {
    stats_.host_calls_lost += detail::drain_host_calls([this](std::uint64_t os_thread, const detail::host_call& c) {
      const std::uint32_t thread = decoder_->thread_index(os_thread);
      if ((c.flags & detail::host_call_sync_span) != 0) { // entry or exit of a sync: paired later
        sync_calls_.push_back(detail::sync_call{calibration_.to_trace(c.time), c.correlation, thread, c.flags});
        if ((c.flags & detail::host_call_exit) == 0) count_host_call(c.flags);
        return;
      }
      add_host_call(calibration_.to_trace(c.time), c.correlation, thread, c.flags);
    });
    // Launches taken from RUNTIME/DRIVER activity records: already on the trace clock.
    for (const auto& c : decoder_->api_host_calls()) add_host_call(c.time, c.correlation, c.thread, c.flags);
    decoder_->api_host_calls().clear();
  }

  void add_host_call(timestamp_ns time, std::uint32_t correlation, std::uint32_t thread, std::uint32_t flags) {
    host_calls_.push_back(detail::timed_host_call{time, correlation, thread, (flags & detail::host_call_sync) != 0});
    count_host_call(flags);
  }

  void count_host_call(std::uint32_t flags) noexcept {
    ++((flags & detail::host_call_driver) != 0 ? stats_.launch_calls_driver : stats_.launch_calls_runtime);
  }

  // sync_source::host_callbacks: entries and exits into one record per wait.
  void pair_host_syncs() {
    if (sync_calls_.empty()) return;
    detail::sync_pairing_counts sc;
    auto host_syncs = detail::syncs_from_host_calls(std::move(sync_calls_), &sc);
    sync_calls_.clear();
    stats_.sync_calls_nested += sc.nested;
    stats_.sync_calls_unpaired += sc.unpaired;
    trace_.syncs.insert(trace_.syncs.end(), host_syncs.begin(), host_syncs.end());
  }

  // NVTX calls into range records; names registered before the collector listened come from
  // annotation's registry (ODR-safe in every compile mode).
  void build_ranges() {
    if (folder_) { // bounded: the ranges were built as they came; those still open stay in the trace
      live_ranges().add(detail::take_nvtx_events());
      const auto& closed = live_ranges().closed();
      const auto& names = live_ranges().closed_names();
      for (std::size_t i = 0; i < closed.size(); ++i) {
        trace_.ranges.push_back(closed[i]);
        if (!names[i].empty()) trace_.ranges.back().name = trace_.strings.intern(names[i]);
      }
      live_ranges().closed().clear();
      live_ranges().closed_names().clear();
      live_ranges().name_open_steps();
      stats_.unmatched_range_ends = live_ranges().unmatched();
      return;
    }
    std::vector<detail::nvtx_event> events;
    {
      auto& log = detail::nvtx_log();
      std::lock_guard<std::mutex> lock(log.mutex);
      events.swap(log.events);
    }
    stats_.unmatched_range_ends = detail::nvtx_events_to_ranges(
        events, trace_, [this](std::uint64_t h) { return calibration_.to_trace(h); },
        [this](std::uint64_t os) { return decoder_->thread_index(os); }, registered_nvtx_names());
  }

  // What ran before start() returned is not the program's recorded work: the operation
  // absorb_first_gpu_operation() issued (and its sync, under sync_source::activity).
  void drop_before_start() {
    auto before_start = [this](const auto& r) { return r.start < trace_.begin; };
    auto drop = [&](auto& records) {
      const auto n = records.size();
      records.erase(std::remove_if(records.begin(), records.end(), before_start), records.end());
      stats_.records_before_start += n - records.size();
    };
    drop(trace_.kernels);
    drop(trace_.copies);
    drop(trace_.memsets);
    drop(trace_.syncs);
    drop(trace_.api_calls);
  }

  // The program's profiler starts and stops and nvscope's capture guards, as windows.
  void build_capture_windows() {
    std::vector<detail::profiler_switch> switches;
    auto calls = std::move(bounded_.profiler_calls); // those a bounded collection followed, then the rest
    for (auto& c : detail::collector_state().take_profiler_calls()) calls.push_back(c);
    for (const auto& c : calls)
      switches.push_back(detail::profiler_switch{calibration_.to_trace(c.time), c.start});
    std::vector<time_window> guards;
    {
      std::lock_guard<std::mutex> lock(windows_mutex_);
      guards = windows_;
    }
    trace_.capture_windows = detail::capture_windows_from(std::move(switches), std::move(guards), trace_.begin, trace_.finish);
  }

  // Joins, filters to capture windows, sorts; then drops stop()'s own device sync.
  void finish(timestamp_ns stop_called) {
    build_capture_windows();
    auto fc = detail::finish_trace(trace_, std::move(host_calls_), options_.only_in_capture ? &trace_.capture_windows : nullptr);
    host_calls_.clear();
    stats_.records_outside_capture = fc.records_outside_capture;
    for (auto& s : trace_.syncs)
      if (s.thread == detail::activity_decoder::no_thread) s.thread = decoder_->thread_index(0);
    auto own = [stop_called](const auto& r) { return r.start >= stop_called; };
    trace_.syncs.erase(std::remove_if(trace_.syncs.begin(), trace_.syncs.end(), own), trace_.syncs.end());
    trace_.api_calls.erase(std::remove_if(trace_.api_calls.begin(), trace_.api_calls.end(), own), trace_.api_calls.end());
  }

  void fill_stats() {
    auto& p = detail::collector_state();
    const auto& dc = decoder_->counts();
    const auto& bc = buffers_->counts();
    stats_.records_decoded = dc.records;
    stats_.incomplete_records = dc.incomplete;
    stats_.overhead_ns = dc.overhead_ns;
    trace_.context.overhead_measured = has(options_.kinds, activity::overhead);
    trace_.context.overhead_ns = dc.overhead_ns;
    stats_.records_not_decoded = dc.unknown_kinds;
    stats_.dropped_records = bc.dropped;
    stats_.buffers_completed = bc.completed;
    stats_.buffer_errors = bc.errors;
    stats_.buffers_refused = p.pool.refusals();
    stats_.buffers_high_water = p.pool.high_water();
    stats_.foreign_releases = p.pool.foreign_releases();
    stats_.late_buffers = p.late_buffers.exchange(0);
    stats_.host_calls_lost += p.host_calls_lost.load();
    stats_.clock_offset_ns = calibration_.offset0;
    stats_.clock_drift_ns = calibration_.offset1 - calibration_.offset0;
    if (p.pool.in_use() == 0) p.pool.release_all(); // else CUPTI still holds one: keep all
    copy_losses_to_trace();
  }

  void copy_losses_to_trace() noexcept {
    loss_counts& l = trace_.lost;
    l.dropped_records = stats_.dropped_records;
    l.incomplete_records = stats_.incomplete_records;
    l.buffer_errors = stats_.buffer_errors;
    l.late_buffers = stats_.late_buffers;
    l.foreign_releases = stats_.foreign_releases;
    l.nvtx_too_early = stats_.nvtx_too_early ? 1 : 0;
    l.launches_lost = stats_.host_calls_lost;
  }

  // One line per kind of loss (the too-early NVTX line was said at start).
  void report_losses() {
    const collector_stats& s = stats_;
    if (s.dropped_records > 0)
      note(std::to_string(s.dropped_records) + " activity records dropped: all " + std::to_string(options_.buffer_count) +
           " buffers of " + std::to_string(options_.buffer_size) + " bytes were full (" +
           std::to_string(s.buffers_refused) + " buffer requests refused); raise buffer_size or buffer_count");
    if (s.host_calls_lost > 0) note(std::to_string(s.host_calls_lost) + " launch records lost (out of memory)");
    if (s.buffer_errors > 0)
      note(std::to_string(s.buffer_errors) + " activity buffers not read to their end (a bad record, or out of memory)");
    if (s.late_buffers > 0)
      note(std::to_string(s.late_buffers) + " activity buffers arrived while no collector was recording: discarded");
    if (s.foreign_releases > 0)
      note(std::to_string(s.foreign_releases) + " activity buffers handed back that the pool never lent: ignored");
    if (trace_.lost.unclosed_ranges > 0 && options_.print_errors)
      note(std::to_string(trace_.lost.unclosed_ranges) + " NVTX ranges were still open at stop");
    if (options_.only_in_capture) report_empty_capture();
  }

  // only_in_capture kept no GPU work: say why in one line.
  void report_empty_capture() {
    if (!trace_.kernels.empty() || !trace_.copies.empty() || !trace_.memsets.empty()) return;
    if (trace_.capture_windows.empty())
      note("only_in_capture kept nothing: no capture window was seen while recording (no cudaProfilerStart or "
           "cuProfilerStart call, no nvscope capture guard)");
    else
      note("only_in_capture kept nothing: " + std::to_string(trace_.capture_windows.size()) +
           " capture windows were seen but no GPU work was launched inside them (" +
           std::to_string(stats_.records_outside_capture) + " records outside)");
  }

  // ---- errors ----

  bool fail(std::string message) {
    note(std::move(message));
    return false;
  }
  void note(std::string message) {
    if (options_.print_errors) std::fprintf(stderr, "nvscope: collector: %s\n", message.c_str());
    errors_.push_back(std::move(message));
  }
  // Kept in errors() every time; printed once per process (a benchmark may start many times).
  void note_once_per_process(std::string message) {
    static std::atomic<bool> said{false};
    if (options_.print_errors && !said.exchange(true)) std::fprintf(stderr, "nvscope: collector: %s\n", message.c_str());
    errors_.push_back(std::move(message));
  }
  bool check(const detail::call_status& s) {
    if (!s) note(s.message);
    return static_cast<bool>(s);
  }

  // The destructor during exit: detach without calling CUDA or CUPTI.
  void abandon() noexcept {
    auto& p = detail::collector_state();
    std::lock_guard<std::mutex> lock(p.decode);
    if (p.decoder == buffers_.get()) p.decoder = nullptr;
    active_ = false;
  }

  collector_options options_;
  detail::instrumentation_plan plan_;
  detail::instrumentation instrumentation_;
  bool active_ = false;
  trace trace_;
  std::unique_ptr<detail::activity_decoder> decoder_;
  std::unique_ptr<detail::buffer_decoder> buffers_;
  std::unique_ptr<detail::long_run_folder> folder_; // collector_options::bounded
  std::unique_ptr<detail::live_ranges> ranges_;     // ... its NVTX ranges, built as they come
  detail::bounded_state bounded_;
  detail::raw_budget budget_{no_memory_limit}; // collector_options::memory_limit without bounded
  collector_stats stats_;
  std::uint64_t drained_dropped_ = 0;
  std::vector<std::string> errors_;
  std::vector<detail::timed_host_call> host_calls_;
  std::vector<detail::sync_call> sync_calls_; // sync_source::host_callbacks: entries and exits
  detail::clock_calibration calibration_;
  std::mutex windows_mutex_;
  std::vector<time_window> windows_;
};

} // namespace v1
} // namespace nvscope

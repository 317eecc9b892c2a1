// nvscope-target: cupti
#pragma once

// What the collector shares with CUPTI's callbacks, once per process (per shared object that
// includes the collector; CUPTI's subscription is per process): the buffer pool, the host-call
// tables, and where completed buffers go. The buffer callback hands a buffer to the decoder
// attached here (`deliver`), never to a collector object; with none attached it counts the
// buffer as late and gives it back. Leaked on purpose, so that callbacks arriving during
// process exit find it alive.

#include <nvscope/collect/detail/buffer_decoder.hpp>
#include <nvscope/collect/detail/buffer_pool.hpp>
#include <nvscope/collect/detail/host_call_table.hpp>

#include <cupti.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <utility>
#include <vector>

namespace nvscope {
inline namespace v1 {
namespace detail {

// A cudaProfilerStart/Stop (or cuProfilerStart/Stop) call, by whoever made it: steady_clock
// time of its entry.
struct profiler_call {
  std::uint64_t time = 0;
  bool start = false;
};

struct collector_process {
  std::mutex control; // start/stop of collectors
  std::mutex decode;  // the attached decoder and the trace it writes
  buffer_decoder* decoder = nullptr;
  buffer_pool pool;
  std::atomic<bool> recording{false};
  std::atomic<bool> exiting{false};
  std::atomic<std::uint64_t> host_calls_lost{0};
  std::atomic<std::uint64_t> late_buffers{0};
  host_call_tables tables;
  std::mutex profiler_mutex; // profiler calls are rare: a lock, not the launch log
  std::vector<profiler_call> profiler_calls;
  CUpti_SubscriberHandle subscriber = nullptr;
  bool atexit_registered = false;
  bool print_at_exit = true; // the running collector's print_errors

  void note_profiler_call(std::uint64_t time, bool start) noexcept {
    try {
      std::lock_guard<std::mutex> lock(profiler_mutex);
      profiler_calls.push_back(profiler_call{time, start});
    } catch (...) {
      host_calls_lost.fetch_add(1, std::memory_order_relaxed);
    }
  }

  std::vector<profiler_call> take_profiler_calls() {
    std::lock_guard<std::mutex> lock(profiler_mutex);
    return std::exchange(profiler_calls, {});
  }

  // Routes completed buffers to `d` (nullptr: to nowhere; they are counted as late).
  void attach(buffer_decoder* d) {
    std::lock_guard<std::mutex> lock(decode);
    decoder = d;
  }

  // A completed buffer: decoded by the attached decoder, or counted late; then back to the pool.
  void deliver(CUcontext ctx, std::uint32_t stream, std::uint8_t* buffer, std::size_t valid) noexcept {
    {
      std::lock_guard<std::mutex> lock(decode);
      if (decoder != nullptr && valid > 0) decoder->decode(ctx, stream, buffer, valid);
      else if (valid > 0) late_buffers.fetch_add(1, std::memory_order_relaxed);
    }
    if (buffer != nullptr) pool.release(buffer);
  }
};

inline collector_process& collector_state() {
  static auto* p = new collector_process();
  return *p;
}

// Process exit with a collector still recording: no CUDA, no CUPTI; say what is lost.
inline void report_recording_at_exit() noexcept {
  auto& p = collector_state();
  p.exiting.store(true);
  p.recording.store(false);
  std::lock_guard<std::mutex> lock(p.decode);
  if (p.decoder == nullptr || !p.print_at_exit) return;
  const trace& t = p.decoder->output();
  std::fprintf(stderr,
               "nvscope: collector: still running at exit (stop() was never called): its %zu kernel, %zu copy "
               "and %zu memset records and the buffers still inside CUPTI are discarded\n",
               t.kernels.size(), t.copies.size(), t.memsets.size());
}

} // namespace detail
} // namespace v1
} // namespace nvscope

// nvscope-target: nvscope
#pragma once

// The host side of launches, recorded on the launching thread: when, and which correlation
// id. The launch callback runs once per kernel launch, so it must stay cheap: a thread-local
// append into a fixed chunk, one release store, no lock and no allocation except one chunk
// per 4096 calls. The collector drains all threads' logs while holding the registry lock.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <new>
#include <vector>

#include <sys/syscall.h>
#include <unistd.h>

namespace nvscope {
inline namespace v1 {
namespace detail {

// One host call the collector cares about.
struct host_call {
  std::uint64_t time = 0;        // steady_clock nanoseconds (converted when drained)
  std::uint32_t correlation = 0;
  std::uint32_t flags = 0;       // host_call_flags
};

enum host_call_flags : std::uint32_t {
  // Bits 0-7 are per callback id (the collector's tables hold them as one byte each).
  host_call_launch = 1u,     // kernel, copy, memset or graph launch
  host_call_sync = 2u,       // a host wait (device/stream/event synchronise, stream wait)
  host_call_driver = 4u,     // driver API (else runtime)
  host_call_sync_span = 8u,  // a sync recorded from its callbacks: entry and exit both logged
  host_call_per_thread = 16u, // a _ptsz call: stream 0 means the per-thread default stream
  host_call_kind_shift = 5u, // bits 5-7: the sync_kind (trace.hpp) of a sync call
  host_call_kind_mask = 7u << host_call_kind_shift,
  // Bits 8-31 are set per call, in the callback.
  host_call_exit = 1u << 8,  // the exit of a call (else its entry)
  host_call_stream_shift = 9u, // bits 9-31 of an exit: CUPTI's stream id + 1 (0: unknown)
};

// A host call once drained or decoded: on the trace clock, its thread as an index into
// `trace::threads`, `flags` as host_call_flags. Launch and sync calls taken from RUNTIME or
// DRIVER activity records (decode.hpp's api_host_call) and the entries and exits of sync calls
// seen by the callbacks (finish.hpp's sync_call) are both this.
struct traced_host_call {
  std::uint64_t time = 0;
  std::uint32_t correlation = 0;
  std::uint32_t thread = 0;
  std::uint32_t flags = 0;
};

// The stream part of an exit's flags: CUPTI's stream id + 1, or 0 when it is unknown or does
// not fit in the 23 bits left.
constexpr std::uint32_t host_call_stream_bits(std::uint32_t stream_id) noexcept {
  return stream_id < (1u << (32u - host_call_stream_shift)) - 1u ? (stream_id + 1u) << host_call_stream_shift : 0u;
}
// Whether the flags of an exit carry a stream id, and which.
constexpr bool host_call_has_stream(std::uint32_t flags) noexcept { return (flags >> host_call_stream_shift) != 0; }
constexpr std::uint32_t host_call_stream(std::uint32_t flags) noexcept { return (flags >> host_call_stream_shift) - 1u; }

struct host_call_chunk {
  static constexpr std::uint32_t capacity = 4096;
  host_call entries[capacity];
  std::atomic<host_call_chunk*> next{nullptr};
};

// One thread's log. Written only by its thread; read by the drainer.
struct host_call_log {
  std::uint64_t os_thread = 0;
  // writer side
  host_call_chunk* tail = nullptr;
  std::uint32_t tail_fill = 0;
  std::atomic<std::uint64_t> published{0};
  std::atomic<std::uint64_t> lost{0}; // no memory for a new chunk
  // reader side
  host_call_chunk* head = nullptr;
  std::uint32_t head_pos = 0;
  std::uint64_t consumed = 0;
};

struct host_call_registry {
  std::mutex mutex;
  std::vector<host_call_log*> logs; // never freed: threads may outlive any collector
};

inline host_call_registry& host_calls() {
  static auto* r = new host_call_registry(); // leaked on purpose: used during process exit
  return *r;
}

inline std::uint64_t os_thread_id() noexcept {
  return static_cast<std::uint64_t>(::syscall(SYS_gettid));
}

inline std::uint64_t steady_ns() noexcept {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

inline host_call_log*& this_thread_log() noexcept {
  thread_local host_call_log* log = nullptr;
  return log;
}

inline host_call_log* register_this_thread() noexcept {
  auto* log = new (std::nothrow) host_call_log();
  if (log == nullptr) return nullptr;
  log->os_thread = os_thread_id();
  log->tail = new (std::nothrow) host_call_chunk();
  log->head = log->tail;
  if (log->tail == nullptr) {
    delete log;
    return nullptr;
  }
  auto& r = host_calls();
  try {
    std::lock_guard<std::mutex> lock(r.mutex);
    r.logs.push_back(log);
  } catch (...) {
    delete log->tail;
    delete log;
    return nullptr;
  }
  this_thread_log() = log;
  return log;
}

// The hot path. Returns false when the call could not be kept (out of memory).
inline bool record_host_call(std::uint64_t time, std::uint32_t correlation, std::uint32_t flags) noexcept {
  host_call_log* log = this_thread_log();
  if (log == nullptr && (log = register_this_thread()) == nullptr) return false;
  if (log->tail_fill == host_call_chunk::capacity) {
    auto* chunk = new (std::nothrow) host_call_chunk();
    if (chunk == nullptr) {
      log->lost.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    log->tail->next.store(chunk, std::memory_order_release);
    log->tail = chunk;
    log->tail_fill = 0;
  }
  log->tail->entries[log->tail_fill++] = host_call{time, correlation, flags};
  log->published.store(log->published.load(std::memory_order_relaxed) + 1, std::memory_order_release);
  return true;
}

// Calls `sink(os_thread, const host_call&)` for every call published since the last drain,
// and frees the chunks the writers have moved past. Returns how many calls were lost.
template <class Sink>
std::uint64_t drain_host_calls(Sink&& sink) {
  auto& r = host_calls();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::uint64_t lost = 0;
  for (host_call_log* log : r.logs) {
    lost += log->lost.exchange(0, std::memory_order_relaxed);
    const std::uint64_t n = log->published.load(std::memory_order_acquire);
    while (log->consumed < n) {
      if (log->head_pos == host_call_chunk::capacity) {
        host_call_chunk* next = log->head->next.load(std::memory_order_acquire);
        if (next == nullptr) break; // cannot happen while n counts published entries
        delete log->head;
        log->head = next;
        log->head_pos = 0;
      }
      sink(log->os_thread, log->head->entries[log->head_pos++]);
      ++log->consumed;
    }
  }
  return lost;
}

// Host steady clock to the trace clock (CUPTI's). CUPTI stamps GPU records and NVTX markers on
// its own clock; the launch callback stamps with steady_clock, which is cheaper than a call
// into CUPTI. The offset between the two is measured at start and at stop, each time as the
// tightest of several bracketed reads, and interpolated linearly in between, so that slow drift
// of one clock against the other (NTP slewing) does not accumulate.
struct clock_calibration {
  std::uint64_t host0 = 0;
  std::int64_t offset0 = 0;
  std::uint64_t host1 = 0;
  std::int64_t offset1 = 0;
  bool has_end = false;

  // One point: `read_trace_clock()` bracketed by steady_clock reads.
  template <class TraceClock>
  static void measure(TraceClock&& read_trace_clock, std::uint64_t& host, std::int64_t& offset) {
    std::uint64_t best = ~0ull;
    for (int i = 0; i < 9; ++i) {
      std::uint64_t a = steady_ns();
      std::uint64_t t = read_trace_clock();
      std::uint64_t b = steady_ns();
      if (b - a < best) {
        best = b - a;
        host = a + (b - a) / 2;
        offset = static_cast<std::int64_t>(t) - static_cast<std::int64_t>(host);
      }
    }
  }

  std::int64_t offset_at(std::uint64_t host) const noexcept {
    if (!has_end || host1 == host0) return offset0;
    double f = (static_cast<double>(host) - static_cast<double>(host0)) /
               (static_cast<double>(host1) - static_cast<double>(host0));
    return offset0 + static_cast<std::int64_t>(f * static_cast<double>(offset1 - offset0));
  }

  std::uint64_t to_trace(std::uint64_t host) const noexcept {
    return static_cast<std::uint64_t>(static_cast<std::int64_t>(host) + offset_at(host));
  }
};

} // namespace detail
} // namespace v1
} // namespace nvscope

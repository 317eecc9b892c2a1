// nvscope-target: cupti
#pragma once

// The functions CUPTI calls: the callback of the API and NVTX domains (a launch or sync call
// entered or left, an NVTX call made) and the two activity-buffer callbacks. Each is small and
// reaches only the process state (process_state.hpp) and the per-thread logs.

#include <nvscope/collect/detail/cupti_api.hpp>
#include <nvscope/collect/detail/launch_log.hpp>
#include <nvscope/collect/detail/nvtx_listener.hpp>
#include <nvscope/collect/detail/process_state.hpp>

#include <cupti.h>

#include <cstdint>

namespace nvscope {
inline namespace v1 {
namespace detail {

inline void on_nvtx_call(CUpti_CallbackId cbid, const void* data) noexcept {
  auto& p = collector_state();
  if (!p.recording.load(std::memory_order_relaxed)) return;
  try {
    record_nvtx_call(cbid, static_cast<const CUpti_NvtxData*>(data));
  } catch (...) {
    p.host_calls_lost.fetch_add(1, std::memory_order_relaxed);
  }
}

inline bool is_stream_sync(std::uint32_t flags) noexcept {
  const std::uint32_t kind = (flags & host_call_kind_mask) >> host_call_kind_shift;
  return kind == static_cast<std::uint32_t>(sync_kind::stream) ||
         kind == static_cast<std::uint32_t>(sync_kind::stream_wait_event);
}

// The exit of a sync call recorded from callbacks: the end of the wait, with the waited-on
// stream for stream calls (every stream sync and stream wait call takes the stream first).
inline std::uint32_t sync_exit_flags(std::uint32_t flags, const CUpti_CallbackData* d) noexcept {
  flags |= host_call_exit;
  auto get_stream = cupti().cuptiGetStreamIdEx;
  if (is_stream_sync(flags) && get_stream != nullptr && d->functionParams != nullptr) {
    CUstream stream = *static_cast<const CUstream*>(d->functionParams);
    std::uint32_t id = 0;
    if (get_stream(d->context, stream, (flags & host_call_per_thread) != 0 ? 1 : 0, &id) == CUPTI_SUCCESS)
      flags |= host_call_stream_bits(id);
  }
  return flags;
}

// +1 for a profiler start call, -1 for a stop, 0 for any other call.
inline int profiler_call_kind(bool is_driver, CUpti_CallbackId cbid) noexcept {
  if (is_driver)
    return cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStart ? 1 : cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStop ? -1 : 0;
  return cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000  ? 1
         : cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000 ? -1
                                                                   : 0;
}

// A recorded launch or sync call: on entry (and, for syncs recorded from callbacks, on exit)
// a thread-local append.
inline void on_api_call(bool is_driver, CUpti_CallbackId cbid, const CUpti_CallbackData* d) noexcept {
  auto& p = collector_state();
  if (!p.recording.load(std::memory_order_relaxed)) return;
  std::uint32_t flags = p.tables.flags(is_driver, cbid);
  if (flags == 0) {
    const int profiler = profiler_call_kind(is_driver, cbid);
    if (profiler != 0 && d->callbackSite == CUPTI_API_ENTER) p.note_profiler_call(steady_ns(), profiler > 0);
    return;
  }
  if (d->callbackSite != CUPTI_API_ENTER) {
    if ((flags & host_call_sync_span) == 0) return; // exits matter only for sync spans (no clock read)
    const std::uint64_t end = steady_ns();            // the wait ends here, before the stream lookup
    if (!record_host_call(end, d->correlationId, sync_exit_flags(flags, d)))
      p.host_calls_lost.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  if (!record_host_call(steady_ns(), d->correlationId, flags)) p.host_calls_lost.fetch_add(1, std::memory_order_relaxed);
}

inline void CUPTIAPI on_callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  if (domain == CUPTI_CB_DOMAIN_NVTX) return on_nvtx_call(cbid, data);
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API || domain == CUPTI_CB_DOMAIN_RUNTIME_API)
    on_api_call(domain == CUPTI_CB_DOMAIN_DRIVER_API, cbid, static_cast<const CUpti_CallbackData*>(data));
}

inline void CUPTIAPI on_buffer_requested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) {
  auto& p = collector_state();
  *max_records = 0;
  *buffer = p.pool.acquire();
  *size = *buffer != nullptr ? p.pool.buffer_size() : 0;
}

inline void CUPTIAPI on_buffer_completed(CUcontext ctx, std::uint32_t stream, std::uint8_t* buffer, std::size_t,
                                         std::size_t valid) {
  collector_state().deliver(ctx, stream, buffer, valid);
}

} // namespace detail
} // namespace v1
} // namespace nvscope

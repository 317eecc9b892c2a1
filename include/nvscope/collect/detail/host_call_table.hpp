// nvscope-target: cupti
#pragma once

// Which CUDA runtime and driver calls the collector's callbacks record, by callback id: the
// launches (whose correlation id ties them to the kernel, copy or memset they caused) and the
// syncs (whose entry and exit make a sync record). Found by name once per start, so that
// _v2, _ptsz and later forms of one call are covered without a list of ids per CUDA version.

#include <nvscope/collect/detail/cupti_api.hpp>
#include <nvscope/collect/detail/launch_log.hpp>
#include <nvscope/trace.hpp>

#include <cupti.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace nvscope {
inline namespace v1 {
namespace detail {

// Which CUDA calls the callbacks record, by name prefix.
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

inline bool starts_with(const char* s, const char* prefix) noexcept {
  return std::strncmp(s, prefix, std::strlen(prefix)) == 0;
}

// The flags of one sync call by its name, or 0 when it is not a sync call.
inline std::uint32_t sync_call_flags(const char* name, bool sync_spans) noexcept {
  constexpr std::size_t count = sizeof(host_call_prefixes::syncs) / sizeof(host_call_prefixes::syncs[0]);
  std::uint32_t flags = 0;
  for (std::size_t i = 0; i < count; ++i)
    if (starts_with(name, host_call_prefixes::syncs[i])) {
      flags = host_call_sync | (static_cast<std::uint32_t>(host_call_prefixes::sync_kinds[i]) << host_call_kind_shift);
      if (sync_spans) flags |= host_call_sync_span;
      if (std::strstr(name, "_ptsz") != nullptr) flags |= host_call_per_thread;
    }
  return flags;
}

// The flags of one callback id, by its name: launch or sync, the sync's kind, per-thread
// stream (_ptsz), driver domain. `sync_spans`: syncs are recorded from their callbacks (entry
// and exit), not only for their thread.
inline std::uint8_t host_call_flags_for(const char* name, bool is_driver, bool want_launches, bool want_syncs,
                                        bool sync_spans) {
  std::uint32_t flags = 0;
  if (want_launches)
    for (const char* pre : host_call_prefixes::launches)
      if (starts_with(name, pre)) flags = host_call_launch;
  if (want_syncs) {
    const std::uint32_t sync = sync_call_flags(name, sync_spans);
    if (sync != 0) flags = sync;
  }
  if (flags != 0 && is_driver) flags |= host_call_driver;
  return static_cast<std::uint8_t>(flags);
}

inline const char* cupti_api_name(bool is_driver, std::uint32_t cbid) {
  const char* name = nullptr;
  if (cupti().cuptiGetCallbackName(is_driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API, cbid,
                                   &name) != CUPTI_SUCCESS)
    return nullptr;
  return name;
}

// host_call_flags by callback id, one table per API domain.
struct host_call_tables {
  std::vector<std::uint8_t> runtime;
  std::vector<std::uint8_t> driver;

  const std::vector<std::uint8_t>& of(bool is_driver) const noexcept { return is_driver ? driver : runtime; }

  std::uint32_t flags(bool is_driver, std::uint32_t cbid) const noexcept {
    const auto& t = of(is_driver);
    return cbid < t.size() ? t[cbid] : 0u;
  }

  // Names every callback id of both domains through CUPTI and keeps the flags of those wanted.
  void build(bool want_launches, bool want_syncs, bool sync_spans) {
    for (bool is_driver : {false, true}) {
      auto& table = is_driver ? driver : runtime;
      const auto size = is_driver ? static_cast<std::uint32_t>(CUPTI_DRIVER_TRACE_CBID_SIZE)
                                  : static_cast<std::uint32_t>(CUPTI_RUNTIME_TRACE_CBID_SIZE);
      table.assign(size, 0);
      for (std::uint32_t cbid = 1; cbid < size; ++cbid) {
        const char* name = cupti_api_name(is_driver, cbid);
        if (name != nullptr) table[cbid] = host_call_flags_for(name, is_driver, want_launches, want_syncs, sync_spans);
      }
    }
  }
};

} // namespace detail
} // namespace v1
} // namespace nvscope

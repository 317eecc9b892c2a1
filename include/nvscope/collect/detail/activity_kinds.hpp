// nvscope-target: cupti
#pragma once

// The CUPTI activity kinds the collector enables, in one commented list, and what to turn on
// for a given set of options (the collector's "plan"): both read by the instrumentation steps.

#include <nvscope/collect/options.hpp>

#include <cupti.h>

namespace nvscope {
inline namespace v1 {
namespace detail {

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
      // from the NVTX callback domain instead (nvtx_listener.hpp).
      {activity::runtime_api, CUPTI_ACTIVITY_KIND_RUNTIME, false},
      {activity::driver_api, CUPTI_ACTIVITY_KIND_DRIVER, false},
      {activity::overhead, CUPTI_ACTIVITY_KIND_OVERHEAD, true},
  };
};

// What a set of options turns on, decided once.
struct instrumentation_plan {
  activity kinds = activity::standard;
  bool launch_callbacks = false; // launches from callbacks (not from API activity records)
  bool sync_callbacks = false;   // syncs from the sync calls' entry and exit callbacks
  bool runtime_domain = false;   // launch callbacks in the runtime domain too, not only the driver's
  bool api_launches = false;     // launches from RUNTIME/DRIVER activity records
  bool launch_flags = false;     // the host-call tables mark launches
  bool sync_flags = false;       // ... and syncs (for a sync's thread, or its span)
  bool nvtx = false;             // the NVTX callback domain
  bool profiler_calls = false;   // cudaProfilerStart/Stop and cuProfilerStart/Stop, whoever calls them

  static instrumentation_plan from(const collector_options& o) noexcept {
    instrumentation_plan p;
    p.kinds = o.kinds;
    p.launch_callbacks = o.record_launches && o.launches != launch_source::api_activity;
    p.sync_callbacks = has(o.kinds, activity::syncs) && o.syncs == sync_source::host_callbacks;
    p.runtime_domain = o.record_launches && o.launches == launch_source::runtime_and_driver_callbacks;
    p.api_launches = o.record_launches && o.launches == launch_source::api_activity;
    p.launch_flags = o.record_launches;
    p.sync_flags = p.sync_callbacks || (has(o.kinds, activity::syncs) && o.record_launches);
    p.nvtx = has(o.kinds, activity::nvtx);
    // Followed whenever the collector subscribes anyway, and always for only_in_capture: a
    // collector that subscribes to nothing (measure_gpu) keeps working beside nsys.
    p.profiler_calls = p.host_callbacks() || p.nvtx || o.only_in_capture;
    return p;
  }

  bool host_callbacks() const noexcept { return launch_callbacks || sync_callbacks; }
  bool subscribes() const noexcept { return host_callbacks() || nvtx || profiler_calls; }

  // Whether activity kind `e` is enabled: asked for, or needed for API launches; never
  // SYNCHRONIZATION when syncs come from callbacks.
  bool enables(const activity_kind_entry& e) const noexcept {
    const bool for_launches =
        api_launches && (e.kind == CUPTI_ACTIVITY_KIND_RUNTIME || e.kind == CUPTI_ACTIVITY_KIND_DRIVER);
    if (!has(kinds, e.option) && !for_launches) return false;
    return !(e.kind == CUPTI_ACTIVITY_KIND_SYNCHRONIZATION && sync_callbacks);
  }
};

} // namespace detail
} // namespace v1
} // namespace nvscope

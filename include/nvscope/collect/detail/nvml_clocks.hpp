#pragma once
// Internal: whether the SM clock of the recording's GPUs was pinned, read from NVML, for the
// provenance's `clocks_locked`. NVML is loaded at run time (libnvidia-ml.so.1, which the
// driver installs) and only the few entry points used are declared here, so nothing needs
// nvml.h to build and no binary needs NVML to start. Not promised.
//
// A device counts as pinned when either NVML says so:
//  - its application clocks are set: nvmlDeviceGetClock's SM target (NVML_CLOCK_ID_APP_CLOCK_TARGET)
//    differs from its default (NVML_CLOCK_ID_APP_CLOCK_DEFAULT) (`nvidia-smi -ac`);
//  - its clocks are held by a setting: the clocks event reasons hold
//    nvmlClocksEventReasonApplicationsClocksSetting, which NVML also reports for locked clocks
//    (`nvidia-smi -lgc`).
// Every call's return code is checked; where NVML is missing, fails to start, knows none of the
// devices or answers neither question, the state stays unknown (-1).

#include <nvscope/trace.hpp>

#include <dlfcn.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace nvscope {
inline namespace v1 {
namespace detail {

// The NVML entry points used, as nvml.h declares them (C linkage, an int return code, 0 is
// NVML_SUCCESS; a device is an opaque pointer).
struct nvml_api {
  using device = struct nvml_device_opaque*;
  static constexpr int success = 0;
  static constexpr int clock_sm = 1;                      // NVML_CLOCK_SM
  static constexpr int clock_id_app_target = 1;           // NVML_CLOCK_ID_APP_CLOCK_TARGET
  static constexpr int clock_id_app_default = 2;          // NVML_CLOCK_ID_APP_CLOCK_DEFAULT
  static constexpr unsigned long long reason_app_clocks = 0x2ull; // nvmlClocksEventReasonApplicationsClocksSetting

  void* library = nullptr;
  bool started = false; // nvmlInit_v2 succeeded
  int (*init)() = nullptr;
  int (*by_uuid)(const char*, device*) = nullptr;
  int (*clock)(device, int, int, unsigned*) = nullptr;
  int (*event_reasons)(device, unsigned long long*) = nullptr;

  template <class F>
  void bind(F& f, const char* name) {
    f = reinterpret_cast<F>(dlsym(library, name));
  }
};

// NVML loaded from `path` and started, once per path and process (NVML is never shut down:
// not from a static destructor, and another user of NVML in the process may hold it).
// The registry itself is never destroyed either, so that what it holds stays reachable (no
// leak to report) and no exit-time destructor runs; a mutex keeps two callers from loading at once.
inline nvml_api& nvml(const std::string& path) {
  static auto* const loaded = new std::vector<std::pair<std::string, std::unique_ptr<nvml_api>>>();
  static std::mutex guard;
  const std::lock_guard<std::mutex> hold(guard);
  for (auto& [p, api] : *loaded)
    if (p == path) return *api;
  loaded->emplace_back(path, std::make_unique<nvml_api>());
  nvml_api* const api = loaded->back().second.get();
  api->library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (api->library == nullptr) return *api;
  api->bind(api->init, "nvmlInit_v2");
  api->bind(api->by_uuid, "nvmlDeviceGetHandleByUUID");
  api->bind(api->clock, "nvmlDeviceGetClock");
  api->bind(api->event_reasons, "nvmlDeviceGetCurrentClocksEventReasons");
  if (api->event_reasons == nullptr) api->bind(api->event_reasons, "nvmlDeviceGetCurrentClocksThrottleReasons"); // before r535
  api->started = api->init != nullptr && api->init() == nvml_api::success;
  return *api;
}

// 1 pinned, 0 not, -1 NVML answered neither question for the device.
inline int nvml_device_pinned(const nvml_api& api, nvml_api::device d) {
  int known = -1;
  unsigned target = 0, standard = 0;
  if (api.clock != nullptr && api.clock(d, nvml_api::clock_sm, nvml_api::clock_id_app_target, &target) == nvml_api::success &&
      api.clock(d, nvml_api::clock_sm, nvml_api::clock_id_app_default, &standard) == nvml_api::success) {
    if (target != standard) return 1;
    known = 0;
  }
  unsigned long long reasons = 0;
  if (api.event_reasons != nullptr && api.event_reasons(d, &reasons) == nvml_api::success) {
    if (reasons & nvml_api::reason_app_clocks) return 1;
    known = 0;
  }
  return known;
}

// Whether the clocks of the devices `uuids` names (nvidia-smi's "GPU-..." spelling) were
// pinned: 1 when any was, 0 when NVML answered for every one and none was, else -1 (also
// with no UUIDs: which GPU ran is not known, and another's clocks are not a guess to write).
// `path`: the library to load (a test gives a fake one).
inline std::int8_t nvml_clocks_locked(const std::vector<std::string>& uuids, const std::string& path = "libnvidia-ml.so.1") {
  if (uuids.empty()) return -1;
  const nvml_api& api = nvml(path);
  if (!api.started) return -1;
  std::vector<nvml_api::device> devices;
  for (const auto& u : uuids) {
    nvml_api::device d = nullptr;
    if (api.by_uuid == nullptr || api.by_uuid(u.c_str(), &d) != nvml_api::success) return -1;
    devices.push_back(d);
  }
  int all = 0;
  for (auto d : devices) {
    const int pinned = nvml_device_pinned(api, d);
    if (pinned == 1) return 1;
    if (pinned < 0) all = -1;
  }
  return static_cast<std::int8_t>(all);
}

// The UUIDs of a trace's devices, for nvml_clocks_locked.
inline std::vector<std::string> device_uuids(const trace& t) {
  std::vector<std::string> out;
  for (const auto& d : t.devices)
    if (d.uuid) out.emplace_back(t.strings[d.uuid]);
  return out;
}

} // namespace detail
} // namespace v1
} // namespace nvscope

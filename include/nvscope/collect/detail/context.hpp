// nvscope-target: cupti
#pragma once

// What only CUDA and CUPTI know about where a trace is recorded, read into the trace's plain
// `recording_context` and `device_info` (trace.hpp), so that no CUDA type passes the collector:
// each device's name and UUID, the CUDA driver API and runtime versions, CUPTI's API version,
// NVIDIA's driver version (/proc/driver/nvidia/version, as nvidia-smi prints it), and the clock
// reference (CUPTI's timestamp and the wall clock read together), and whether the devices'
// clocks were pinned, from NVML where the driver's library loads (nvml_clocks.hpp; else
// unknown, -1).

#include <nvscope/collect/detail/cupti_api.hpp>
#include <nvscope/collect/detail/nvml_clocks.hpp>
#include <nvscope/trace.hpp>

#include <cuda_runtime_api.h>

#include <chrono>
#include <cstdio>
#include <string>

namespace nvscope {
inline namespace v1 {
namespace detail {

// "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", nvidia-smi's spelling of 16 bytes.
inline std::string uuid_text(const unsigned char (&b)[16]) {
  static constexpr char hex[] = "0123456789abcdef";
  std::string s = "GPU-";
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) s += '-';
    s += hex[b[i] >> 4];
    s += hex[b[i] & 15];
  }
  return s;
}

// The first "N.N[.N]" word of /proc/driver/nvidia/version's first line; empty where unreadable.
inline std::string nvidia_driver_version() {
  std::FILE* f = std::fopen("/proc/driver/nvidia/version", "r");
  if (f == nullptr) return {};
  char line[512] = {};
  const bool read = std::fgets(line, sizeof line, f) != nullptr;
  std::fclose(f);
  if (!read) return {};
  const std::string s = line;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if ((i > 0 && s[i - 1] != ' ') || s[i] < '0' || s[i] > '9') continue;
    std::size_t j = i;
    while (j < s.size() && ((s[j] >= '0' && s[j] <= '9') || s[j] == '.')) ++j;
    const std::string word = s.substr(i, j - i);
    if (word.find('.') != std::string::npos && (j == s.size() || s[j] == ' ' || s[j] == '\n')) return word;
  }
  return {};
}

// Every device's name and UUID into `t.devices` (each device once, by id).
inline void read_devices(trace& t) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) return;
  t.devices.clear();
  for (int d = 0; d < count; ++d) {
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, d) != cudaSuccess) continue;
    unsigned char bytes[16];
    for (int i = 0; i < 16; ++i) bytes[i] = static_cast<unsigned char>(p.uuid.bytes[i]);
    t.devices.push_back(device_info{static_cast<std::uint16_t>(d), t.strings.intern(p.name), t.strings.intern(uuid_text(bytes))});
  }
}

// The trace clock `now` and the wall clock read together: the wall clock between two reads of
// `now`, paired with their midpoint.
template <class Now>
clock_reference read_clock_reference(Now now) {
  const timestamp_ns a = now();
  const auto wall = std::chrono::system_clock::now().time_since_epoch();
  const timestamp_ns b = now();
  return clock_reference{a + (b - a) / 2, static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(wall).count())};
}

// The versions and devices, read at start.
inline void read_recording_context(trace& t) {
  auto& c = t.context;
  if (cudaDriverGetVersion(&c.cuda_driver_api) != cudaSuccess) c.cuda_driver_api = 0;
  if (cudaRuntimeGetVersion(&c.cuda_runtime) != cudaSuccess) c.cuda_runtime = 0;
  auto& api = cupti();
  if (!api.loaded || api.cuptiGetVersion(&c.cupti_api) != CUPTI_SUCCESS) c.cupti_api = 0;
  c.driver = nvidia_driver_version();
  read_devices(t);
  c.clocks_locked = nvml_clocks_locked(device_uuids(t));
}

} // namespace detail
} // namespace v1
} // namespace nvscope

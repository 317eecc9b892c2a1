// A stand-in for libnvidia-ml.so.1 with the entry points nvscope's clock probe calls
// (collect/detail/nvml_clocks.hpp), so that the probe is tested without a GPU. It knows two
// devices, "GPU-0" and "GPU-1"; FAKE_NVML_<n> (read at each call) says what device n answers:
//   free          application clocks at their default, no clocks event reason but idle
//   app           application clocks set (target 1200 MHz, default 1980 MHz)
//   locked        clocks at their default, the reason ApplicationsClocksSetting (locked clocks)
//   reasons_only  nvmlDeviceGetClock not supported, the reasons say idle
//   unsupported   neither question answered (NVML_ERROR_NOT_SUPPORTED)
// Built with FAKE_NVML_INIT_FAILS, nvmlInit_v2 fails (NVML_ERROR_DRIVER_NOT_LOADED).
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

struct fake_device {
  int index;
};
fake_device devices[2] = {{0}, {1}};

constexpr int success = 0, not_supported = 3, not_found = 6, driver_not_loaded = 9, invalid_argument = 2;

std::string mode(const fake_device* d) {
  const char* v = std::getenv(d->index == 0 ? "FAKE_NVML_0" : "FAKE_NVML_1");
  return v ? v : "free";
}

} // namespace

extern "C" {

int nvmlInit_v2() {
#ifdef FAKE_NVML_INIT_FAILS
  return driver_not_loaded;
#else
  return success;
#endif
}

int nvmlShutdown() { return success; }

int nvmlDeviceGetHandleByUUID(const char* uuid, fake_device** out) {
  if (uuid == nullptr || out == nullptr) return invalid_argument;
  for (auto& d : devices)
    if (std::string("GPU-") + std::to_string(d.index) == uuid) return *out = &d, success;
  return not_found;
}

int nvmlDeviceGetClock(fake_device* d, int type, int id, unsigned* mhz) {
  if (d == nullptr || mhz == nullptr || type != 1) return invalid_argument; // the probe asks for the SM clock
  const std::string m = mode(d);
  if (m == "reasons_only" || m == "unsupported") return not_supported;
  if (id == 1) return *mhz = m == "app" ? 1200 : 1980, success; // NVML_CLOCK_ID_APP_CLOCK_TARGET
  if (id == 2) return *mhz = 1980, success;                     // NVML_CLOCK_ID_APP_CLOCK_DEFAULT
  return invalid_argument;
}

int nvmlDeviceGetCurrentClocksEventReasons(fake_device* d, unsigned long long* reasons) {
  if (d == nullptr || reasons == nullptr) return invalid_argument;
  const std::string m = mode(d);
  if (m == "unsupported") return not_supported;
  *reasons = 0x1ull | (m == "locked" ? 0x2ull : 0); // GpuIdle, ApplicationsClocksSetting
  return success;
}

} // extern "C"

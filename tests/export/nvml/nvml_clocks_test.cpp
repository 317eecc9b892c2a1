// The provenance's clocks_locked as the collector reads it from NVML
// (collect/detail/nvml_clocks.hpp), against a fake libnvidia-ml (fake_nvml.cpp): application
// clocks set or locked clocks say pinned, a device at its defaults says not, and whatever
// NVML cannot answer (no library, no start, an unknown device, neither question supported)
// stays unknown. The real library is checked on the GPU machine (bench/run/clocks_check.sh).
#include <doctest/doctest.h>
#include <nvscope/collect/detail/nvml_clocks.hpp>

#include <cstdlib>
#include <string>
#include <vector>

namespace {

struct modes { // FAKE_NVML_0 and FAKE_NVML_1 for one check, taken back after
  modes(const char* gpu0, const char* gpu1) {
    ::setenv("FAKE_NVML_0", gpu0, 1);
    ::setenv("FAKE_NVML_1", gpu1, 1);
  }
  ~modes() {
    ::unsetenv("FAKE_NVML_0");
    ::unsetenv("FAKE_NVML_1");
  }
};

int locked(const std::vector<std::string>& uuids, const char* gpu0, const char* gpu1, const char* library = FAKE_NVML) {
  modes m(gpu0, gpu1);
  return nvscope::detail::nvml_clocks_locked(uuids, library);
}

} // namespace

TEST_CASE("clocks_locked from NVML: application clocks or locked clocks are pinned, defaults are not") {
  const std::vector<std::string> one{"GPU-0"}, both{"GPU-0", "GPU-1"};
  CHECK(locked(one, "free", "free") == 0);
  CHECK(locked(one, "app", "free") == 1);
  CHECK(locked(one, "locked", "free") == 1);
  CHECK(locked(one, "reasons_only", "free") == 0); // the reasons alone answer
  CHECK(locked(both, "free", "free") == 0);
  CHECK(locked(both, "free", "app") == 1);         // any device pinned
  CHECK(locked(both, "free", "locked") == 1);
  CHECK(locked({"GPU-1"}, "app", "free") == 0);    // only the trace's devices count
}

TEST_CASE("clocks_locked from NVML: unknown where NVML cannot say") {
  CHECK(locked({"GPU-0"}, "unsupported", "free") == -1);
  CHECK(locked({"GPU-0", "GPU-1"}, "free", "unsupported") == -1); // one device not answered, none pinned
  CHECK(locked({"GPU-0", "GPU-1"}, "app", "unsupported") == 1);   // one pinned is enough
  CHECK(locked({"GPU-7"}, "free", "free") == -1);                 // NVML does not know the device
  CHECK(locked({}, "app", "app") == -1);                          // no device recorded: not a guess
  CHECK(locked({"GPU-0"}, "app", "app", FAKE_NVML_INIT_FAILS) == -1);
  CHECK(locked({"GPU-0"}, "app", "app", "libnvscope-no-such-nvml.so.1") == -1);
}

TEST_CASE("clocks_locked: a trace's device UUIDs as NVML is asked for them") {
  nvscope::trace t;
  t.devices.push_back({0, t.strings.intern("NVIDIA H200"), t.strings.intern("GPU-1")});
  t.devices.push_back({1, t.strings.intern("NVIDIA H200"), 0});
  CHECK(nvscope::detail::device_uuids(t) == std::vector<std::string>{"GPU-1"});
  CHECK(locked(nvscope::detail::device_uuids(t), "free", "app") == 1);
}

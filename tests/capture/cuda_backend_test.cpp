// The cudaProfiler backend. Without a usable device, cudaProfilerStart fails: the failure
// must become one clear line and an error code, never an abort, and must not leak into
// the program's own cudaGetLastError(). With a device, start and stop succeed.
#include <doctest/doctest.h>

#include <nvscope/capture.hpp>

#include <cuda_runtime_api.h>

#include <string>
#include <vector>

namespace {
std::vector<nvscope::capture_error>& seen() {
  static std::vector<nvscope::capture_error> v;
  return v;
}
} // namespace

TEST_CASE("cudaProfilerStart/Stop through guards, with or without a device") {
  seen().clear();
  auto old = nvscope::set_capture_error_handler(
      [](const nvscope::capture_error& e) noexcept { seen().push_back(e); });
  REQUIRE_FALSE(static_cast<bool>(nvscope::use_cuda_profiler_capture()));
  int devices = 0;
  const bool have_device = cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0;
  (void)cudaGetLastError();
  {
    nvscope::capture_guard g;
    { nvscope::capture_guard nested; CHECK_FALSE(static_cast<bool>(nested.error())); }
    if (have_device) {
      CHECK_FALSE(static_cast<bool>(g.error()));
    } else {
      REQUIRE(static_cast<bool>(g.error()));
      CHECK(g.error().code == nvscope::capture_errc::backend_failed);
      CHECK(g.error().native != 0);
      CHECK(g.error().message.rfind("nvscope: cudaProfilerStart() failed: cuda", 0) == 0);
      CHECK(g.error().message.find('\n') == std::string::npos);
      MESSAGE("without a device: " << g.error().message);
    }
    // The failed start must not leave an error behind (only checkable with a working driver).
    if (have_device) CHECK(cudaGetLastError() == cudaSuccess);
  }
  CHECK(nvscope::capture_depth() == 0);
  CHECK(seen().size() == (have_device ? 0u : 1u));   // one line per failed start, no stop error
  nvscope::remove_capture_backend(nvscope::cuda_profiler_capture());
  nvscope::set_capture_error_handler(old);
}

// Stream and device names reach NVTX (no CUDA call is made, so no GPU is needed).
#include <doctest/doctest.h>
#include "test_seed.hpp"

#include <nvscope/annotate/cuda_names.hpp>

#include "recorder_client.hpp"

#include <cstdint>
#include <random>
#include <string>

TEST_CASE("name_stream and name_device") {
  auto& rec = nvscope_test::recorder::instance();
  REQUIRE_MESSAGE(rec.attached(), rec.why_not());
  rec.clear();
  NVSCOPE_SEEDED_RNG(std::mt19937, g);
  const auto fake = static_cast<std::uintptr_t>(0x1000 + (g() % 0x100000) * 16);
  const int dev = static_cast<int>(g() % 8);
  nvscope::name_stream(reinterpret_cast<cudaStream_t>(fake), "h2d_copies");
  nvscope::name_device(dev, "trainer\xFF");
  const auto ev = rec.events();
  REQUIRE(ev.size() == 2);
  CHECK(ev[0].kind == "name_cuda_stream");
  CHECK(ev[0].get("stream") == std::to_string(fake));
  CHECK(ev[0].get("name") == "h2d_copies");
  CHECK(ev[1].kind == "name_cuda_device");
  CHECK(ev[1].get("device") == std::to_string(dev));
  CHECK(ev[1].get("name") == "trainer?");
}

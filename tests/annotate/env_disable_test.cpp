// Run with NVSCOPE_DISABLE=1 in the environment: nothing reaches NVTX until the program
// itself calls set_enabled(true), which wins over the environment.
#include <doctest/doctest.h>

#include <nvscope/annotate.hpp>

#include "recorder_client.hpp"

#include <cstdlib>
#include <string>

TEST_CASE("NVSCOPE_DISABLE=1 in the environment turns annotation off") {
  REQUIRE(std::getenv("NVSCOPE_DISABLE") != nullptr);
  auto& rec = nvscope_test::recorder::instance();
  REQUIRE_MESSAGE(rec.attached(), rec.why_not());
  rec.clear();
  CHECK_FALSE(nvscope::enabled());
  {
    NVSCOPE_RANGE("env_off");
    NVSCOPE_FUNC_RANGE();
    NVSCOPE_RANGE_F("env_off_%d", 1);
    nvscope::mark("env_off_mark");
    nvscope::unique_range u{"env_off_unique"};
    nvscope::name_current_thread("env_off_thread");
  }
  CHECK(rec.events().empty());
  nvscope::set_enabled(true);
  { NVSCOPE_RANGE("env_on"); }
  const auto a = nvscope_test::annotations(rec.events());
  REQUIRE(a.size() == 2);
  CHECK(a[0].msg() == "env_on");
}

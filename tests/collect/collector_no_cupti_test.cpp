// Run with NVSCOPE_CUPTI_PATH naming a file that does not exist: libcupti cannot be loaded,
// and the collector must say so in one line and let the program go on.
#include <nvscope/collector.hpp>

#include <doctest/doctest.h>

TEST_CASE("a libcupti that cannot be loaded is one clear line, never a crash") {
  const auto& api = nvscope::detail::cupti();
  CHECK_FALSE(api.loaded);
  CHECK(api.error.find("libcupti could not be loaded") == 0);
  CHECK(api.error.find("/nonexistent/libcupti.so") != std::string::npos);
  CHECK(api.error.find('\n') == std::string::npos);
  CHECK_FALSE(nvscope::prepare_collector());

  nvscope::collector_options o;
  o.print_errors = false;
  nvscope::collector c(o);
  CHECK_FALSE(c.start());
  REQUIRE(c.errors().size() == 1);
  // Without a GPU the first reason is the missing device; with one it is libcupti.
  const std::string& e = c.errors()[0];
  CHECK((e.find("no CUDA device") == 0 || e.find("libcupti could not be loaded") == 0));
  CHECK_FALSE(c.active());
  CHECK(c.stop() == false);
  CHECK(nvscope::collector::now() > 0);
}

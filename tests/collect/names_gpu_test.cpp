// On a GPU: a collector built in a NVSCOPE_DISABLE unit names the ranges of annotated code
// whose domain and name were registered before the collector started listening.
#include "names_odr.hpp"

#include <nvscope/annotate.hpp>

#include <doctest/doctest.h>

TEST_CASE("a collector from a NVSCOPE_DISABLE unit names ranges registered before it started") {
  auto c = names_odr::make_collector_there(); // before the first NVTX call: routes NVTX to CUPTI
  const nvscope::domain d = nvscope::domain::named("odr_gpu_lib");
  { nvscope::scoped_range r{d, "odr_gpu_range"}; } // domain created, name registered: unseen
  REQUIRE(c->start());
  { nvscope::scoped_range r{d, "odr_gpu_range"}; }
  c->stop();
  const nvscope::trace& t = c->result();
  INFO("ranges: " << t.ranges.size());
  REQUIRE(t.ranges.size() == 1);
  CHECK(t.strings[t.ranges[0].name] == "odr_gpu_range");
  CHECK(t.strings[t.ranges[0].domain] == "odr_gpu_lib");
  CHECK(t.lost.nvtx_too_early == 0);
}

// Names registered by annotated code (and by the NVTX capture range) resolve in a translation
// unit built with NVSCOPE_DISABLE that includes the collector: the registry the collector reads
// is the same in both compile modes. NVTX goes to the recording tool, so handles are real.
#include "names_odr.hpp"
#include "recorder_client.hpp"

#include <nvscope/annotate.hpp>
#include <nvscope/capture/nvtx_range.hpp>

#include <doctest/doctest.h>

#include <algorithm>

namespace {
bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}
} // namespace

TEST_CASE("names registered in an annotated unit resolve in a NVSCOPE_DISABLE unit that includes the collector") {
  auto& rec = nvscope_test::recorder::instance();
  REQUIRE_MESSAGE(rec.attached(), rec.why_not());
  REQUIRE(nvscope::compiled_in());
  REQUIRE_FALSE(names_odr::compiled_in_there());

  const nvscope::domain d = nvscope::domain::named("odr_lib");
  { nvscope::scoped_range r{d, "odr_range"}; } // creates the domain, registers the name
  const auto domain_handle = nvscope::detail::nvtx_handle_key(d.entry().get());
  char buffer[nvscope::max_name_length + 1];
  const auto name = nvscope::detail::resolve_name(d.entry(), "odr_range", buffer, true);
  REQUIRE(domain_handle != 0);
  REQUIRE(name.handle != nullptr);

  const auto resolved = names_odr::resolve_there(domain_handle, nvscope::detail::nvtx_handle_key(name.handle));
  REQUIRE(resolved.size() == 2);
  CHECK(resolved[0] == "odr_lib");
  CHECK(resolved[1] == "odr_range");

  // Unknown handles stay visibly unknown.
  const auto unknown = names_odr::resolve_there(0x1234, 0x5678);
  REQUIRE(unknown.size() == 2);
  CHECK(unknown[0] == "<domain>");
  CHECK(unknown[1] == "<unknown registered string>");
}

TEST_CASE("the NVTX capture range registers its domain and name where the collector looks") {
  auto& rec = nvscope_test::recorder::instance();
  REQUIRE_MESSAGE(rec.attached(), rec.why_not());
  nvscope::nvtx_capture_backend b("odr_capture", "odr_capture_domain");
  REQUIRE_FALSE(b.start());
  b.stop();
  const auto names = names_odr::registered_names_there();
  CHECK(contains(names, "odr_capture"));
  CHECK(contains(names, "odr_capture_domain"));
}

// The NVSCOPE_CAPTURE parser: good values, bad values (each rejected with one line naming
// the bad part), the checked-in corpus, random inputs, and capture_options_from_env.
#include <doctest/doctest.h>
#include "test_seed.hpp"

#include "spec_check.hpp"

#include <nvscope/capture/env.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

namespace {
std::string read_file(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}
std::vector<std::filesystem::path> files_in(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> v;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.is_regular_file()) v.push_back(e.path());
  return v;
}
} // namespace

TEST_CASE("key=value form") {
  auto r = nvscope::parse_capture_spec("skip=5,warmup=1,active=10,repeat=2");
  REQUIRE(r.ok);
  CHECK(r.options.skip_first() == 5);
  CHECK(r.options.wait() == 0);
  CHECK(r.options.warmup() == 1);
  CHECK(r.options.active() == 10);
  CHECK(r.options.repeat() == 2);
  CHECK(r.options.enabled());

  r = nvscope::parse_capture_spec("  skip_first = 2 ,\twait=3, active=1,repeat=0 ");
  REQUIRE(r.ok);
  CHECK(r.options.skip_first() == 2);
  CHECK(r.options.wait() == 3);
  CHECK(r.options.repeat() == 0);

  r = nvscope::parse_capture_spec("active=4");
  REQUIRE(r.ok);
  CHECK(r.options.repeat() == 1);   // once, unlike PyTorch's default
  CHECK(r.options.skip_first() == 0);
}

TEST_CASE("short forms") {
  auto r = nvscope::parse_capture_spec("10-20");
  REQUIRE(r.ok);
  CHECK(r.options.skip_first() == 10);
  CHECK(r.options.active() == 11);   // both ends included
  CHECK(r.options.repeat() == 1);
  CHECK(r.options.phase_of(9) == nvscope::capture_phase::skipped);
  CHECK(r.options.phase_of(10) == nvscope::capture_phase::recording);
  CHECK(r.options.phase_of(20) == nvscope::capture_phase::recording);
  CHECK(r.options.phase_of(21) == nvscope::capture_phase::finished);

  r = nvscope::parse_capture_spec("7");
  REQUIRE(r.ok);
  CHECK(r.options.skip_first() == 7);
  CHECK(r.options.active() == 1);

  r = nvscope::parse_capture_spec("off");
  REQUIRE(r.ok);
  CHECK_FALSE(r.options.enabled());
  CHECK(r.options.phase_of(0) == nvscope::capture_phase::finished);
}

TEST_CASE("bad values name the bad part") {
  struct bad { const char* input; const char* mentions; };
  const bad cases[] = {
      {"", "empty"},
      {"skip=5", "active"},
      {"active=0", "active=0"},
      {"active=3,active=4", "twice"},
      {"skip=-1,active=2", "'-1'"},
      {"warmup=x,active=1", "'x' for warmup"},
      {"activ=3", "unknown key 'activ'"},
      {"active=3,", "trailing"},
      {",active=3", "empty item"},
      {"active", "neither"},          // no '=': read as a step range
      {"active=", "bad value ''"},
      {"=3", "unknown key ''"},
      {"active=99999999999999999999", "bad value"},
      {"active=1000000001", "bad value"},
      {"20-10", "ends before it starts"},
      {"10-", "bad last step"},
      {"-10", "bad step number ''"},
      {"10,20", "neither"},
      {"all", "neither"},
      {"1 0", "bad step number '1 0'"},
      {"active=3;repeat=2", "'3;repeat=2'"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.input);
    const auto r = nvscope::parse_capture_spec(c.input);
    CHECK_FALSE(r.ok);
    CHECK(r.error.find(c.mentions) != std::string::npos);
    CHECK(r.error.find('\n') == std::string::npos);
    CHECK(capture_test::check_spec(c.input) == "");
  }
}

TEST_CASE("non-printable input is echoed escaped, on one line") {
  const std::string input = std::string("active=\x01\n", 9) + std::string(500, 'z');
  const auto r = nvscope::parse_capture_spec(input);
  REQUIRE_FALSE(r.ok);
  const auto line = nvscope::detail::bad_spec_message("NVSCOPE_CAPTURE", input, r.error);
  CHECK(line.find("\\x01\\x0a") != std::string::npos);
  CHECK(line.find('\n') == std::string::npos);
  CHECK(line.size() < 400);
}

TEST_CASE("corpus: every bad input is rejected, every good one accepted") {
  const std::filesystem::path corpus = NVSCOPE_CAPTURE_CORPUS;
  const auto bad = files_in(corpus / "bad");
  const auto good = files_in(corpus / "good");
  REQUIRE(bad.size() >= 20);
  REQUIRE(good.size() >= 5);
  for (const auto& p : bad) {
    const std::string input = read_file(p);
    CAPTURE(p.filename().string());
    CHECK_FALSE(nvscope::parse_capture_spec(input).ok);
    CHECK(capture_test::check_spec(input) == "");
  }
  for (const auto& p : good) {
    const std::string input = read_file(p);
    CAPTURE(p.filename().string());
    CHECK(nvscope::parse_capture_spec(input).ok);
    CHECK(capture_test::check_spec(input) == "");
  }
}

TEST_CASE("random inputs keep the properties") {
  NVSCOPE_SEEDED_RNG(std::mt19937, rng);
  const std::string alphabet = "skipwaitrmuvecyof0123456789=,- \t_x";
  for (int n = 0; n < 20000; ++n) {
    std::string s;
    const int len = static_cast<int>(rng() % 40);
    for (int i = 0; i < len; ++i)
      s += (rng() % 16 == 0) ? static_cast<char>(rng() % 256) : alphabet[rng() % alphabet.size()];
    CAPTURE(s);
    REQUIRE(capture_test::check_spec(s) == "");
  }
}

TEST_CASE("capture_options_from_env: unset, good, malformed") {
  static std::vector<nvscope::capture_error> seen;
  seen.clear();
  auto old = nvscope::set_capture_error_handler(
      [](const nvscope::capture_error& e) noexcept { seen.push_back(e); });
  const char* var = "NVSCOPE_CAPTURE_TEST_VALUE";
  const auto fallback = nvscope::schedule_options{}.skip_first(9).active(2).step_ranges(false);

  ::unsetenv(var);
  CHECK(nvscope::capture_options_from_env(var, fallback) == fallback);

  ::setenv(var, "skip=1,active=3", 1);
  auto o = nvscope::capture_options_from_env(var, fallback);
  CHECK(o.skip_first() == 1);
  CHECK(o.active() == 3);
  CHECK_FALSE(o.step_ranges());   // kept from the fallback
  CHECK(seen.empty());

  ::setenv(var, "skip=1,warmup=oops,active=3", 1);
  o = nvscope::capture_options_from_env(var, fallback);
  CHECK_FALSE(o.enabled());       // never silently capturing everything
  CHECK(o.phase_of(0) == nvscope::capture_phase::finished);
  REQUIRE(seen.size() == 1);
  CHECK(seen[0].code == nvscope::capture_errc::bad_schedule);
  CHECK(seen[0].message.find(var) != std::string::npos);
  CHECK(seen[0].message.find("'oops' for warmup") != std::string::npos);
  CHECK(seen[0].message.find("capture is off") != std::string::npos);
  ::unsetenv(var);
  nvscope::set_capture_error_handler(old);
}

// Output path patterns and file writing errors.
#include <doctest/doctest.h>
#include <nvscope/export/output_path.hpp>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include <unistd.h>

namespace {
void clear_ranks() {
  for (const char* v : nvscope::rank_variables) ::unsetenv(v);
}
} // namespace

TEST_CASE("%p %h %% and plain text") {
  auto p = nvscope::expand_output_path("out_%p_%%_%h.json");
  REQUIRE(p);
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  CHECK(p.path == "out_" + std::to_string(::getpid()) + "_%_" + host + ".json");
}

TEST_CASE("%r follows the documented order and errors when no variable is set") {
  clear_ranks();
  auto p = nvscope::expand_output_path("r%r.csv");
  CHECK_FALSE(p);
  CHECK(p.error.find("no rank variable") != std::string::npos);
  CHECK(p.error.find('\n') == std::string::npos);
  ::setenv("LOCAL_RANK", "5", 1);
  CHECK(nvscope::expand_output_path("r%r").path == "r5");
  ::setenv("SLURM_PROCID", "3", 1);
  CHECK(nvscope::expand_output_path("r%r").path == "r3");
  ::setenv("OMPI_COMM_WORLD_RANK", "1", 1);
  CHECK(nvscope::expand_output_path("r%r").path == "r1");
  clear_ranks();
}

TEST_CASE("%q{VAR}") {
  ::setenv("NVSCOPE_TEST_RUN", "abc", 1);
  CHECK(nvscope::expand_output_path("x_%q{NVSCOPE_TEST_RUN}_y").path == "x_abc_y");
  ::unsetenv("NVSCOPE_TEST_UNSET_VAR");
  auto p = nvscope::expand_output_path("x_%q{NVSCOPE_TEST_UNSET_VAR}");
  CHECK_FALSE(p);
  CHECK(p.error.find("NVSCOPE_TEST_UNSET_VAR is not set") != std::string::npos);
}

TEST_CASE("malformed patterns name the bad part") {
  const char* bad[] = {"a%", "a%x", "a%q", "a%qVAR", "a%q{VAR", "a%q{}", ""};
  const char* says[] = {"at the end", "'%x'", "{VARIABLE}", "{VARIABLE}", "closing", "names no variable", "empty"};
  for (int i = 0; i < 7; ++i) {
    auto p = nvscope::expand_output_path(bad[i]);
    CHECK_FALSE(p);
    CHECK(p.path.empty());
    CHECK_MESSAGE(p.error.find(says[i]) != std::string::npos, p.error);
    CHECK(p.error.find('\n') == std::string::npos);
  }
}

TEST_CASE("write_file writes, and reports failures with path and reason") {
  const std::string path = "nvscope_test_output_" + std::to_string(::getpid()) + ".txt";
  auto w = nvscope::write_file(path, "hello\n");
  REQUIRE(w);
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  CHECK(ss.str() == "hello\n");
  std::remove(path.c_str());
  auto bad = nvscope::write_file("no_such_dir_nvscope/x.txt", "data");
  CHECK_FALSE(bad);
  CHECK(bad.error.find("no_such_dir_nvscope/x.txt") != std::string::npos);
  CHECK(bad.error.find("No such file") != std::string::npos);
  if (::access("/dev/full", W_OK) == 0) {
    auto full = nvscope::write_file("/dev/full", std::string(1 << 16, 'x'));
    CHECK_FALSE(full);
    CHECK(full.error.find("/dev/full") != std::string::npos);
  }
  auto pat = nvscope::write_output("a%z", "x");
  CHECK_FALSE(pat);
  CHECK(pat.error.find("'%z'") != std::string::npos);
}

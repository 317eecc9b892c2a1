// Kernel names demangled by NVIDIA's demangler are nsys's names to the letter (the corpus in
// tests/collect/data). Needs libcufilt.a, found at configure time; where it is absent (this
// test's build has no NVSCOPE_HAS_CUFILT) the test says so and exits 77: skipped, not passed.
#define DOCTEST_CONFIG_IMPLEMENT
#include "kernel_names_corpus.hpp"

#include <nvscope/collector.hpp>

#include <doctest/doctest.h>

#include <cstdio>

int main(int argc, char** argv) {
#if !(defined(NVSCOPE_HAS_CUFILT) && NVSCOPE_HAS_CUFILT)
  (void)argc;
  (void)argv;
  std::printf("skipped: libcufilt.a (NVIDIA's demangler) was not found when this build was configured; "
              "nsys's spelling of demangled names is not checked here\n");
  return 77;
#else
  return doctest::Context(argc, argv).run();
#endif
}

TEST_CASE("demangled kernel names are spelled exactly as nsys spells them") {
  std::size_t equal = 0, total = 0;
  for (const auto& c : kernel_names_corpus::corpora) {
    const auto rows = kernel_names_corpus::demangled_rows(c.prefix);
    REQUIRE(rows.size() == c.rows);
    for (const auto& row : rows) {
      const std::string ours = nvscope::detail::demangle_kernel_name(row.mangled.c_str());
      INFO("mangled: " << row.mangled);
      CHECK(ours == row.nsys_demangled);
      equal += ours == row.nsys_demangled;
      ++total;
    }
  }
  MESSAGE(equal << " of " << total << " names equal to nsys's");
  CHECK(nvscope::detail::kernel_name_spelling() == nvscope::name_spelling::nvidia);
}

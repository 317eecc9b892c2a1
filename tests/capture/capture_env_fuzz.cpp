// libFuzzer target for the NVSCOPE_CAPTURE parser: any byte string must be either accepted
// with sane, round-tripping options or rejected with one printable line.
#include "spec_check.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::string problem = capture_test::check_spec(input);
  if (!problem.empty()) {
    std::fprintf(stderr, "capture spec property broken: %s\n", problem.c_str());
    std::abort();
  }
  return 0;
}

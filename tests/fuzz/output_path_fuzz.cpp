// libFuzzer target: output path patterns and the variables they read (export/output_path.hpp).
// Any byte string is either a path that stays in the folders the pattern names, or one
// printable error line (output_path_check.hpp has the properties).
#include "output_path_check.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string problem = fuzz_check::check_output_path(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!problem.empty()) {
    std::fprintf(stderr, "output path property broken: %s\n", problem.c_str());
    std::abort();
  }
  return 0;
}

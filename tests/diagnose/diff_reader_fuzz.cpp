// libFuzzer target: the saved-summary reader of `nvscope diff` on arbitrary bytes. It must
// never crash, and when it refuses an input it says why; what it accepts is well formed.

#include "diff_command.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  nvscope::run_samples s;
  std::string error;
  const bool ok = nvscope::tool::read_samples(std::string_view(reinterpret_cast<const char*>(data), size), s, error);
  if (!ok && error.empty()) std::abort(); // a refusal always has a reason
  for (const auto* sets : {&s.kernels, &s.ranges, &s.steps})
    for (const auto& set : *sets)
      if (!std::is_sorted(set.ns.begin(), set.ns.end()) || set.count < set.ns.size()) std::abort();
  return 0;
}

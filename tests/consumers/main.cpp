// A consumer's program: includes the umbrella header and uses what its target offers.
#include <nvscope/nvscope.hpp>

#include <cstdio>

int main() {
  nvscope::trace t;
  t.strings.intern("consumer");
  std::printf("consumer ok: nvscope %d.%d.%d (%zu strings)\n", NVSCOPE_VERSION_MAJOR,
              NVSCOPE_VERSION_MINOR, NVSCOPE_VERSION_PATCH, t.strings.size());
  return 0;
}

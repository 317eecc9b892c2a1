// Must not compile: the tag lacks `static constexpr const char* name`.
#include <nvscope/annotate.hpp>

struct not_a_domain {};

int main() {
  NVSCOPE_RANGE_IN(not_a_domain, "x");
  return 0;
}

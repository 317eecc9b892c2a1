// A program that calls analyze() but has no file defining NVSCOPE_IMPLEMENTATION: it must fail
// to link, naming nvscope::v1::analyze (docs/analysis.md, "Building"), never link to a stub.
#include <nvscope/analysis.hpp>

int main() {
  nvscope::trace t;
  return static_cast<int>(nvscope::analyze(t).kernels.size());
}

// A consumer's program: includes the umbrella header and uses what its build offers. Where
// CUPTI's headers are on the include path the umbrella brings the collector (no define
// needed); the program then says whether libcupti loaded and whether the collector started,
// and a refusal is the collector's one line on stderr, never a loader failure.
#define NVSCOPE_IMPLEMENTATION // the program's one file with the analysis definitions
#include <nvscope/nvscope.hpp>

#include <cstdio>

int main() {
#if __has_include(<cupti.h>) && __has_include(<cuda_runtime_api.h>)
  nvscope::collector_options options;
  nvscope::collector c(options); // first thing in main, before any NVTX call
  const bool loaded = nvscope::prepare_collector();
  const bool started = c.start();
  std::printf("collector: libcupti %s, start %s\n", loaded ? "loaded" : "not loaded",
              started ? "ok" : "refused");
  if (started) c.stop();
#endif
  nvscope::trace t;
  t.strings.intern("consumer");
  const auto r = nvscope::analyze(t); // defined here, through NVSCOPE_IMPLEMENTATION
  std::printf("consumer ok: nvscope %d.%d.%d (%zu strings, %zu kernel rows)\n", NVSCOPE_VERSION_MAJOR,
              NVSCOPE_VERSION_MINOR, NVSCOPE_VERSION_PATCH, t.strings.size(), r.kernels.size());
  return 0;
}

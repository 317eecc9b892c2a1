// The compiled-out range: this TU is built with NVSCOPE_DISABLE.
#include <benchmark/benchmark.h>

#include <nvscope/annotate.hpp>

namespace {
void nvscope_range_compiled_out(benchmark::State& state) {
  for (auto _ : state) {
    // The same 8 statements as empty_loop, each with a compiled-out range.
    { NVSCOPE_RANGE("compiled_out"); benchmark::ClobberMemory(); }
    { NVSCOPE_RANGE("compiled_out"); benchmark::ClobberMemory(); }
    { NVSCOPE_RANGE("compiled_out"); benchmark::ClobberMemory(); }
    { NVSCOPE_RANGE("compiled_out"); benchmark::ClobberMemory(); }
    { NVSCOPE_RANGE("compiled_out"); benchmark::ClobberMemory(); }
    { NVSCOPE_RANGE("compiled_out"); benchmark::ClobberMemory(); }
    { NVSCOPE_RANGE("compiled_out"); benchmark::ClobberMemory(); }
    { NVSCOPE_RANGE("compiled_out"); benchmark::ClobberMemory(); }
  }
}
BENCHMARK(nvscope_range_compiled_out);
} // namespace

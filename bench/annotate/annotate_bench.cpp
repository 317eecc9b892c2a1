// nvscope's ranges against the raw NVTX calls they wrap, modelled on NVTX's own benchmark:
// each loop opens and closes one range. Run it once with no NVTX tool (the cost everyone
// pays) and once with a tool attached (NVTX_INJECTION64_PATH), see run.sh.
#include <benchmark/benchmark.h>

#include <nvscope/annotate.hpp>

#include <nvtx3/nvtx3.hpp>

// Each iteration opens and closes 8 ranges (from as many call sites), so that one cycle of
// loop overhead or code alignment does not decide a ratio of ~1 ns figures; the results
// script divides by 8. The compiler barrier after each keeps the compiler from merging the
// checks of neighbouring ranges (real code does work between ranges), for every variant.
#define NVSCOPE_BENCH_X1(stmt) \
  {                            \
    stmt;                      \
  }                            \
  benchmark::ClobberMemory();
#define NVSCOPE_BENCH_X8(stmt)                                                          \
  NVSCOPE_BENCH_X1(stmt) NVSCOPE_BENCH_X1(stmt) NVSCOPE_BENCH_X1(stmt) NVSCOPE_BENCH_X1(stmt) \
  NVSCOPE_BENCH_X1(stmt) NVSCOPE_BENCH_X1(stmt) NVSCOPE_BENCH_X1(stmt) NVSCOPE_BENCH_X1(stmt)

namespace {

void raw_push_pop(benchmark::State& state) {
  for (auto _ : state) {
    NVSCOPE_BENCH_X8(nvtxRangePushA("raw_push_pop"); nvtxRangePop());
  }
}
BENCHMARK(raw_push_pop);

void raw_domain_registered(benchmark::State& state) {
  nvtxDomainHandle_t domain = nvtxDomainCreateA("bench");
  nvtxStringHandle_t name = nvtxDomainRegisterStringA(domain, "raw_domain_registered");
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  a.message.registered = name;
  a.colorType = NVTX_COLOR_ARGB;
  a.color = 0xFF3A6FD8u;
  for (auto _ : state) {
    NVSCOPE_BENCH_X8(nvtxDomainRangePushEx(domain, &a); nvtxDomainRangePop(domain));
  }
}
BENCHMARK(raw_domain_registered);

void nvtx3_scoped_range(benchmark::State& state) {
  for (auto _ : state) {
    NVSCOPE_BENCH_X8(nvtx3::scoped_range r{"nvtx3_scoped_range"});
  }
}
BENCHMARK(nvtx3_scoped_range);

void nvscope_range(benchmark::State& state) {
  for (auto _ : state) {
    NVSCOPE_BENCH_X8(NVSCOPE_RANGE("nvscope_range"));
  }
}
BENCHMARK(nvscope_range);

void nvscope_func_range(benchmark::State& state) {
  for (auto _ : state) {
    NVSCOPE_BENCH_X8(NVSCOPE_FUNC_RANGE());
  }
}
BENCHMARK(nvscope_func_range);

void nvscope_formatted_range(benchmark::State& state) {
  int i = 0;
  for (auto _ : state) {
    NVSCOPE_BENCH_X8(NVSCOPE_RANGE_F("layer_%d", i); i = (i + 1) & 7);
  }
}
BENCHMARK(nvscope_formatted_range);

void nvscope_runtime_name_range(benchmark::State& state) {
  const std::string name = "runtime_name";
  for (auto _ : state) {
    NVSCOPE_BENCH_X8(nvscope::scoped_range r{name});
  }
}
BENCHMARK(nvscope_runtime_name_range);

void nvscope_range_runtime_disabled(benchmark::State& state) {
  nvscope::set_enabled(false);
  for (auto _ : state) {
    NVSCOPE_BENCH_X8(NVSCOPE_RANGE("nvscope_range_runtime_disabled"));
  }
  nvscope::set_enabled(true);
}
BENCHMARK(nvscope_range_runtime_disabled);

void empty_loop(benchmark::State& state) {
  for (auto _ : state) {
    NVSCOPE_BENCH_X8((void)0);
  }
}
BENCHMARK(empty_loop);

} // namespace

BENCHMARK_MAIN();

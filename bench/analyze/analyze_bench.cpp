// Throughput of nvscope's analysis and exports on a synthetic trace shaped like a training
// run (tests/analyze/synthetic_trace.hpp's training_run: 100 steps x 12 layers x (attention,
// ffn) ranges, ~1M kernels, a copy per layer, a graph launch per step). Counter `analysis_records_per_s`: records (kernels, copies, ranges,
// launches) analysed per second by nvscope::analyze.
#include "synthetic_trace.hpp"

#include <benchmark/benchmark.h>
#include <nvscope/analysis.hpp>
#include <nvscope/export.hpp>

#include <string>

namespace {

const nvscope::trace& training_run_trace() {
  static const nvscope::trace t = synthetic::training_run();
  return t;
}

std::uint64_t records(const nvscope::trace& t) { return synthetic::records(t); }

void analyze(benchmark::State& state) {
  const auto& t = training_run_trace();
  for (auto _ : state) {
    auto r = nvscope::analyze(t);
    benchmark::DoNotOptimize(r.kernels.data());
  }
  state.counters["kernels"] = static_cast<double>(t.kernels.size());
  state.counters["records"] = static_cast<double>(records(t));
  state.counters["analysis_records_per_s"] =
      benchmark::Counter(static_cast<double>(records(t)), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(analyze)->Unit(benchmark::kMillisecond)->MinTime(2.0);

void attribute(benchmark::State& state) {
  const auto& t = training_run_trace();
  for (auto _ : state) benchmark::DoNotOptimize(nvscope::attribute(t).kernel_owner.data());
  state.counters["records_per_s"] = benchmark::Counter(static_cast<double>(records(t)), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(attribute)->Unit(benchmark::kMillisecond);

void folded(benchmark::State& state) {
  const auto& t = training_run_trace();
  for (auto _ : state) benchmark::DoNotOptimize(nvscope::to_folded(t).size());
  state.counters["records_per_s"] = benchmark::Counter(static_cast<double>(records(t)), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(folded)->Unit(benchmark::kMillisecond);

void chrome_trace(benchmark::State& state) {
  const auto& t = training_run_trace();
  for (auto _ : state) benchmark::DoNotOptimize(nvscope::to_chrome_trace(t).size());
  state.counters["records_per_s"] = benchmark::Counter(static_cast<double>(records(t)), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(chrome_trace)->Unit(benchmark::kMillisecond);

} // namespace

BENCHMARK_MAIN();

// Throughput of nvscope's analysis and exports on a synthetic trace shaped like a training
// run (tests/analyze/synthetic_trace.hpp's training_run: 100 steps x 12 layers x (attention,
// ffn) ranges, ~1M kernels, a copy per layer, a graph launch per step). Counter `analysis_records_per_s`: records (kernels, copies, ranges,
// launches) analysed per second by nvscope::analyze. `row_stats/N`: the statistics every
// summary row takes (detail::stats_of: count, total, extremes, mean, standard deviation,
// median) over 8 M random durations (1-101 us, fixed seed) in rows of N values; counter
// `values_per_s`. Rows of a few hundred values are the rule in nvtx_kern_sum and the kernel
// summaries of real traces.
#define NVSCOPE_IMPLEMENTATION // this program's one file with the analysis definitions (docs/analysis.md, "Building")
#include "synthetic_trace.hpp"

#include <benchmark/benchmark.h>
#include <nvscope/analysis.hpp>
#include <nvscope/export.hpp>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

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

void row_stats(benchmark::State& state) {
  const auto row = static_cast<std::size_t>(state.range(0));
  const std::size_t rows = (std::size_t{8} << 20) / row;
  std::vector<std::uint64_t> values(rows * row);
  std::mt19937_64 rng(2026);
  for (auto& v : values) v = 1000 + rng() % 100000;
  for (auto _ : state) {
    double sum = 0.0;
    for (std::size_t r = 0; r < rows; ++r) sum += nvscope::detail::stats_of(values.data() + r * row, values.data() + (r + 1) * row).median;
    benchmark::DoNotOptimize(sum);
  }
  state.counters["values_per_s"] = benchmark::Counter(static_cast<double>(values.size()), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(row_stats)->Arg(16)->Arg(98)->Arg(1000)->Arg(14000)->Unit(benchmark::kMillisecond);

} // namespace

BENCHMARK_MAIN();

// Throughput of nvscope's analysis and exports on a synthetic trace shaped like a training
// run: 100 steps x 12 layers x (attention, ffn) ranges, ~1M kernels, a copy per layer, a
// graph launch per step. Counter `analysis_records_per_s`: records (kernels, copies, ranges,
// launches) analysed per second by nvscope::analyze.
#include <benchmark/benchmark.h>
#include <nvscope/analysis.hpp>
#include <nvscope/export.hpp>

#include <string>

namespace {

const nvscope::trace& synthetic() {
  static const nvscope::trace t = [] {
    nvscope::trace t;
    t.process_id = 1;
    t.threads.push_back({100, 0});
    std::uint64_t now = 1000, gpu = 2000;
    std::uint32_t corr = 1;
    const nvscope::string_id kernels[] = {t.strings.intern("gemm_kernel<128, 64>"), t.strings.intern("softmax_kernel"),
                                          t.strings.intern("layernorm_kernel"), t.strings.intern("gelu_kernel"),
                                          t.strings.intern("add_bias_kernel")};
    auto range = [&](const std::string& name, std::uint64_t start) {
      nvscope::range_record r;
      r.name = t.strings.intern(name);
      r.start = start;
      t.ranges.push_back(r);
      return t.ranges.size() - 1;
    };
    auto launch = [&](nvscope::string_id name) {
      t.launches.push_back({now, corr, 0});
      nvscope::kernel_record k;
      k.name = name;
      k.start = gpu;
      k.end = gpu + 2000 + (corr % 7) * 300;
      k.correlation = corr++;
      k.stream = 7;
      gpu = k.end + 500;
      now += 3000;
      t.kernels.push_back(k);
    };
    for (int step = 0; step < 100; ++step) {
      const auto s = range("step_" + std::to_string(step), now++);
      for (int layer = 0; layer < 12; ++layer) {
        const auto l = range("layer_" + std::to_string(layer), now++);
        t.launches.push_back({now, corr, 0});
        nvscope::copy_record c;
        c.kind = nvscope::copy_kind::host_to_device;
        c.bytes = 1 << 20;
        c.start = gpu;
        c.end = gpu + 4000;
        c.correlation = corr++;
        c.stream = 8;
        t.copies.push_back(c);
        now += 1000;
        for (const char* part : {"attention", "ffn"}) {
          const auto p = range(part, now++);
          for (int k = 0; k < 416; ++k) launch(kernels[k % 5]);
          t.ranges[p].end = now++;
        }
        t.ranges[l].end = now++;
      }
      // a graph launch of 8 kernels sharing one correlation
      t.launches.push_back({now, corr, 0});
      for (int k = 0; k < 8; ++k) {
        nvscope::kernel_record g;
        g.name = kernels[k % 5];
        g.start = gpu;
        g.end = gpu + 1000;
        g.correlation = corr;
        g.stream = 9;
        gpu = g.end + 100;
        t.kernels.push_back(g);
      }
      ++corr;
      t.ranges[s].end = now++;
    }
    t.begin = 0;
    t.finish = std::max(now, gpu) + 1;
    return t;
  }();
  return t;
}

std::uint64_t records(const nvscope::trace& t) {
  return t.kernels.size() + t.copies.size() + t.memsets.size() + t.ranges.size() + t.launches.size() + t.syncs.size();
}

void analyze(benchmark::State& state) {
  const auto& t = synthetic();
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
  const auto& t = synthetic();
  for (auto _ : state) benchmark::DoNotOptimize(nvscope::attribute(t).kernel_owner.data());
  state.counters["records_per_s"] = benchmark::Counter(static_cast<double>(records(t)), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(attribute)->Unit(benchmark::kMillisecond);

void folded(benchmark::State& state) {
  const auto& t = synthetic();
  for (auto _ : state) benchmark::DoNotOptimize(nvscope::to_folded(t).size());
  state.counters["records_per_s"] = benchmark::Counter(static_cast<double>(records(t)), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(folded)->Unit(benchmark::kMillisecond);

void chrome_trace(benchmark::State& state) {
  const auto& t = synthetic();
  for (auto _ : state) benchmark::DoNotOptimize(nvscope::to_chrome_trace(t).size());
  state.counters["records_per_s"] = benchmark::Counter(static_cast<double>(records(t)), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(chrome_trace)->Unit(benchmark::kMillisecond);

} // namespace

BENCHMARK_MAIN();

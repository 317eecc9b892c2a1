/* The collector's cost, measured as the time of a loop of empty kernel launches (200k by
 * default, NVSCOPE_BENCH_LAUNCHES to change), with an NVTX range around every 100 launches:
 *   BM_launch/plain            no collection
 *   BM_launch/cupti_min        a minimal CUPTI client: CONCURRENT_KERNEL only, buffers freed unread
 *   BM_launch/nvscope          nvscope's collector, default options (kernels, copies, memsets,
 *                              syncs, NVTX ranges, launch records)
 *   BM_launch/nvscope_kernels  nvscope's collector, kernels and launch records only
 *   BM_launch/plain_again      no collection, after CUPTI was used (does CUPTI leave a cost?)
 * The nvscope runs also time the analysis of the collected trace (analysis_records_per_s).
 * bench/collector/run.sh runs BM_launch/plain under nsys as a separate process.
 * BM_axpy_adapter shows nvscope/benchmark.hpp: collector-measured GPU time, GB/s, cold L2. */
#include <nvscope/analysis.hpp>
#include <nvscope/benchmark.hpp>
#include <nvscope/collector.hpp>

#include "workloads.hpp"

#include <benchmark/benchmark.h>
#include <nvtx3/nvToolsExt.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

int launches() {
  const char* v = std::getenv("NVSCOPE_BENCH_LAUNCHES");
  int n = v != nullptr ? std::atoi(v) : 0;
  return n > 0 ? n : 200000;
}

// The loop every mode times. Returns seconds, or a negative value on a CUDA error.
double launch_loop(int n, std::string& error) {
  if (cudaDeviceSynchronize() != cudaSuccess) {
    error = "cudaDeviceSynchronize failed before the loop";
    return -1;
  }
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) {
    if (i % 100 == 0) nvtxRangePushA("batch");
    error = wl::empty();
    if (!error.empty()) return -1;
    if (i % 100 == 99 || i == n - 1) nvtxRangePop();
  }
  cudaError_t e = cudaDeviceSynchronize();
  auto t1 = std::chrono::steady_clock::now();
  if (e != cudaSuccess) {
    error = std::string("cudaDeviceSynchronize: ") + cudaGetErrorString(e);
    return -1;
  }
  return std::chrono::duration<double>(t1 - t0).count();
}

// The minimal CUPTI client.
void CUPTIAPI min_requested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) {
  *size = std::size_t{8} << 20;
  *buffer = static_cast<std::uint8_t*>(std::aligned_alloc(8, *size));
  *max_records = 0;
}
void CUPTIAPI min_completed(CUcontext, std::uint32_t, std::uint8_t* buffer, std::size_t, std::size_t) {
  std::free(buffer);
}

enum mode { plain, cupti_min, nvscope_default, nvscope_kernels, plain_again };

void BM_launch(benchmark::State& state, mode m) {
  const int n = launches();
  auto& api = nvscope::detail::cupti();
  for (auto _ : state) {
    std::string error;
    nvscope::collector_options o;
    if (m == nvscope_kernels) o.kinds = nvscope::activity::kernels;
    nvscope::collector c(o);
    if (m == cupti_min) {
      if (!api.loaded || api.cuptiActivityRegisterCallbacks(min_requested, min_completed) != CUPTI_SUCCESS ||
          api.cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS) {
        state.SkipWithError("minimal CUPTI client could not start");
        return;
      }
    }
    if ((m == nvscope_default || m == nvscope_kernels) && !c.start()) {
      state.SkipWithError(c.errors().empty() ? "collector did not start" : c.errors().front().c_str());
      return;
    }
    const double s = launch_loop(n, error);
    if (s < 0) {
      state.SkipWithError(error.c_str());
      return;
    }
    state.SetIterationTime(s);
    state.counters["launch_us"] = s / n * 1e6;
    if (m == cupti_min) {
      api.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
      api.cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
      api.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    }
    if (m == nvscope_default || m == nvscope_kernels) {
      c.stop();
      const nvscope::trace& t = c.result();
      state.counters["kernels_recorded"] = static_cast<double>(t.kernels.size());
      state.counters["launches_recorded"] = static_cast<double>(t.launches.size());
      state.counters["ranges_recorded"] = static_cast<double>(t.ranges.size());
      state.counters["dropped"] = static_cast<double>(t.lost.dropped_records);
      state.counters["bytes_per_kernel_record"] = sizeof(nvscope::kernel_record);
      state.counters["bytes_per_kernel_with_launch"] =
          static_cast<double>(t.kernels.capacity() * sizeof(nvscope::kernel_record) +
                              t.launches.capacity() * sizeof(nvscope::launch_record)) /
          static_cast<double>(t.kernels.empty() ? 1 : t.kernels.size());
      const double records = static_cast<double>(t.kernels.size() + t.launches.size() + t.ranges.size());
      auto a0 = std::chrono::steady_clock::now();
      nvscope::analysis_report r = nvscope::analyze(t);
      auto a1 = std::chrono::steady_clock::now();
      benchmark::DoNotOptimize(r);
      state.counters["analysis_records_per_s"] = records / std::chrono::duration<double>(a1 - a0).count();
    }
  }
}

void BM_axpy_adapter(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  float *x = nullptr, *y = nullptr;
  if (cudaMalloc(reinterpret_cast<void**>(&x), sizeof(float) * n) != cudaSuccess ||
      cudaMalloc(reinterpret_cast<void**>(&y), sizeof(float) * n) != cudaSuccess) {
    state.SkipWithError("cudaMalloc failed");
    return;
  }
  nvscope::gpu_benchmark_options o;
  o.bytes_per_iteration = 3.0 * sizeof(float) * n;
  o.flush_l2 = state.range(1) != 0;
  std::string error;
  nvscope::measure_gpu(state, [&] {
    std::string e = wl::axpy(y, x, 1.0001f, n);
    if (!e.empty()) error = e;
  }, o);
  if (!error.empty()) state.SkipWithError(error.c_str());
  cudaFree(x);
  cudaFree(y);
}

} // namespace

BENCHMARK_CAPTURE(BM_launch, plain, plain)->UseManualTime()->Iterations(1)->Repetitions(5)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_launch, cupti_min, cupti_min)->UseManualTime()->Iterations(1)->Repetitions(5)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_launch, nvscope, nvscope_default)->UseManualTime()->Iterations(1)->Repetitions(5)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_launch, nvscope_kernels, nvscope_kernels)->UseManualTime()->Iterations(1)->Repetitions(5)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_launch, plain_again, plain_again)->UseManualTime()->Iterations(1)->Repetitions(5)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_axpy_adapter)->Args({1 << 26, 1})->Args({1 << 26, 0})->UseManualTime()->Unit(benchmark::kMicrosecond);

int main(int argc, char** argv) {
  nvscope::prepare_collector(); // before the first NVTX call: NVTX's tool is CUPTI (unless nsys set its own)
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("no CUDA device: nothing to measure\n");
    return 0;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

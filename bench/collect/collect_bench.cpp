/* The collector's cost, measured as the time of a loop of empty kernel launches (200k by
 * default, NVSCOPE_BENCH_LAUNCHES to change), with an NVTX range around every 100 launches:
 *   BM_launch/plain            no collection
 *   BM_launch/cupti_min        a minimal CUPTI client: CONCURRENT_KERNEL only, buffers freed unread
 *   BM_launch/nvscope          nvscope's collector, default options (kernels, copies, memsets,
 *                              syncs, NVTX ranges, launch records)
 *   BM_launch/nvscope_kernels  nvscope's collector, kernels and launch records only
 *   BM_launch/plain_again      no collection, after CUPTI was used (does CUPTI leave a cost?)
 * Where the cost goes (raw CUPTI clients, no nvscope code in the callbacks):
 *   BM_launch/cupti_kinds      CONCURRENT_KERNEL, MEMCPY, MEMSET, SYNCHRONIZATION, no callbacks
 *   BM_launch/cupti_k_memcpy, cupti_k_memset, cupti_k_sync: cupti_min + that one kind
 *   BM_launch/cupti_cb_runtime cupti_min + an empty callback on the runtime launch calls
 *   BM_launch/cupti_cb_driver  cupti_min + an empty callback on the driver launch calls
 *   BM_launch/cupti_api_act    cupti_min + RUNTIME and DRIVER activity records
 * nvscope's launch sources (collector_options::launches), default kinds:
 *   BM_launch/nvscope_driver_cb, nvscope_both_cb, nvscope_api_activity
 * nvscope's sync sources (collector_options::syncs), default kinds: BM_launch/nvscope is
 * host_callbacks (the default), BM_launch/nvscope_sync_activity the SYNCHRONIZATION kind
 * Counters cb_runtime_per_launch / cb_driver_per_launch: callbacks (entry site) per launch.
 * The nvscope runs also time the analysis of the collected trace (analysis_records_per_s).
 * bench/collect/run.sh runs BM_launch/plain under nsys as a separate process.
 * BM_axpy_adapter shows nvscope/collect/benchmark.hpp: collector-measured GPU time, GB/s, cold L2. */
#define NVSCOPE_IMPLEMENTATION // this program's one file with the analysis definitions (docs/analysis.md, "Building")
#include <nvscope/analysis.hpp>
#include <nvscope/collect/benchmark.hpp>
#include <nvscope/collector.hpp>

#include "workloads.hpp"

#include <benchmark/benchmark.h>
#include <nvtx3/nvToolsExt.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

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

// Raw callback clients: count entry-site callbacks per domain, nothing else.
std::atomic<std::uint64_t> cb_runtime{0}, cb_driver{0};
void CUPTIAPI count_callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId, const void* data) {
  if (static_cast<const CUpti_CallbackData*>(data)->callbackSite != CUPTI_API_ENTER) return;
  (domain == CUPTI_CB_DOMAIN_DRIVER_API ? cb_driver : cb_runtime).fetch_add(1, std::memory_order_relaxed);
}
// Enables (or disables) the callback on every launch call of one domain, by name.
void enable_launch_callbacks(CUpti_SubscriberHandle sub, bool driver, std::uint32_t enable) {
  auto& api = nvscope::detail::cupti();
  const auto size = driver ? static_cast<std::uint32_t>(CUPTI_DRIVER_TRACE_CBID_SIZE)
                           : static_cast<std::uint32_t>(CUPTI_RUNTIME_TRACE_CBID_SIZE);
  const auto domain = driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API;
  for (std::uint32_t cbid = 1; cbid < size; ++cbid) {
    const char* name = nvscope::detail::cupti_api_name(driver, cbid);
    if (name == nullptr) continue;
    for (const char* pre : nvscope::detail::host_call_prefixes::launches)
      if (std::strncmp(name, pre, std::strlen(pre)) == 0) {
        api.cuptiEnableCallback(enable, sub, domain, cbid);
        break;
      }
  }
}

enum mode {
  plain, cupti_min, nvscope_default, nvscope_kernels, plain_again,
  cupti_kinds, cupti_cb_runtime, cupti_cb_driver, cupti_api_act,
  nvscope_driver_cb, nvscope_both_cb, nvscope_api_activity, cupti_k_memcpy, cupti_k_memset, cupti_k_sync,
  nvscope_sync_activity
};
bool is_nvscope(mode m) {
  return m == nvscope_default || m == nvscope_kernels || m == nvscope_driver_cb || m == nvscope_both_cb ||
         m == nvscope_api_activity || m == nvscope_sync_activity;
}
bool is_raw(mode m) {
  return m == cupti_min || m == cupti_kinds || m == cupti_cb_runtime || m == cupti_cb_driver || m == cupti_api_act ||
         m == cupti_k_memcpy || m == cupti_k_memset || m == cupti_k_sync;
}

void BM_launch(benchmark::State& state, mode m) {
  const int n = launches();
  auto& api = nvscope::detail::cupti();
  for (auto _ : state) {
    std::string error;
    nvscope::collector_options o;
    if (m == nvscope_kernels) o.kinds = nvscope::activity::kernels;
    if (m == nvscope_driver_cb) o.launches = nvscope::launch_source::driver_callbacks;
    if (m == nvscope_both_cb) o.launches = nvscope::launch_source::runtime_and_driver_callbacks;
    if (m == nvscope_api_activity) o.launches = nvscope::launch_source::api_activity;
    if (m == nvscope_sync_activity) o.syncs = nvscope::sync_source::activity;
    nvscope::collector c(o);
    std::vector<CUpti_ActivityKind> raw_kinds;
    CUpti_SubscriberHandle sub = nullptr;
    cb_runtime = 0;
    cb_driver = 0;
    if (is_raw(m)) {
      raw_kinds.push_back(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
      if (m == cupti_kinds)
        for (auto k : {CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION})
          raw_kinds.push_back(k);
      if (m == cupti_k_memcpy) raw_kinds.push_back(CUPTI_ACTIVITY_KIND_MEMCPY);
      if (m == cupti_k_memset) raw_kinds.push_back(CUPTI_ACTIVITY_KIND_MEMSET);
      if (m == cupti_k_sync) raw_kinds.push_back(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
      if (m == cupti_api_act)
        for (auto k : {CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER}) raw_kinds.push_back(k);
      bool ok = api.loaded && api.cuptiActivityRegisterCallbacks(min_requested, min_completed) == CUPTI_SUCCESS;
      for (auto k : raw_kinds) ok = ok && api.cuptiActivityEnable(k) == CUPTI_SUCCESS;
      if (ok && (m == cupti_cb_runtime || m == cupti_cb_driver)) {
        ok = api.cuptiSubscribe(&sub, count_callback, nullptr) == CUPTI_SUCCESS;
        if (ok) enable_launch_callbacks(sub, m == cupti_cb_driver, 1);
      }
      if (!ok) {
        state.SkipWithError("raw CUPTI client could not start");
        return;
      }
    }
    if (is_nvscope(m) && !c.start()) {
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
    if (is_raw(m)) {
      state.counters["cb_runtime_per_launch"] = static_cast<double>(cb_runtime.load()) / n;
      state.counters["cb_driver_per_launch"] = static_cast<double>(cb_driver.load()) / n;
      if (sub != nullptr) {
        enable_launch_callbacks(sub, m == cupti_cb_driver, 0);
        api.cuptiUnsubscribe(sub);
      }
      api.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
      for (auto it = raw_kinds.rbegin(); it != raw_kinds.rend(); ++it) api.cuptiActivityDisable(*it);
      api.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    }
    if (is_nvscope(m)) {
      c.stop();
      const nvscope::trace& t = c.result();
      state.counters["cb_runtime_per_launch"] = static_cast<double>(c.stats().launch_calls_runtime) / n;
      state.counters["cb_driver_per_launch"] = static_cast<double>(c.stats().launch_calls_driver) / n;
      state.counters["kernels_recorded"] = static_cast<double>(t.kernels.size());
      state.counters["launches_recorded"] = static_cast<double>(t.launches.size());
      state.counters["ranges_recorded"] = static_cast<double>(t.ranges.size());
      state.counters["dropped"] = static_cast<double>(t.lost.dropped_records);
      state.counters["bytes_per_kernel_record"] = sizeof(nvscope::kernel_record);
      state.counters["bytes_per_kernel_with_launch"] =
          static_cast<double>(t.kernels.capacity() * sizeof(nvscope::kernel_record) +
                              t.kernel_configs.memory_bytes() +
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


int main(int argc, char** argv) {
  nvscope::prepare_collector(); // before the first NVTX call: NVTX's tool is CUPTI (unless nsys set its own)
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("no CUDA device: nothing to measure\n");
    return 0;
  }
  // NVSCOPE_BENCH_REPS: repetitions per mode (run.sh runs each mode in fresh processes too).
  const char* reps_env = std::getenv("NVSCOPE_BENCH_REPS");
  const int reps = reps_env != nullptr && std::atoi(reps_env) > 0 ? std::atoi(reps_env) : 5;
  const std::pair<const char*, mode> modes[] = {
      {"plain", plain},
      {"cupti_min", cupti_min},
      {"nvscope", nvscope_default},
      {"nvscope_kernels", nvscope_kernels},
      {"cupti_kinds", cupti_kinds},
      {"cupti_cb_runtime", cupti_cb_runtime},
      {"cupti_cb_driver", cupti_cb_driver},
      {"cupti_api_act", cupti_api_act},
      {"nvscope_driver_cb", nvscope_driver_cb},
      {"nvscope_both_cb", nvscope_both_cb},
      {"nvscope_api_activity", nvscope_api_activity},
      {"cupti_k_memcpy", cupti_k_memcpy},
      {"cupti_k_memset", cupti_k_memset},
      {"cupti_k_sync", cupti_k_sync},
      {"nvscope_sync_activity", nvscope_sync_activity},
      {"plain_again", plain_again},
  };
  for (const auto& md : modes)
    benchmark::RegisterBenchmark((std::string("BM_launch/") + md.first).c_str(), BM_launch, md.second)
        ->UseManualTime()
        ->Iterations(1)
        ->Repetitions(reps)
        ->Unit(benchmark::kMillisecond);
  // After the launch modes: it runs the collector, and plain must come before any CUPTI use.
  benchmark::RegisterBenchmark("BM_axpy_adapter", BM_axpy_adapter)
      ->Args({1 << 26, 1})
      ->Args({1 << 26, 0})
      ->UseManualTime()
      ->Unit(benchmark::kMicrosecond);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

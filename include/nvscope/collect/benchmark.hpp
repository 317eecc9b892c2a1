// nvscope-target: cupti
// nvscope-needs: benchmark::benchmark
#pragma once

/// \file collect/benchmark.hpp
/// Google Benchmark adapter: a benchmark reports the GPU time the collector measured for each
/// iteration (through manual time), with counters: kernels per iteration, and GB/s or
/// TFLOP/s when the caller states the bytes or FLOPs of one iteration. Optionally flushes the
/// L2 cache before each iteration, as nvbench's cold measurement does.
///
/// \code
///   #include <nvscope/collect/benchmark.hpp>
///
///   static void BM_axpy(benchmark::State& state) {
///     nvscope::gpu_benchmark_options o;
///     o.bytes_per_iteration = 3.0 * n * sizeof(float);  // read x, y; write y
///     o.flush_l2 = true;
///     nvscope::measure_gpu(state, [&] { axpy<<<g, b>>>(y, x, a, n); }, o);
///   }
///   BENCHMARK(BM_axpy)->UseManualTime();
/// \endcode
///
/// The GPU time of an iteration is the span from the first GPU operation (kernel, copy,
/// memset) that started in it to the last one's end, idle gaps included: what a caller waits
/// for. The sum of kernel durations alone is reported as the counter `kernel_s`.

#include <nvscope/collect/collector.hpp>

#include <benchmark/benchmark.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <string>

namespace nvscope {
inline namespace v1 {

/// Options of `measure_gpu`.
///
/// \code
///   nvscope::gpu_benchmark_options o;
///   o.flops_per_iteration = 2.0 * m * n * k;
/// \endcode
struct gpu_benchmark_options {
  double bytes_per_iteration = 0; ///< > 0: adds the counter "GB/s" (10^9 bytes per GPU second)
  double flops_per_iteration = 0; ///< > 0: adds the counter "TFLOP/s"
  bool flush_l2 = false;          ///< overwrite twice the L2's size before each iteration
  collector_options collector;    ///< what the collector records (kernels, copies, memsets)
};

namespace detail {

// A device buffer overwritten between iterations so that each starts with a cold L2.
class l2_flusher {
 public:
  l2_flusher() = default;
  l2_flusher(const l2_flusher&) = delete;
  l2_flusher& operator=(const l2_flusher&) = delete;
  ~l2_flusher() {
    if (buffer_ != nullptr) cudaFree(buffer_);
  }
  std::string prepare() {
    int device = 0, l2 = 0;
    cudaError_t e = cudaGetDevice(&device);
    if (e == cudaSuccess) e = cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device);
    if (e != cudaSuccess) return std::string("L2 size query failed: ") + cudaGetErrorString(e);
    bytes_ = static_cast<std::size_t>(l2) * 2;
    if (bytes_ == 0) return {};
    e = cudaMalloc(&buffer_, bytes_);
    if (e != cudaSuccess) return std::string("cudaMalloc of the L2 flush buffer failed: ") + cudaGetErrorString(e);
    return {};
  }
  std::string flush(int round) {
    if (buffer_ == nullptr) return {};
    cudaError_t e = cudaMemsetAsync(buffer_, round & 0xff, bytes_);
    if (e == cudaSuccess) e = cudaDeviceSynchronize();
    return e == cudaSuccess ? std::string{} : std::string("L2 flush failed: ") + cudaGetErrorString(e);
  }

 private:
  void* buffer_ = nullptr;
  std::size_t bytes_ = 0;
};

// GPU span, kernel time and kernel count of the records that started at or after `since`.
struct iteration_time {
  timestamp_ns first = ~timestamp_ns{0};
  timestamp_ns last = 0;
  std::uint64_t kernel_ns = 0;
  std::uint64_t kernels = 0;
  template <class Records>
  void add(const Records& records, timestamp_ns since, bool is_kernel) {
    for (const auto& r : records) {
      if (r.start < since) continue;
      first = std::min(first, r.start);
      last = std::max(last, r.end);
      if (is_kernel) {
        kernel_ns += r.end - r.start;
        ++kernels;
      }
    }
  }
  bool empty() const noexcept { return last == 0; }
};

// What measure_gpu adds up over the iterations.
struct gpu_benchmark_totals {
  double gpu_s = 0;             // each iteration's first GPU start to its last GPU end, summed
  double kernel_s = 0;          // kernel durations, summed
  std::uint64_t kernels = 0;    // kernels seen
  std::uint64_t iterations = 0; // iterations whose GPU work was recorded
  std::uint64_t dropped = 0;    // records CUPTI dropped: any makes the iteration an error
};

// Prepares the L2 flush and starts the collector; false (the benchmark skipped with the
// reason) when either cannot.
inline bool start_gpu_benchmark(benchmark::State& state, collector& c, l2_flusher& flusher,
                                const gpu_benchmark_options& options) {
  std::string e = options.flush_l2 ? flusher.prepare() : std::string();
  if (e.empty() && !c.start())
    e = "nvscope collector: " + (c.errors().empty() ? std::string("not started") : c.errors().front());
  if (!e.empty()) state.SkipWithError(e.c_str());
  return e.empty();
}

// One iteration's GPU time from the records drained after it; an error when none or some lost.
inline std::string add_iteration(benchmark::State& state, const trace& t, timestamp_ns since, gpu_benchmark_totals& sum) {
  sum.dropped += t.lost.dropped_records;
  iteration_time it;
  it.add(t.kernels, since, true);
  it.add(t.copies, since, false);
  it.add(t.memsets, since, false);
  if (it.empty()) return "no GPU work was recorded in an iteration";
  if (sum.dropped > 0) return "activity records were dropped; raise collector buffer sizes";
  const double s = static_cast<double>(it.last - it.first) * 1e-9;
  state.SetIterationTime(s);
  sum.gpu_s += s;
  sum.kernel_s += static_cast<double>(it.kernel_ns) * 1e-9;
  sum.kernels += it.kernels;
  ++sum.iterations;
  return {};
}

inline std::string synchronize(const char* what) {
  const cudaError_t e = cudaDeviceSynchronize();
  return e == cudaSuccess ? std::string() : std::string(what) + cudaGetErrorString(e);
}

inline void report_gpu_counters(benchmark::State& state, const gpu_benchmark_totals& sum,
                                const gpu_benchmark_options& options) {
  if (sum.iterations == 0 || sum.gpu_s <= 0) return;
  const double n = static_cast<double>(sum.iterations);
  state.counters["kernels_per_iter"] = static_cast<double>(sum.kernels) / n;
  state.counters["kernel_s"] = sum.kernel_s / n;
  if (options.bytes_per_iteration > 0) {
    state.counters["GB/s"] = options.bytes_per_iteration * n / sum.gpu_s / 1e9;
    state.SetBytesProcessed(static_cast<std::int64_t>(options.bytes_per_iteration * n));
  }
  if (options.flops_per_iteration > 0) state.counters["TFLOP/s"] = options.flops_per_iteration * n / sum.gpu_s / 1e12;
}

} // namespace detail

/// Runs `body` once per benchmark iteration and reports the GPU time the collector measured
/// (call `UseManualTime()` on the benchmark). `body` launches GPU work; it need not
/// synchronise. Where the collector cannot run (no GPU, another profiler), the benchmark is
/// skipped with that one-line reason.
template <class Body>
void measure_gpu(benchmark::State& state, Body&& body, const gpu_benchmark_options& options = {}) {
  collector_options co = options.collector;
  co.kinds = activity::kernels | activity::copies | activity::memsets;
  co.record_launches = false;
  co.print_errors = false;
  collector c(co);
  detail::l2_flusher flusher;
  if (!detail::start_gpu_benchmark(state, c, flusher, options)) return;
  detail::gpu_benchmark_totals sum;
  for (auto _ : state) {
    std::string error = options.flush_l2 ? flusher.flush(static_cast<int>(sum.iterations)) : std::string();
    if (error.empty()) error = detail::synchronize("cudaDeviceSynchronize failed: ");
    const timestamp_ns since = collector::now();
    body();
    if (error.empty()) error = detail::synchronize("the benchmark body failed: ");
    if (error.empty()) error = detail::add_iteration(state, c.drain(), since, sum);
    else c.drain();
    if (!error.empty()) {
      state.SkipWithError(error.c_str());
      break;
    }
  }
  c.stop();
  detail::report_gpu_counters(state, sum, options);
}

} // namespace v1
} // namespace nvscope

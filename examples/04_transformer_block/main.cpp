/* 04_transformer_block: why fusion wins, shown by the program's own measurements.
 *
 * A stack of transformer-block-shaped layers (LayerNorm, GEMM, softmax, GEMM + bias + GELU,
 * residual; bf16, fp32 arithmetic) runs in two configurations: all-unfused (12 kernels a
 * layer, as separate framework operators would launch) and all-fused (4 kernels a layer).
 * For each it prints kernels per layer, GPU time per phase, GPU busy % and the launch gaps
 * between kernels, then the speed-up, and checks that both compute the same result.
 * Every layer and phase is an NVTX range, so `nsys profile` shows the same structure.
 *
 * Timing: CUDA events around each kernel for the breakdown (busy % and gaps are estimated from
 * them), and events around whole forward passes, without per-kernel events, for the speed-up.
 *
 *   04_transformer_block [--layers N] [--tokens N] [--dim N] [--width N] [--iters N]
 */
#include <kernels/transformer_block.hpp>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace nk = nvscope::kernels;

namespace {

[[noreturn]] void fail(const char* what, cudaError_t e) {
  std::fprintf(stderr, "04_transformer_block: %s failed: %s\n", what, cudaGetErrorString(e));
  std::exit(1);
}
#define CHECK_CUDA(call)                    \
  do {                                      \
    const cudaError_t e_ = (call);          \
    if (e_ != cudaSuccess) fail(#call, e_); \
  } while (0)

// Per-kernel CUDA events: the launch hook a collector would replace.
class kernel_event_timer {
 public:
  ~kernel_event_timer() {
    for (cudaEvent_t e : events_) cudaEventDestroy(e);
  }
  void reset() {
    used_ = 0;
    phase_.clear();
  }
  template <class Fn> cudaError_t operator()(const char* /*kernel*/, int phase, Fn&& fn) {
    cudaError_t e = cudaSuccess;
    while (events_.size() < used_ + 2 && e == cudaSuccess) {
      cudaEvent_t ev = nullptr;
      e = cudaEventCreate(&ev);
      if (e == cudaSuccess) events_.push_back(ev);
    }
    if (e == cudaSuccess) e = cudaEventRecord(events_[used_]);
    if (e == cudaSuccess) e = fn();
    if (e == cudaSuccess) e = cudaEventRecord(events_[used_ + 1]);
    used_ += 2;
    phase_.push_back(phase);
    return e;
  }
  size_t kernels() const { return phase_.size(); }
  int phase(size_t i) const { return phase_[i]; }
  // Milliseconds from the first kernel's start event to event `j`.
  float at(size_t j) const {
    float ms = 0;
    CHECK_CUDA(cudaEventElapsedTime(&ms, events_[0], events_[j]));
    return ms;
  }

 private:
  std::vector<cudaEvent_t> events_;
  std::vector<int> phase_;
  size_t used_ = 0;
};

struct config_report {
  size_t kernels = 0;
  double kernels_per_layer = 0, span_ms = 0, busy_ms = 0, gap_total_ms = 0, gap_max_us = 0, forward_ms = 0;
  double phase_ms[nk::block_phase_count] = {};
};

// One configuration: a forward pass with every kernel timed, then `iters` plain passes timed
// whole. `run` is called as run(launch_hook) and runs one forward pass through the hook.
template <class Run> config_report measure_config(int layers, int iters, Run&& run) {
  config_report r;
  kernel_event_timer timer;
  auto plain = [](const char*, int, auto&& fn) { return fn(); };
  for (int i = 0; i < 3; ++i) CHECK_CUDA(run(plain));  // warm-up: module load, caches
  CHECK_CUDA(cudaDeviceSynchronize());

  CHECK_CUDA(run(timer));
  CHECK_CUDA(cudaDeviceSynchronize());
  r.kernels = timer.kernels();
  r.kernels_per_layer = double(r.kernels) / layers;
  float prev_end = 0;
  for (size_t k = 0; k < r.kernels; ++k) {
    const float start = timer.at(2 * k), end = timer.at(2 * k + 1);
    r.busy_ms += end - start;
    r.phase_ms[timer.phase(k)] += end - start;
    if (k > 0) {
      const double gap = std::max(0.f, start - prev_end);
      r.gap_total_ms += gap;
      r.gap_max_us = std::max(r.gap_max_us, gap * 1e3);
    }
    prev_end = end;
  }
  r.span_ms = prev_end;

  cudaEvent_t a = nullptr, b = nullptr;
  CHECK_CUDA(cudaEventCreate(&a));
  CHECK_CUDA(cudaEventCreate(&b));
  std::vector<float> times;
  for (int i = 0; i < iters; ++i) {
    CHECK_CUDA(cudaEventRecord(a));
    CHECK_CUDA(run(plain));
    CHECK_CUDA(cudaEventRecord(b));
    CHECK_CUDA(cudaEventSynchronize(b));
    float ms = 0;
    CHECK_CUDA(cudaEventElapsedTime(&ms, a, b));
    times.push_back(ms);
  }
  CHECK_CUDA(cudaEventDestroy(a));
  CHECK_CUDA(cudaEventDestroy(b));
  std::sort(times.begin(), times.end());
  r.forward_ms = times[times.size() / 2];
  return r;
}

std::vector<float> download(const nk::bf16* p, size_t n) {
  std::vector<nk::bf16> h(n);
  CHECK_CUDA(cudaMemcpy(h.data(), p, n * sizeof(nk::bf16), cudaMemcpyDeviceToHost));
  std::vector<float> f(n);
  for (size_t i = 0; i < n; ++i) f[i] = __bfloat162float(h[i]);
  return f;
}

int parse_int(const char* flag, const char* value) {
  char* end = nullptr;
  const long v = value ? std::strtol(value, &end, 10) : 0;
  if (!value || *end != '\0' || v <= 0 || v > (1 << 24)) {
    std::fprintf(stderr, "04_transformer_block: %s needs a positive integer, got '%s'\n", flag, value ? value : "");
    std::exit(2);
  }
  return static_cast<int>(v);
}

} // namespace

int main(int argc, char** argv) {
  nk::block_shape shape;
  int iters = 20;
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : nullptr;
    if (!std::strcmp(a, "--layers")) shape.layers = parse_int(a, v), ++i;
    else if (!std::strcmp(a, "--tokens")) shape.tokens = parse_int(a, v), ++i;
    else if (!std::strcmp(a, "--dim")) shape.dim = parse_int(a, v), ++i;
    else if (!std::strcmp(a, "--width")) shape.width = parse_int(a, v), ++i;
    else if (!std::strcmp(a, "--iters")) iters = parse_int(a, v), ++i;
    else {
      std::fprintf(stderr, "04_transformer_block: unknown argument '%s' (use --layers --tokens --dim --width --iters)\n", a);
      return 2;
    }
  }

  int devices = 0;
  const cudaError_t de = cudaGetDeviceCount(&devices);
  if (de != cudaSuccess || devices == 0) {
    std::printf("04_transformer_block: no CUDA device (%s); nothing to run\n",
                de != cudaSuccess ? cudaGetErrorString(de) : "cudaGetDeviceCount returned 0");
    return 0;
  }
  cudaDeviceProp prop{};
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));

  nk::transformer_block blk(shape);
  CHECK_CUDA(blk.init(20261121));
  const size_t out_elems = size_t(shape.tokens) * shape.dim;

  config_report rep[2];
  std::vector<float> out[2];
  for (int fused = 0; fused < 2; ++fused) {
    nvscope::scoped_range range{fused ? "fused" : "unfused"};
    rep[fused] = measure_config(shape.layers, iters, [&](auto&& hook) { return blk.run(fused != 0, hook); });
    CHECK_CUDA(cudaDeviceSynchronize());
    out[fused] = download(blk.output(), out_elems);
  }
  double num = 0, den = 0;
  size_t bad = 0;
  for (size_t i = 0; i < out_elems; ++i) {
    const double d = double(out[0][i]) - out[1][i];
    if (!std::isfinite(out[0][i]) || !std::isfinite(out[1][i])) ++bad;
    num += d * d;
    den += double(out[0][i]) * out[0][i];
  }
  const double rel = std::sqrt(num / (den > 0 ? den : 1));

  std::printf("nvscope transformer block: %d layers, tokens %d, dim %d, softmax width %d, bf16 (fp32 math), %s\n",
              shape.layers, shape.tokens, shape.dim, shape.width, prop.name);
  std::printf("  %-8s %13s %11s %9s %12s %12s %11s\n", "config", "kernels/layer", "forward ms", "GPU busy",
              "launch gaps", "gap total ms", "gap max us");
  for (int f = 0; f < 2; ++f) {
    const config_report& r = rep[f];
    std::printf("  %-8s %13.0f %11.3f %8.1f%% %12zu %12.3f %11.1f\n", f ? "fused" : "unfused", r.kernels_per_layer,
                r.forward_ms, 100.0 * r.busy_ms / (r.span_ms > 0 ? r.span_ms : 1), r.kernels ? r.kernels - 1 : 0,
                r.gap_total_ms, r.gap_max_us);
  }
  std::printf("  GPU time per phase, ms (one forward pass, all layers):\n  %-8s", "");
  for (int p = 0; p < nk::block_phase_count; ++p) std::printf(" %12s", nk::block_phases()[p]);
  std::printf("\n");
  for (int f = 0; f < 2; ++f) {
    std::printf("  %-8s", f ? "fused" : "unfused");
    for (int p = 0; p < nk::block_phase_count; ++p) std::printf(" %12.3f", rep[f].phase_ms[p]);
    std::printf("\n");
  }
  std::printf("fused over unfused: %.2fx faster (median of %d forward passes each); outputs differ by %.2e (relative)\n",
              rep[0].forward_ms / rep[1].forward_ms, iters, rel);
  if (bad > 0 || !(rel < 5e-2)) {
    std::fprintf(stderr, "04_transformer_block: the fused and unfused outputs disagree (relative %.3e, %zu non-finite)\n", rel, bad);
    return 1;
  }
  return 0;
}

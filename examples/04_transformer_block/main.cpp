/* 04_transformer_block: why fusion wins, shown by nvscope's own measurements.
 *
 * A stack of transformer-block-shaped layers (LayerNorm, GEMM, softmax, GEMM + bias + GELU,
 * residual; bf16, fp32 arithmetic) runs in two configurations: all-unfused (12 kernels a
 * layer, as separate framework operators would launch) and all-fused (4 kernels a layer).
 *
 * Each configuration is warmed up, then `--iters` forward passes (each an NVTX range
 * `forward`, with `layer_N` and the phases inside) run under nvscope's in-process CUPTI
 * collector. nvscope's analysis of that trace gives every figure printed: kernels per layer
 * and GPU time per phase (nvtx_gpu_proj_sum), the forward pass (median projection of
 * `forward`), GPU busy %, launch gaps and the verdict. Per configuration it writes, into the
 * current directory:
 *   transformer_<config>.trace.json     Chrome trace (ui.perfetto.dev, chrome://tracing)
 *   transformer_<config>.kern_sum.csv   cuda_gpu_kern_sum, nsys's columns
 *   transformer_<config>.stacks.folded  GPU time by NVTX path, layer numbers stripped
 *                                       (flamegraph.pl, speedscope.app)
 * Where the collector cannot start (under nsys, ncu or compute-sanitizer, no libcupti), it
 * prints one line and the demo measures with CUDA events instead. Either way it checks that
 * both configurations compute the same output, and ends with a comparison table.
 *
 *   04_transformer_block [--layers N] [--tokens N] [--dim N] [--width N] [--iters N]
 */
#define NVSCOPE_IMPLEMENTATION // this program's one file with the analysis definitions (docs/analysis.md, "Building")
#include <kernels/transformer_block.hpp>

#include <nvscope/analysis.hpp>
#include <nvscope/annotate.hpp>
#include <nvscope/collector.hpp>
#include <nvscope/export.hpp>

#include <cuda_runtime_api.h>
#include <nvtx3/nvtx3.hpp>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
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

constexpr int warmup_passes = 3;

// What the demo reports for one configuration, from either measurement path.
struct config_result {
  const char* name = "";
  bool collected = false; // true: nvscope's collector and analysis; false: CUDA events
  double kernels_per_layer = 0, forward_ms = 0, busy_percent = 0;
  double gaps_per_pass = 0, gap_median_us = 0, gap_p90_us = 0;
  double phase_ms[nk::block_phase_count] = {}; // a forward pass; < 0: no such range
  bool phases_recorded = true;                 // false: the trace holds no named phase range
  std::string verdict;
  std::vector<std::string> files, warnings;
};

// A forward pass that calls each launch as it is (no per-kernel hook).
constexpr auto plain = [](const char*, int, auto&& fn) { return fn(); };

template <class Run> void warm_up(Run&& run) {
  for (int i = 0; i < warmup_passes; ++i) CHECK_CUDA(run(plain)); // module load, caches, clocks
  CHECK_CUDA(cudaDeviceSynchronize());
}

// "domain:name" (":name" in the default domain) -> "name".
// --- The collector path --------------------------------------------------------------------

// Records `iters` forward passes of one configuration (already warmed up and the collector
// started), then reads every figure out of nvscope's analysis and writes the three files.
// The configuration and `forward` ranges are nvtx3 ranges with ASCII names; the layer and
// phase ranges are the library's (NVSCOPE_RANGE).
template <class Run>
void collect_config(nvscope::collector& c, int layers, int iters, Run&& run, config_result& r) {
  // CUPTI's first kernel after start() waits a few ms while it sets up: one pass absorbs that,
  // and its GPU records are drained away. The analysis window begins at the first measured pass.
  CHECK_CUDA(run(plain));
  CHECK_CUDA(cudaDeviceSynchronize());
  (void)c.drain();
  const nvscope::timestamp_ns measured_begin = nvscope::collector::now();
  {
    nvtx3::scoped_range config_range{r.name};
    for (int i = 0; i < iters; ++i) {
      nvtx3::scoped_range forward{"forward"};
      CHECK_CUDA(run(plain));
    }
    CHECK_CUDA(cudaDeviceSynchronize()); // the host waits for the passes it queued
  }
  c.stop(); // flush, join launches to kernels, nest the ranges
  nvscope::trace t = c.take();
  nvscope::analysis_options ao;
  ao.step_range = "forward";               // a step is one forward pass
  ao.window = {measured_begin, t.finish};  // the measured passes, not the warm-up
  const nvscope::analysis_report rep = nvscope::analyze(t, ao);

  r.collected = true;
  std::uint64_t passes = 0;
  for (double& p : r.phase_ms) p = -1;
  for (const nvscope::gpu_projection_row& row : rep.projections)
    if (row.name == "forward") passes = row.projected.count, r.forward_ms = row.projected.median / 1e6;
  bool any_phase = false;
  for (const nvscope::gpu_projection_row& row : rep.projections)
    for (int p = 0; p < nk::block_phase_count; ++p)
      if (row.name == nk::block_phases()[p] && passes > 0)
        r.phase_ms[p] = double(row.projected.total) / 1e6 / double(passes), any_phase = true;
  r.phases_recorded = any_phase;
  r.kernels_per_layer = rep.kernels_per_step / layers;
  if (passes != std::uint64_t(iters) || rep.steps != std::uint64_t(iters))
    r.warnings.push_back("expected " + std::to_string(iters) + " forward passes, the analysis found " + std::to_string(passes));
  const nvscope::activity_metrics& o = rep.overall;
  r.busy_percent = o.gpu_busy_percent;
  r.gaps_per_pass = passes ? double(o.gap_count) / double(passes) : 0;
  r.gap_median_us = o.gap_median_ns / 1e3;
  r.gap_p90_us = o.gap_p90_ns / 1e3;
  r.verdict = nvscope::findings_text(t, rep.diagnosis.verdict); // the class, then its findings
  for (const std::string& w : nvscope::warning_lines(rep)) r.warnings.push_back(w);

  const std::string stem = std::string("transformer_") + r.name;
  nvscope::folded_options fo;
  fo.strip_layer_numbers = true; // layer_7 -> layer_N: one stack per kernel and phase
  fo.step_range = "forward";
  const std::pair<std::string, std::string> outputs[] = {
      {stem + ".trace.json", nvscope::to_chrome_trace(t)},
      {stem + ".kern_sum.csv", nvscope::to_csv(rep, nvscope::report::cuda_gpu_kern_sum)},
      {stem + ".stacks.folded", nvscope::to_folded(t, fo)},
      {stem + ".summary.json", nvscope::to_json(rep, t)}, // nvscope diff transformer_unfused.summary.json transformer_fused.summary.json
  };
  for (const auto& [path, text] : outputs) {
    if (auto w = nvscope::write_file(path, text); !w) r.warnings.push_back(w.error);
    else r.files.push_back(path);
  }
}

// --- The fallback: CUDA events ---------------------------------------------------------------

// Per-kernel CUDA events, used only when the collector cannot start.
class kernel_event_timer {
 public:
  ~kernel_event_timer() {
    for (cudaEvent_t e : events_) cudaEventDestroy(e);
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

double nearest_rank(std::vector<double> v, double q) { // v non-empty
  std::sort(v.begin(), v.end());
  const size_t rank = size_t(std::ceil(q * double(v.size())));
  return v[rank > 0 ? rank - 1 : 0];
}

// One forward pass with every kernel between two events (busy % and gaps are estimates: the
// events themselves sit between the kernels), then `iters` passes timed whole.
template <class Run> void time_config_with_events(int layers, int iters, Run&& run, config_result& r) {
  kernel_event_timer timer;
  CHECK_CUDA(run(timer));
  CHECK_CUDA(cudaDeviceSynchronize());
  r.kernels_per_layer = double(timer.kernels()) / layers;
  double busy = 0;
  float prev_end = 0;
  for (double& p : r.phase_ms) p = -1; // -1: no kernel of that phase
  std::vector<double> gaps;
  for (size_t k = 0; k < timer.kernels(); ++k) {
    const float start = timer.at(2 * k), end = timer.at(2 * k + 1);
    busy += end - start;
    double& phase = r.phase_ms[timer.phase(k)];
    phase = (phase < 0 ? 0 : phase) + (end - start);
    if (k > 0) gaps.push_back(std::max(0.f, start - prev_end) * 1e3);
    prev_end = end;
  }
  r.busy_percent = 100.0 * busy / (prev_end > 0 ? prev_end : 1);
  r.gaps_per_pass = double(gaps.size());
  if (!gaps.empty()) r.gap_median_us = nearest_rank(gaps, 0.5), r.gap_p90_us = nearest_rank(gaps, 0.9);

  cudaEvent_t a = nullptr, b = nullptr;
  CHECK_CUDA(cudaEventCreate(&a));
  CHECK_CUDA(cudaEventCreate(&b));
  std::vector<double> times;
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
  r.forward_ms = nearest_rank(times, 0.5);
  r.verdict = "(no verdict: CUDA events, not the collector)";
}

// --- Reporting ---------------------------------------------------------------------------------

// Bytes a forward pass must read and write at the least (each tensor once per kernel that
// touches it; bf16), from the shape: the model behind "fewer bytes", not a measurement.
double model_bytes_per_pass(const nk::block_shape& s, bool fused) {
  const double td = double(s.tokens) * s.dim, ts = double(s.tokens) * s.width, w = double(s.width) * s.dim;
  // unfused: LN 3 kernels (4 TD), GEMM (TD + W + TS), softmax 4 kernels (6 TS),
  //          GEMM (TS + W + TD), bias (2 TD), GELU (2 TD), residual (3 TD)
  // fused:   LN (2 TD), GEMM (TD + W + TS), softmax (2 TS), GEMM + epilogue (TS + W + 2 TD)
  const double per_layer = fused ? 5 * td + 4 * ts + 2 * w : 13 * td + 8 * ts + 2 * w;
  return 2.0 * (per_layer * s.layers + 2 * td); // + the input copy at the start of a pass
}

void print_config(const config_result& r, int iters) {
  std::printf("\n%s: %.0f kernels a layer; %s\n", r.name, r.kernels_per_layer,
              r.collected ? "nvscope collector (in-process CUPTI), nvscope analysis"
                          : "CUDA events (fallback: the collector did not start)");
  std::printf("  forward pass     %.3f ms (%s of %d)\n", r.forward_ms,
              r.collected ? "median GPU projection of the `forward` range" : "median, events around whole passes", iters);
  if (r.phases_recorded) {
    std::printf("  GPU ms a pass  ");
    for (int p = 0; p < nk::block_phase_count; ++p) {
      if (r.phase_ms[p] < 0) std::printf("  %s -", nk::block_phases()[p]);
      else std::printf("  %s %.3f", nk::block_phases()[p], r.phase_ms[p]);
    }
    std::printf("\n");
  } else {
    std::printf("  GPU ms a pass    not available: no phase range of the library reached the trace\n");
  }
  std::printf("  GPU busy         %.1f%%; launch gaps %.0f a pass, median %.1f us, p90 %.1f us\n", r.busy_percent,
              r.gaps_per_pass, r.gap_median_us, r.gap_p90_us);
  std::string verdict = r.verdict; // several lines: indent the findings under the first
  while (!verdict.empty() && verdict.back() == '\n') verdict.pop_back();
  for (std::size_t at = verdict.find('\n'); at != std::string::npos; at = verdict.find('\n', at + 1))
    verdict.insert(at + 1, "                   "), at += 19;
  std::printf("  verdict          %s\n", verdict.c_str());
  if (!r.files.empty()) {
    std::printf("  wrote           ");
    for (const std::string& f : r.files) std::printf(" %s", f.c_str());
    std::printf("\n");
  }
  for (const std::string& w : r.warnings) std::printf("  warning: %s\n", w.c_str());
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
  nvscope::collector collector; // first: points NVTX at CUPTI before any range opens

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

  std::printf("nvscope transformer block: %d layers, tokens %d, dim %d, softmax width %d, bf16 (fp32 math), %s\n",
              shape.layers, shape.tokens, shape.dim, shape.width, prop.name);
  std::printf("each configuration: %d warm-up passes, then %d forward passes measured\n", warmup_passes, iters);
  std::fflush(stdout);

  config_result rep[2];
  std::vector<float> out[2];
  bool use_collector = true; // until the first start() fails
  for (int fused = 0; fused < 2; ++fused) {
    config_result& r = rep[fused];
    r.name = fused ? "fused" : "unfused";
    auto run = [&](auto&& hook) { return blk.run(fused != 0, hook); };
    warm_up(run);
    if (use_collector && collector.start()) {
      collect_config(collector, shape.layers, iters, run, r);
    } else {
      if (use_collector) std::printf("(the collector could not start: see the line above; timing with CUDA events instead)\n");
      use_collector = false;
      nvscope::scoped_range config_range{r.name};
      time_config_with_events(shape.layers, iters, run, r);
    }
    CHECK_CUDA(cudaDeviceSynchronize());
    out[fused] = download(blk.output(), out_elems);
    print_config(r, iters);
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
  const bool agree = bad == 0 && rel < 5e-2;

  if (!rep[0].files.empty() || !rep[1].files.empty()) {
    char cwd[4096] = ".";
    if (!::getcwd(cwd, sizeof cwd)) std::strcpy(cwd, ".");
    std::printf("\nfiles are in %s: open the .trace.json in ui.perfetto.dev, the .kern_sum.csv reads like\n"
                "`nsys stats --format csv`, the .stacks.folded go to flamegraph.pl or speedscope.app\n",
                cwd);
  }
  std::printf("\noutputs %s: fused vs unfused differ by %.2e (relative; limit 5e-2)%s\n", agree ? "agree" : "DISAGREE",
              rel, bad ? ", with non-finite values" : "");

  const double mb[2] = {model_bytes_per_pass(shape, false) / 1e6, model_bytes_per_pass(shape, true) / 1e6};
  std::printf("\n  %-8s %13s %11s %9s %10s %11s %11s %10s\n", "config", "kernels/layer", "forward ms", "GPU busy",
              "gaps/pass", "gap med us", "gap p90 us", "MB/pass *");
  for (int f = 0; f < 2; ++f) {
    const config_result& r = rep[f];
    std::printf("  %-8s %13.0f %11.3f %8.1f%% %10.0f %11.1f %11.1f %10.0f\n", r.name, r.kernels_per_layer, r.forward_ms,
                r.busy_percent, r.gaps_per_pass, r.gap_median_us, r.gap_p90_us, mb[f]);
  }
  std::printf("  fused over unfused: %.2fx faster, %.1fx fewer launches, %.1fx fewer bytes, GPU idle %.1f%% -> %.1f%%\n",
              rep[0].forward_ms / rep[1].forward_ms, rep[0].kernels_per_layer / rep[1].kernels_per_layer, mb[0] / mb[1],
              100.0 - rep[0].busy_percent, 100.0 - rep[1].busy_percent);
  std::printf("  * MB each pass must read and write at the least, from the shape (a model, not measured)\n");
  if (!agree) {
    std::fprintf(stderr, "04_transformer_block: the fused and unfused outputs disagree (relative %.3e, %zu non-finite)\n", rel, bad);
    return 1;
  }
  return 0;
}

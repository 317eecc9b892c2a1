/* 02_capture_nsys: record only the chosen training steps under nsys or ncu.
 *
 * A training-loop-shaped program (a one-layer least-squares fit: forward, loss, backward,
 * optimizer kernels per step) driven by nvscope::capture_schedule. The schedule comes from
 * NVSCOPE_CAPTURE when set (default: skip=2,wait=1,warmup=1,active=3,repeat=2), starts and
 * stops capture through cudaProfilerStart/Stop and through the NVTX range capture@nvscope,
 * and opens step_N and warmup ranges. Under
 *   nsys profile --capture-range=cudaProfilerApi ...   or
 *   nsys profile --capture-range=nvtx --nvtx-capture=capture@nvscope ...   or
 *   ncu --profile-from-start off ...
 * only the active steps' kernels are recorded. The last line printed lists the recorded
 * steps so that a script can check the profiler's report against it. The parameters are
 * checked against a double-precision CPU run of the same steps.
 *
 *   02_capture_nsys [--steps N] [--mechanism cuda|nvtx|both] [--n ELEMENTS]
 */
#include <nvscope/capture.hpp>

#include <nvtx3/nvToolsExt.h>

#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#define CHECK_CUDA(call)                                                                   \
  do {                                                                                     \
    cudaError_t err_ = (call);                                                             \
    if (err_ != cudaSuccess) {                                                             \
      std::fprintf(stderr, "02_capture_nsys: %s failed: %s (%s:%d)\n", #call,              \
                   cudaGetErrorString(err_), __FILE__, __LINE__);                          \
      std::exit(1);                                                                        \
    }                                                                                      \
  } while (0)

namespace {

__global__ void init_kernel(float* w, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) w[i] = 0.5f;
}
__global__ void forward_kernel(const float* w, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = w[i] * x[i];
}
__global__ void loss_kernel(const float* y, const float* t, float* r, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) r[i] = y[i] - t[i];
}
__global__ void backward_kernel(const float* r, const float* x, float* g, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) g[i] = 2.0f * r[i] * x[i];
}
__global__ void optimizer_kernel(float* w, const float* g, float lr, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) w[i] -= lr * g[i];
}

// A phase of a step, as an NVTX push/pop range in the default domain.
struct phase_range {
  explicit phase_range(const char* name) { nvtxRangePushA(name); }
  ~phase_range() { nvtxRangePop(); }
  phase_range(const phase_range&) = delete;
  phase_range& operator=(const phase_range&) = delete;
};

int usage(const char* why) {
  std::fprintf(stderr, "02_capture_nsys: %s\nusage: 02_capture_nsys [--steps N] [--mechanism cuda|nvtx|both] [--n ELEMENTS]\n", why);
  return 2;
}

bool parse_int(const char* s, long lo, long hi, long& out) {
  char* end = nullptr;
  long v = std::strtol(s, &end, 10);
  if (!s[0] || *end || v < lo || v > hi) return false;
  out = v;
  return true;
}

} // namespace

int main(int argc, char** argv) {
  long steps = 12, n = 1 << 20;
  std::string mechanism = "both";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) return usage(("missing value after " + a).c_str());
    if (a == "--steps") {
      if (!parse_int(argv[++i], 0, 1000000, steps)) return usage("--steps wants 0..1000000");
    } else if (a == "--n") {
      if (!parse_int(argv[++i], 1, 1 << 28, n)) return usage("--n wants 1..268435456");
    } else if (a == "--mechanism") {
      mechanism = argv[++i];
      if (mechanism != "cuda" && mechanism != "nvtx" && mechanism != "both")
        return usage("--mechanism wants cuda, nvtx or both");
    } else {
      return usage(("unknown argument " + a).c_str());
    }
  }

  int devices = 0;
  cudaError_t err = cudaGetDeviceCount(&devices);
  if (err != cudaSuccess || devices == 0) {
    std::printf("02_capture_nsys: no CUDA device (%s); nothing to run\n",
                err != cudaSuccess ? cudaGetErrorString(err) : "none found");
    return 0;
  }

  if (mechanism != "nvtx") nvscope::use_cuda_profiler_capture();
  if (mechanism != "cuda") nvscope::add_capture_backend(nvscope::nvtx_capture_range());

  const int N = static_cast<int>(n);
  const float lr = 0.05f;
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> hx(N), ht(N);
  for (int i = 0; i < N; ++i) {
    hx[i] = dist(rng);
    ht[i] = dist(rng);
  }
  float *w, *x, *t, *y, *r, *g;
  for (float** p : {&w, &x, &t, &y, &r, &g}) CHECK_CUDA(cudaMalloc(p, sizeof(float) * N));
  CHECK_CUDA(cudaMemcpy(x, hx.data(), sizeof(float) * N, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(t, ht.data(), sizeof(float) * N, cudaMemcpyHostToDevice));
  const int block = 256, grid = (N + block - 1) / block;
  init_kernel<<<grid, block>>>(w, N);   // before the loop: never recorded
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaDeviceSynchronize());

  std::string recorded;
  unsigned long long ranges = 0;
  {
    nvscope::capture_schedule schedule(nvscope::capture_options_from_env(
        "NVSCOPE_CAPTURE",
        nvscope::schedule_options{}.skip_first(2).wait(1).warmup(1).active(3).repeat(2)));
    for (long s = 0; s < steps; ++s) {
      auto step = schedule.step_scope();
      {
        phase_range fw("forward");
        forward_kernel<<<grid, block>>>(w, x, y, N);
        CHECK_CUDA(cudaGetLastError());
        loss_kernel<<<grid, block>>>(y, t, r, N);
        CHECK_CUDA(cudaGetLastError());
      }
      {
        phase_range bw("backward");
        backward_kernel<<<grid, block>>>(r, x, g, N);
        CHECK_CUDA(cudaGetLastError());
      }
      {
        phase_range op("optimizer");
        optimizer_kernel<<<grid, block>>>(w, g, lr, N);
        CHECK_CUDA(cudaGetLastError());
      }
      // Everything of a recorded step must reach the GPU before capture closes.
      CHECK_CUDA(cudaDeviceSynchronize());
      std::printf("step %ld: %s\n", s, nvscope::to_string(step.phase()));
      if (step.recording()) recorded += (recorded.empty() ? "" : ",") + std::to_string(s);
    }
    schedule.finish();
    ranges = schedule.capture_ranges();
    std::printf("schedule: %s\n", nvscope::to_spec(schedule.options()).c_str());
  }

  // Double-precision CPU reference of the same steps.
  std::vector<float> hw(N);
  CHECK_CUDA(cudaMemcpy(hw.data(), w, sizeof(float) * N, cudaMemcpyDeviceToHost));
  double worst = 0;
  for (int i = 0; i < N; ++i) {
    double wi = 0.5;
    for (long s = 0; s < steps; ++s) {
      const double res = wi * hx[i] - ht[i];
      wi -= static_cast<double>(lr) * 2.0 * res * hx[i];
    }
    worst = std::fmax(worst, std::fabs(wi - hw[i]) / (1.0 + std::fabs(wi)));
  }
  for (float* p : {w, x, t, y, r, g}) CHECK_CUDA(cudaFree(p));
  const bool ok = worst < 1e-4;
  std::printf("check against the CPU reference: max relative error %.3g (%s)\n", worst,
              ok ? "ok" : "FAILED");
  std::printf("nvscope-capture: recorded_steps=%s kernels_per_step=4 capture_ranges=%llu mechanism=%s\n",
              recorded.c_str(), ranges, mechanism.c_str());
  return ok ? 0 : 1;
}

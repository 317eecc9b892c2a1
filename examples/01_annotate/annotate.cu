/* 01_annotate: a tiny training loop, annotated with every nvscope annotation feature.
 *
 * Shape (as in a Transformer benchmark): a warm-up, then numbered steps; each step runs a
 * forward pass and a backward pass over a few layers, then an optimizer update. A loader
 * thread prepares batches; its "prefetch" range starts on the loader and ends on the main
 * thread when the batch is consumed (unique_range). Shown:
 *   NVSCOPE_RANGE / NVSCOPE_RANGE_F (step_N, layer_N_forward) / NVSCOPE_FUNC_RANGE,
 *   a library domain as a tag type and one named at run time, colours (palette, RGB and
 *   automatic), categories, payloads (int32, uint64, double), marks, thread, stream and
 *   device names, and the run-time switch (NVSCOPE_DISABLE=1).
 * Run:  nsys profile --trace=cuda,nvtx -o annotate ./01_annotate   (see README.md)
 */
#include <nvscope/annotate.hpp>
#include <nvscope/annotate/cuda_names.hpp>

#include <cuda_runtime.h>

#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#define CUDA_CHECK(call)                                                                       \
  do {                                                                                         \
    cudaError_t err_ = (call);                                                                 \
    if (err_ != cudaSuccess) {                                                                 \
      std::fprintf(stderr, "01_annotate: %s failed at %s:%d: %s\n", #call, __FILE__, __LINE__, \
                   cudaGetErrorString(err_));                                                  \
      std::exit(1);                                                                            \
    }                                                                                          \
  } while (0)

// The "library" this program uses has its own domain: its ranges get their own row.
struct tinynet {
  static constexpr const char* name = "tinynet";
};

namespace {

constexpr int n = 1 << 18;
constexpr int layers = 4;
constexpr int warmup_steps = 2;
constexpr int steps = 5;
constexpr nvscope::category compute_cat{1};
constexpr nvscope::category copy_cat{2};

__global__ void forward_layer(const float* x, float* y, float a, float b, int count) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) y[i] = tanhf(a * x[i] + b);
}

__global__ void backward_layer(const float* y, const float* dy, float* dx, float a, int count) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) dx[i] = dy[i] * a * (1.0f - y[i] * y[i]);
}

struct model {
  float a[layers], b[layers];
  float* act[layers + 1];  // act[0] is the input batch
  float* grad[layers + 1];
  cudaStream_t compute, copy;
};

void forward(model& m) {
  NVSCOPE_FUNC_RANGE_IN(tinynet, compute_cat);  // "{anonymous}::forward(...)" in domain tinynet
  for (int l = 0; l < layers; ++l) {
    NVSCOPE_RANGE_F_IN(tinynet, "layer_%d_forward", l);  // formatted on the stack, registered once
    forward_layer<<<(n + 255) / 256, 256, 0, m.compute>>>(m.act[l], m.act[l + 1], m.a[l], m.b[l], n);
    CUDA_CHECK(cudaGetLastError());
  }
}

void backward(model& m) {
  NVSCOPE_FUNC_RANGE_IN(tinynet, compute_cat);
  for (int l = layers - 1; l >= 0; --l) {
    NVSCOPE_RANGE_F_IN(tinynet, "layer_%d_backward", l);
    backward_layer<<<(n + 255) / 256, 256, 0, m.compute>>>(m.act[l + 1], m.grad[l + 1], m.grad[l], m.a[l], n);
    CUDA_CHECK(cudaGetLastError());
  }
}

// The loader: fills pinned batches on its own thread; each batch's "prefetch" range is
// started here and ended by the consumer (a range that crosses threads).
struct batch {
  std::vector<float> data;
  nvscope::unique_range prefetch;
};

class loader {
 public:
  loader() : thread_([this] { run(); }) {}
  ~loader() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  batch next() {
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait(lock, [this] { return !ready_.empty(); });
    batch b = std::move(ready_.front());
    ready_.pop_front();
    cv_.notify_all();
    return b;
  }

 private:
  void run() {
    nvscope::name_current_thread("data_loader");
    const nvscope::domain data = nvscope::domain::named("data");  // a domain named at run time
    std::mt19937 rng{std::random_device{}()};
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    for (std::uint64_t id = 0;; ++id) {
      {
        std::unique_lock<std::mutex> lock(mutex_);
        cv_.wait(lock, [this] { return stop_ || ready_.size() < 2; });
        if (stop_) return;
      }
      batch b;
      b.prefetch = nvscope::unique_range{data, "prefetch", nvscope::payload{id}};
      {
        nvscope::scoped_range fill{data, "fill_batch", nvscope::colors::olive};
        b.data.resize(n);
        for (float& v : b.data) v = dist(rng);
      }
      std::lock_guard<std::mutex> lock(mutex_);
      ready_.push_back(std::move(b));
      cv_.notify_all();
    }
  }
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<batch> ready_;
  bool stop_ = false;
  std::thread thread_;
};

// One step; leaves the network's output in `out` and returns the loss.
double train_step(model& m, loader& l, std::vector<float>& out) {
  {
    NVSCOPE_RANGE("h2d_batch", copy_cat, nvscope::colors::orange);
    batch b = l.next();
    CUDA_CHECK(cudaMemcpyAsync(m.act[0], b.data.data(), n * sizeof(float), cudaMemcpyHostToDevice, m.copy));
    CUDA_CHECK(cudaStreamSynchronize(m.copy));
    b.prefetch.end();  // started on the loader thread, ended here
  }
  {
    NVSCOPE_RANGE("forward_pass", nvscope::colors::green);
    forward(m);
  }
  {
    NVSCOPE_RANGE("backward_pass", nvscope::color::rgb(200, 60, 60));
    CUDA_CHECK(cudaMemcpyAsync(m.grad[layers], m.act[layers], n * sizeof(float), cudaMemcpyDeviceToDevice, m.compute));
    backward(m);
  }
  {
    NVSCOPE_RANGE("optimizer_step");  // automatic colour from the name
    std::vector<float> y(n);
    CUDA_CHECK(cudaMemcpyAsync(y.data(), m.act[layers], n * sizeof(float), cudaMemcpyDeviceToHost, m.compute));
    CUDA_CHECK(cudaStreamSynchronize(m.compute));
    double loss = 0.0;
    for (float v : y) loss += 0.5 * static_cast<double>(v) * v;
    loss /= n;
    for (int l2 = 0; l2 < layers; ++l2) m.a[l2] -= 0.01f * static_cast<float>(loss);
    out.swap(y);
    return loss;
  }
}

} // namespace

int main() {
  int devices = 0;
  cudaError_t err = cudaGetDeviceCount(&devices);
  if (err != cudaSuccess || devices == 0) {
    std::printf("01_annotate: no CUDA device (%s); nothing to annotate\n",
                err != cudaSuccess ? cudaGetErrorString(err) : "cudaGetDeviceCount returned 0");
    return 0;
  }
  nvscope::name_current_thread("trainer");
  nvscope::name_category(compute_cat, "compute");
  nvscope::name_category(copy_cat, "copy");
  nvscope::name_category<tinynet>(compute_cat, "compute");
  CUDA_CHECK(cudaSetDevice(0));
  nvscope::name_device(0, "trainer_gpu");
  std::printf("01_annotate: annotations %s\n", nvscope::enabled() ? "on" : "off (NVSCOPE_DISABLE)");

  model m{};
  std::mt19937 rng{std::random_device{}()};
  std::uniform_real_distribution<float> wdist(0.5f, 1.5f), bdist(-0.2f, 0.2f);
  for (int l = 0; l < layers; ++l) {
    m.a[l] = wdist(rng);
    m.b[l] = bdist(rng);
  }
  for (int l = 0; l <= layers; ++l) {
    CUDA_CHECK(cudaMalloc(&m.act[l], n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&m.grad[l], n * sizeof(float)));
  }
  CUDA_CHECK(cudaStreamCreate(&m.compute));
  CUDA_CHECK(cudaStreamCreate(&m.copy));
  nvscope::name_stream(m.compute, "compute");
  nvscope::name_stream(m.copy, "h2d_copies");

  std::vector<float> output;  // the network's output in the last step
  double last_loss = 0.0;
  float a_used[layers], b_used[layers];
  {
    loader data;
    {
      NVSCOPE_RANGE("warmup", nvscope::colors::gray);
      for (int s = 0; s < warmup_steps; ++s) train_step(m, data, output);
    }
    for (int s = 0; s < steps; ++s) {
      NVSCOPE_RANGE_F("step_%d", s);
      for (int l = 0; l < layers; ++l) {
        a_used[l] = m.a[l];
        b_used[l] = m.b[l];
      }
      last_loss = train_step(m, data, output);
      nvscope::mark("loss", nvscope::payload{last_loss}, nvscope::colors::red);  // double payload
      nvscope::mark("step_done", nvscope::payload{s});                           // int32 payload
    }
  }
  // Check the last step's forward pass against a double-precision CPU reference, from the
  // batch still on the device and the parameters that step used.
  std::vector<float> x(n);
  CUDA_CHECK(cudaMemcpy(x.data(), m.act[0], n * sizeof(float), cudaMemcpyDeviceToHost));
  double max_err = 0.0;
  for (int i = 0; i < n; ++i) {
    double v = x[i];
    for (int l = 0; l < layers; ++l) v = std::tanh(static_cast<double>(a_used[l]) * v + b_used[l]);
    max_err = std::fmax(max_err, std::fabs(v - static_cast<double>(output[i])));
  }
  std::printf("01_annotate: %d warm-up + %d steps, %d layers, last loss %.6f, max |gpu - cpu| = %.2e\n",
              warmup_steps, steps, layers, last_loss, max_err);
  for (int l = 0; l <= layers; ++l) {
    CUDA_CHECK(cudaFree(m.act[l]));
    CUDA_CHECK(cudaFree(m.grad[l]));
  }
  CUDA_CHECK(cudaStreamDestroy(m.compute));
  CUDA_CHECK(cudaStreamDestroy(m.copy));
  if (max_err > 1e-4) {
    std::printf("01_annotate: GPU result differs from the CPU reference\n");
    return 1;
  }
  return 0;
}

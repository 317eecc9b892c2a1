#pragma once
// A transformer-block-shaped stack of layers built from the reference kernels (bf16), in an
// all-unfused and an all-fused configuration, with an NVTX range per layer and per phase.
// Shared by examples/04_transformer_block and bench/kernels. Plain C++ over api.hpp; the
// ranges are nvscope's (NVSCOPE_RANGE / NVSCOPE_RANGE_F, target nvscope::nvscope).
//
// One layer, x [tokens, dim] the residual stream:
//   h = LayerNorm(x)                    phase "layernorm"
//   s = h W1^T          [tokens, width] phase "gemm_scores"
//   p = softmax(s)                      phase "softmax"
//   x' = GELU(p W2^T + b2) + x          phases "gemm_mlp" (GEMM + bias + GELU), "residual"
// Unfused: 3 + 1 + 4 + (1 + 1 + 1) + 1 = 12 kernels a layer. Fused: LayerNorm, GEMM, softmax,
// and one GEMM whose epilogue adds the bias, applies GELU and adds the residual: 4 kernels.
//
//   nvscope::kernels::transformer_block blk({/*tokens*/ 2048, /*dim*/ 1024, /*width*/ 1024, /*layers*/ 12});
//   blk.init(seed);
//   blk.run(/*fused=*/true, [](const char* kernel, auto&& launch) { return launch(); });

#include <cuda_runtime_api.h>
#include <nvscope/annotate.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "api.hpp"

namespace nvscope {
inline namespace v1 {
namespace kernels {

struct block_shape {
  int tokens = 2048;
  int dim = 1024;
  int width = 1024;  // the softmax's row length
  int layers = 12;
};

/// Phases of a layer, in order; a kernel's phase index is what `run` passes to the callable.
inline const char* const* block_phases() {
  static const char* const names[] = {"layernorm", "gemm_scores", "softmax", "gemm_mlp", "residual"};
  return names;
}
constexpr int block_phase_count = 5;

class transformer_block {
 public:
  explicit transformer_block(block_shape s) : shape_(s) {}
  transformer_block(const transformer_block&) = delete;
  transformer_block& operator=(const transformer_block&) = delete;
  ~transformer_block() {
    for (void* p : allocations_) cudaFree(p);
  }

  const block_shape& shape() const { return shape_; }
  /// The last run's output (the residual stream after the last layer), on the device.
  const bf16* output() const { return out_; }

  /// Allocates and fills the weights and the input with random values (never zeros).
  cudaError_t init(std::uint64_t seed) {
    const block_shape& s = shape_;
    if (s.tokens <= 0 || s.dim <= 0 || s.width <= 0 || s.layers <= 0) return cudaErrorInvalidValue;
    const size_t td = size_t(s.tokens) * s.dim, tw = size_t(s.tokens) * s.width, wd = size_t(s.width) * s.dim;
    cudaError_t e = cudaSuccess;
    auto alloc = [&](auto*& p, size_t n) {
      void* raw = nullptr;
      if (e == cudaSuccess) e = cudaMalloc(&raw, n * sizeof(*p));
      if (e == cudaSuccess) allocations_.push_back(raw);
      p = static_cast<std::remove_reference_t<decltype(p)>>(raw);
    };
    alloc(input_, td);
    alloc(x_[0], td);
    alloc(x_[1], td);
    alloc(h_, td);
    alloc(s_, tw);
    alloc(p_, tw);
    alloc(u_, td);
    alloc(workspace_, 2 * size_t(s.tokens));
    layers_.resize(s.layers);
    for (layer& l : layers_) {
      alloc(l.gamma, s.dim);
      alloc(l.beta, s.dim);
      alloc(l.w1, wd);
      alloc(l.w2, wd);
      alloc(l.b2, s.dim);
    }
    if (e != cudaSuccess) return e;
    std::mt19937_64 gen(seed);
    auto fill = [&](bf16* p, size_t n, double mean, double stddev) {
      std::normal_distribution<double> d(mean, stddev);
      std::vector<bf16> h(n);
      for (bf16& v : h) {
        double x = d(gen);
        if (x == 0) x = 1e-3;
        v = __float2bfloat16(static_cast<float>(x));
      }
      if (e == cudaSuccess) e = cudaMemcpy(p, h.data(), n * sizeof(bf16), cudaMemcpyHostToDevice);
    };
    fill(input_, td, 0, 1);
    for (layer& l : layers_) {
      fill(l.gamma, s.dim, 1, 0.1);
      fill(l.beta, s.dim, 0, 0.1);
      fill(l.w1, wd, 0, 2.0 / std::sqrt(double(s.dim)));   // scores of stddev ~2: a peaked softmax
      fill(l.w2, wd, 0, 4.0);                               // p sums to 1: keep the MLP's output O(1)
      fill(l.b2, s.dim, 0, 0.1);
    }
    return e;
  }

  /// Kernels a layer launches in each configuration.
  static int kernels_per_layer(bool fused) { return fused ? 4 : 12; }

  /// One forward pass over all layers, from the same input each time. Every kernel launch goes
  /// through `launch(kernel_name, phase_index, fn)`, which must call `fn()` (it returns the
  /// launch's cudaError_t) and return its result: time it, count it, or just call it.
  template <class Launch> cudaError_t run(bool fused, Launch&& launch, cudaStream_t stream = nullptr) {
    const block_shape& s = shape_;
    cudaError_t e = cudaMemcpyAsync(x_[0], input_, size_t(s.tokens) * s.dim * sizeof(bf16), cudaMemcpyDeviceToDevice, stream);
    const int T = s.tokens, D = s.dim, S = s.width;
    float* mean = workspace_;
    float* rstd = workspace_ + T;
    for (int i = 0; i < s.layers && e == cudaSuccess; ++i) {
      NVSCOPE_RANGE_F("layer_%d", i);
      const layer& l = layers_[i];
      bf16* x = x_[i % 2];
      bf16* next = x_[(i + 1) % 2];
      auto step = [&](const char* kernel, int phase, auto&& fn) {
        if (e == cudaSuccess) e = launch(kernel, phase, fn);
      };
      {
        NVSCOPE_RANGE("layernorm");
        if (fused) {
          step("layernorm_fused", 0, [&] { return layernorm_fused<bf16>(x, l.gamma, l.beta, h_, T, D, 1e-5f, stream); });
        } else {
          step("layernorm_mean", 0, [&] { return layernorm_mean<bf16>(x, mean, T, D, stream); });
          step("layernorm_rstd", 0, [&] { return layernorm_rstd<bf16>(x, mean, rstd, T, D, 1e-5f, stream); });
          step("layernorm_apply", 0, [&] { return layernorm_apply<bf16>(x, mean, rstd, l.gamma, l.beta, h_, T, D, stream); });
        }
      }
      {
        NVSCOPE_RANGE("gemm_scores");
        step("gemm", 1, [&] { return gemm<bf16>(gemm_kind::wgmma, h_, l.w1, s_, T, S, D, {}, stream); });
      }
      {
        NVSCOPE_RANGE("softmax");
        if (fused) {
          step("softmax_fused", 2, [&] { return softmax_fused<bf16>(s_, p_, T, S, stream); });
        } else {
          step("softmax_row_max", 2, [&] { return softmax_row_max<bf16>(s_, mean, T, S, stream); });
          step("softmax_sub_exp", 2, [&] { return softmax_sub_exp<bf16>(s_, mean, p_, T, S, stream); });
          step("softmax_row_sum", 2, [&] { return softmax_row_sum<bf16>(p_, rstd, T, S, stream); });
          step("softmax_divide", 2, [&] { return softmax_divide<bf16>(p_, rstd, T, S, stream); });
        }
      }
      if (fused) {
        NVSCOPE_RANGE("gemm_mlp");
        epilogue<bf16> ep;
        ep.bias = l.b2;
        ep.gelu = true;
        ep.residual = x;
        step("gemm_bias_gelu_residual", 3, [&] { return gemm<bf16>(gemm_kind::wgmma, p_, l.w2, next, T, D, S, ep, stream); });
      } else {
        {
          NVSCOPE_RANGE("gemm_mlp");
          step("gemm", 3, [&] { return gemm<bf16>(gemm_kind::wgmma, p_, l.w2, u_, T, D, S, {}, stream); });
          step("bias_add", 3, [&] { return bias_add<bf16>(u_, l.b2, u_, T, D, stream); });
          step("gelu", 3, [&] { return gelu<bf16>(u_, u_, T, D, stream); });
        }
        NVSCOPE_RANGE("residual");
        step("residual_add", 4, [&] { return residual_add<bf16>(u_, x, next, T, D, stream); });
      }
    }
    out_ = x_[s.layers % 2];
    return e;
  }

 private:
  struct layer {
    bf16 *gamma = nullptr, *beta = nullptr, *w1 = nullptr, *w2 = nullptr, *b2 = nullptr;
  };
  block_shape shape_;
  std::vector<void*> allocations_;
  std::vector<layer> layers_;
  bf16* input_ = nullptr;
  bf16* x_[2] = {nullptr, nullptr};
  bf16 *h_ = nullptr, *s_ = nullptr, *p_ = nullptr, *u_ = nullptr;
  float* workspace_ = nullptr;
  const bf16* out_ = nullptr;
};

} // namespace kernels
} // namespace v1
} // namespace nvscope

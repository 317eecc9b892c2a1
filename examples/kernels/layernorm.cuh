#pragma once
// Fused LayerNorm: one kernel, a block per row. The row is read once into registers; the mean
// and then the variance around it (two passes over registers, not over memory, so no
// cancellation) come from a two-level reduction: warp shuffles, then one across the warps.

#include "common.cuh"
#include "rowwise.cuh"
#include "softmax.cuh"

namespace nvscope {
inline namespace v1 {
namespace kernels {
namespace detail {

constexpr int layernorm_regs = 32;

template <class T, int W>
__global__ void __launch_bounds__(1024) layernorm_kernel(const T* __restrict__ x, const T* __restrict__ gamma,
                                                         const T* __restrict__ beta, T* __restrict__ y, int cols,
                                                         float eps) {
  constexpr int slots = layernorm_regs / W;
  __shared__ float scratch[32];
  const T* xr = x + static_cast<size_t>(blockIdx.x) * cols;
  T* yr = y + static_cast<size_t>(blockIdx.x) * cols;
  const int nvec = cols / W;
  const int step = blockDim.x;
  const bool in_regs = nvec <= slots * step;
  float v[slots][W];
  float sum = 0.f;
  if (in_regs) {
#pragma unroll
    for (int i = 0; i < slots; ++i)
      if (threadIdx.x + i * step < nvec) pack<T, W>::load(xr + static_cast<size_t>(threadIdx.x + i * step) * W, v[i]);
#pragma unroll
    for (int i = 0; i < slots; ++i)
      if (threadIdx.x + i * step < nvec)
#pragma unroll
        for (int j = 0; j < W; ++j) sum += v[i][j];
  } else {
    for (int i = threadIdx.x; i < nvec; i += step) {
      float f[W];
      pack<T, W>::load(xr + static_cast<size_t>(i) * W, f);
#pragma unroll
      for (int j = 0; j < W; ++j) sum += f[j];
    }
  }
  const float mean = block_sum(sum, scratch) / static_cast<float>(cols);
  float sq = 0.f;
  if (in_regs) {
#pragma unroll
    for (int i = 0; i < slots; ++i)
      if (threadIdx.x + i * step < nvec)
#pragma unroll
        for (int j = 0; j < W; ++j) sq += (v[i][j] - mean) * (v[i][j] - mean);
  } else {
    for (int i = threadIdx.x; i < nvec; i += step) {
      float f[W];
      pack<T, W>::load(xr + static_cast<size_t>(i) * W, f);
#pragma unroll
      for (int j = 0; j < W; ++j) sq += (f[j] - mean) * (f[j] - mean);
    }
  }
  const float rstd = rsqrtf(block_sum(sq, scratch) / static_cast<float>(cols) + eps);
  auto write = [&](int i, const float (&f)[W]) {
    float g[W], b[W], o[W];
    pack<T, W>::load(gamma + static_cast<size_t>(i) * W, g);
    pack<T, W>::load(beta + static_cast<size_t>(i) * W, b);
#pragma unroll
    for (int j = 0; j < W; ++j) o[j] = (f[j] - mean) * rstd * g[j] + b[j];
    pack<T, W>::store(yr + static_cast<size_t>(i) * W, o);
  };
  if (in_regs) {
#pragma unroll
    for (int i = 0; i < slots; ++i)
      if (threadIdx.x + i * step < nvec) write(threadIdx.x + i * step, v[i]);
  } else {
    for (int i = threadIdx.x; i < nvec; i += step) {
      float f[W];
      pack<T, W>::load(xr + static_cast<size_t>(i) * W, f);
      write(i, f);
    }
  }
}

} // namespace detail

template <class T>
cudaError_t layernorm_fused(const T* x, const T* gamma, const T* beta, T* y, int rows, int cols, float eps,
                            cudaStream_t stream) {
  if (!detail::shape_ok(rows, cols, x, y) || (rows > 0 && cols > 0 && (!gamma || !beta)) || !(eps >= 0.f))
    return cudaErrorInvalidValue;
  if (rows == 0 || cols == 0) return cudaSuccess;
  if (detail::vector_ok<T>(cols, x, y, gamma, beta)) {
    constexpr int W = detail::vec_width<T>;
    detail::layernorm_kernel<T, W><<<rows, detail::row_block_threads(cols / W, detail::layernorm_regs / W), 0, stream>>>(
        x, gamma, beta, y, cols, eps);
  } else {
    detail::layernorm_kernel<T, 1><<<rows, detail::row_block_threads(cols, detail::layernorm_regs), 0, stream>>>(
        x, gamma, beta, y, cols, eps);
  }
  return cudaGetLastError();
}

} // namespace kernels
} // namespace v1
} // namespace nvscope

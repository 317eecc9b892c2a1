#pragma once
// The building blocks of the unfused forms: a row reduction (one block a row) and an
// element-wise pass (grid-stride, 16-byte packs). Each launch is one pass over the tensor,
// as a framework's separate operators would be.

#include "common.cuh"

namespace nvscope {
inline namespace v1 {
namespace kernels {
namespace detail {

enum class reduce_op { max, sum, mean, rstd };
enum class map_op { sub_exp, divide, ln_apply, bias, gelu, add };

// out[row] = op over the row of x. For rstd, out = 1 / sqrt(mean((x - mean[row])^2) + eps).
template <class T, int W>
__global__ void __launch_bounds__(256) row_reduce_kernel(const T* __restrict__ x, float* __restrict__ out, int cols,
                                                         reduce_op op, const float* __restrict__ mean, float eps) {
  __shared__ float scratch[32];
  const T* xr = x + static_cast<size_t>(blockIdx.x) * cols;
  const int nvec = cols / W;
  const float center = op == reduce_op::rstd ? mean[blockIdx.x] : 0.f;
  float acc = op == reduce_op::max ? -INFINITY : 0.f;
#pragma unroll 4
  for (int i = threadIdx.x; i < nvec; i += blockDim.x) {
    float f[W];
    pack<T, W>::load(xr + static_cast<size_t>(i) * W, f);
#pragma unroll
    for (int j = 0; j < W; ++j) {
      if (op == reduce_op::max) acc = fmaxf(acc, f[j]);
      else if (op == reduce_op::rstd) acc += (f[j] - center) * (f[j] - center);
      else acc += f[j];
    }
  }
  // fmaxf drops a NaN; keep it, so that a NaN input is seen downstream.
  if (op == reduce_op::max) {
    const bool nan = __syncthreads_or(acc != acc);
    acc = block_max(acc, scratch);
    if (nan) acc = NAN;
  } else {
    acc = block_sum(acc, scratch);
  }
  if (threadIdx.x == 0) {
    if (op == reduce_op::mean) acc /= static_cast<float>(cols);
    if (op == reduce_op::rstd) acc = rsqrtf(acc / static_cast<float>(cols) + eps);
    out[blockIdx.x] = acc;
  }
}

struct map_args {
  const float* a = nullptr;  // per row: max (sub_exp), sum (divide), mean (ln_apply)
  const float* b = nullptr;  // per row: rstd (ln_apply)
  const void* g = nullptr;   // per column: gamma (ln_apply), bias (bias)
  const void* h = nullptr;   // per column: beta (ln_apply); per element: the addend (add)
};

template <class T, int W>
__global__ void __launch_bounds__(256) map_kernel(const T* x, T* y, long long rows, int cols, map_op op, map_args p) {
  const long long nvec = rows * cols / W;
  const T* g = static_cast<const T*>(p.g);
  const T* h = static_cast<const T*>(p.h);
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < nvec;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long e = i * W;
    const long long row = e / cols;
    const int col = static_cast<int>(e - row * cols);
    float f[W], o[W];
    pack<T, W>::load(x + e, f);
    switch (op) {
      case map_op::sub_exp: {
        const float m = p.a[row];
#pragma unroll
        for (int j = 0; j < W; ++j) o[j] = __expf(f[j] - m);
        break;
      }
      case map_op::divide: {
        const float s = p.a[row];
#pragma unroll
        for (int j = 0; j < W; ++j) o[j] = f[j] / s;
        break;
      }
      case map_op::ln_apply: {
        const float m = p.a[row], r = p.b[row];
        float gg[W], bb[W];
        pack<T, W>::load(g + col, gg);
        pack<T, W>::load(h + col, bb);
#pragma unroll
        for (int j = 0; j < W; ++j) o[j] = (f[j] - m) * r * gg[j] + bb[j];
        break;
      }
      case map_op::bias: {
        float gg[W];
        pack<T, W>::load(g + col, gg);
#pragma unroll
        for (int j = 0; j < W; ++j) o[j] = f[j] + gg[j];
        break;
      }
      case map_op::gelu: {
#pragma unroll
        for (int j = 0; j < W; ++j) o[j] = gelu(f[j]);
        break;
      }
      default: {  // add
        float hh[W];
        pack<T, W>::load(h + e, hh);
#pragma unroll
        for (int j = 0; j < W; ++j) o[j] = f[j] + hh[j];
        break;
      }
    }
    pack<T, W>::store(y + e, o);
  }
}

inline bool shape_ok(int rows, int cols, const void* a, const void* b) {
  return rows >= 0 && cols >= 0 && (rows == 0 || cols == 0 || (a != nullptr && b != nullptr));
}

inline int sm_count() {
  int dev = 0, sms = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess)
    return 132;
  return sms;
}

template <class T>
cudaError_t launch_reduce(const T* x, float* out, int rows, int cols, reduce_op op, const float* mean, float eps,
                          cudaStream_t stream) {
  if (!shape_ok(rows, cols, x, out) || (op == reduce_op::rstd && rows > 0 && mean == nullptr)) return cudaErrorInvalidValue;
  if (rows == 0) return cudaSuccess;
  if (cols == 0) return cudaErrorInvalidValue;  // a reduction over nothing has no value
  if (vector_ok<T>(cols, x))
    row_reduce_kernel<T, vec_width<T>><<<rows, 256, 0, stream>>>(x, out, cols, op, mean, eps);
  else
    row_reduce_kernel<T, 1><<<rows, 256, 0, stream>>>(x, out, cols, op, mean, eps);
  return cudaGetLastError();
}

template <class T>
cudaError_t launch_map(const T* x, T* y, int rows, int cols, map_op op, map_args p, cudaStream_t stream) {
  if (!shape_ok(rows, cols, x, y)) return cudaErrorInvalidValue;
  if (rows == 0 || cols == 0) return cudaSuccess;
  const long long n = static_cast<long long>(rows) * cols;
  const bool per_elem = op == map_op::add;
  const bool vec = vector_ok<T>(cols, x, y, p.g, per_elem ? p.h : nullptr) && (per_elem || vector_ok<T>(cols, p.h));
  const int w = vec ? vec_width<T> : 1;
  const long long blocks_needed = (n / w + 255) / 256;
  const int blocks = static_cast<int>(blocks_needed < sm_count() * 16LL ? blocks_needed : sm_count() * 16LL);
  if (vec)
    map_kernel<T, vec_width<T>><<<blocks, 256, 0, stream>>>(x, y, rows, cols, op, p);
  else
    map_kernel<T, 1><<<blocks, 256, 0, stream>>>(x, y, rows, cols, op, p);
  return cudaGetLastError();
}

} // namespace detail

template <class T> cudaError_t softmax_row_max(const T* x, float* row_max, int rows, int cols, cudaStream_t stream) {
  return detail::launch_reduce(x, row_max, rows, cols, detail::reduce_op::max, nullptr, 0.f, stream);
}
template <class T> cudaError_t softmax_sub_exp(const T* x, const float* row_max, T* y, int rows, int cols, cudaStream_t stream) {
  if (rows > 0 && cols > 0 && row_max == nullptr) return cudaErrorInvalidValue;
  detail::map_args p;
  p.a = row_max;
  return detail::launch_map(x, y, rows, cols, detail::map_op::sub_exp, p, stream);
}
template <class T> cudaError_t softmax_row_sum(const T* y, float* row_sum, int rows, int cols, cudaStream_t stream) {
  return detail::launch_reduce(y, row_sum, rows, cols, detail::reduce_op::sum, nullptr, 0.f, stream);
}
template <class T> cudaError_t softmax_divide(T* y, const float* row_sum, int rows, int cols, cudaStream_t stream) {
  if (rows > 0 && cols > 0 && row_sum == nullptr) return cudaErrorInvalidValue;
  detail::map_args p;
  p.a = row_sum;
  return detail::launch_map<T>(y, y, rows, cols, detail::map_op::divide, p, stream);
}
template <class T> cudaError_t softmax_unfused(const T* x, T* y, float* workspace, int rows, int cols, cudaStream_t stream) {
  if (rows > 0 && cols > 0 && workspace == nullptr) return cudaErrorInvalidValue;
  float* row_max = workspace;
  float* row_sum = workspace + (rows > 0 ? rows : 0);
  cudaError_t e = softmax_row_max(x, row_max, rows, cols, stream);
  if (e == cudaSuccess) e = softmax_sub_exp(x, row_max, y, rows, cols, stream);
  if (e == cudaSuccess) e = softmax_row_sum<T>(y, row_sum, rows, cols, stream);
  if (e == cudaSuccess) e = softmax_divide(y, row_sum, rows, cols, stream);
  return e;
}

template <class T> cudaError_t layernorm_mean(const T* x, float* mean, int rows, int cols, cudaStream_t stream) {
  return detail::launch_reduce(x, mean, rows, cols, detail::reduce_op::mean, nullptr, 0.f, stream);
}
template <class T> cudaError_t layernorm_rstd(const T* x, const float* mean, float* rstd, int rows, int cols, float eps, cudaStream_t stream) {
  if (!(eps >= 0.f)) return cudaErrorInvalidValue;
  return detail::launch_reduce(x, rstd, rows, cols, detail::reduce_op::rstd, mean, eps, stream);
}
template <class T>
cudaError_t layernorm_apply(const T* x, const float* mean, const float* rstd, const T* gamma, const T* beta, T* y, int rows,
                            int cols, cudaStream_t stream) {
  if (rows > 0 && cols > 0 && (!mean || !rstd || !gamma || !beta)) return cudaErrorInvalidValue;
  detail::map_args p;
  p.a = mean;
  p.b = rstd;
  p.g = gamma;
  p.h = beta;
  return detail::launch_map(x, y, rows, cols, detail::map_op::ln_apply, p, stream);
}
template <class T>
cudaError_t layernorm_unfused(const T* x, const T* gamma, const T* beta, T* y, float* workspace, int rows, int cols, float eps,
                              cudaStream_t stream) {
  if ((rows > 0 && cols > 0 && workspace == nullptr) || !(eps >= 0.f)) return cudaErrorInvalidValue;
  float* mean = workspace;
  float* rstd = workspace + (rows > 0 ? rows : 0);
  cudaError_t e = layernorm_mean(x, mean, rows, cols, stream);
  if (e == cudaSuccess) e = layernorm_rstd(x, mean, rstd, rows, cols, eps, stream);
  if (e == cudaSuccess) e = layernorm_apply(x, mean, rstd, gamma, beta, y, rows, cols, stream);
  return e;
}

template <class T> cudaError_t bias_add(const T* x, const T* bias, T* y, int rows, int cols, cudaStream_t stream) {
  if (rows > 0 && cols > 0 && bias == nullptr) return cudaErrorInvalidValue;
  detail::map_args p;
  p.g = bias;
  return detail::launch_map(x, y, rows, cols, detail::map_op::bias, p, stream);
}
template <class T> cudaError_t gelu(const T* x, T* y, int rows, int cols, cudaStream_t stream) {
  return detail::launch_map(x, y, rows, cols, detail::map_op::gelu, detail::map_args{}, stream);
}
template <class T> cudaError_t residual_add(const T* x, const T* residual, T* y, int rows, int cols, cudaStream_t stream) {
  if (rows > 0 && cols > 0 && residual == nullptr) return cudaErrorInvalidValue;
  detail::map_args p;
  p.h = residual;
  return detail::launch_map(x, y, rows, cols, detail::map_op::add, p, stream);
}

} // namespace kernels
} // namespace v1
} // namespace nvscope

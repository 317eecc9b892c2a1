#pragma once
// Shared device helpers of the reference kernels: 16-byte vector packs, conversions, warp and
// block reductions, the one-line error check. Used by softmax.cuh, layernorm.cuh, gemm.cuh.

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace nvscope {
inline namespace v1 {
namespace kernels {
namespace detail {

__device__ __forceinline__ float to_float(float x) { return x; }
__device__ __forceinline__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
template <class T> __device__ __forceinline__ T from_float(float x);
template <> __device__ __forceinline__ float from_float<float>(float x) { return x; }
template <> __device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}

/// W elements of T loaded or stored at once: one 16-byte access when W * sizeof(T) == 16,
/// W scalar accesses when W == 1 (the path for misaligned pointers or odd row lengths).
template <class T, int W> struct pack {
  static_assert(W == 1 || W * sizeof(T) == 16, "a pack is one element or 16 bytes");
  __device__ __forceinline__ static void load(const T* p, float (&f)[W]) {
    if constexpr (W == 1) {
      f[0] = to_float(p[0]);
    } else {
      uint4 v = *reinterpret_cast<const uint4*>(p);
      const T* e = reinterpret_cast<const T*>(&v);
#pragma unroll
      for (int i = 0; i < W; ++i) f[i] = to_float(e[i]);
    }
  }
  __device__ __forceinline__ static void store(T* p, const float (&f)[W]) {
    if constexpr (W == 1) {
      p[0] = from_float<T>(f[0]);
    } else {
      uint4 v;
      T* e = reinterpret_cast<T*>(&v);
#pragma unroll
      for (int i = 0; i < W; ++i) e[i] = from_float<T>(f[i]);
      *reinterpret_cast<uint4*>(p) = v;
    }
  }
};

template <class T> constexpr int vec_width = 16 / static_cast<int>(sizeof(T));

/// True when rows of `cols` elements starting at each pointer can be read 16 bytes at a time.
template <class T>
inline bool vector_ok(int cols, const void* a, const void* b = nullptr, const void* c = nullptr,
                      const void* d = nullptr) {
  auto aligned = [](const void* p) { return p == nullptr || reinterpret_cast<std::uintptr_t>(p) % 16 == 0; };
  return cols % vec_width<T> == 0 && aligned(a) && aligned(b) && aligned(c) && aligned(d);
}

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

/// Sum over the block (blockDim.x a multiple of 32, at most 1024): a warp reduction, then one
/// over the warps' partial sums. Every thread gets the result. `scratch` holds 32 floats.
__device__ __forceinline__ float block_sum(float v, float* scratch) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  v = warp_sum(v);
  if (warps == 1) return v;
  __syncthreads();  // scratch may still be read by a previous reduction
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  v = lane < warps ? scratch[lane] : 0.f;
  return warp_sum(v);
}
__device__ __forceinline__ float block_max(float v, float* scratch) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  v = warp_max(v);
  if (warps == 1) return v;
  __syncthreads();
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  v = lane < warps ? scratch[lane] : -INFINITY;
  return warp_max(v);
}

/// GELU, the exact (erf) form that PyTorch's nn.GELU() computes by default.
__device__ __forceinline__ float gelu(float x) { return 0.5f * x * (1.f + erff(x * 0.70710678118654752f)); }

inline int round_up(int x, int m) { return (x + m - 1) / m * m; }

} // namespace detail

/// Where a launcher refuses its arguments it returns this error; the caller prints
/// `cudaGetErrorString`, which reads "invalid argument".
inline cudaError_t bad_argument() { return cudaErrorInvalidValue; }

} // namespace kernels
} // namespace v1
} // namespace nvscope

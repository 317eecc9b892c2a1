#pragma once
// Fused softmax: one kernel, one read and one write of the tensor. Each thread reduces its
// elements to a (max, sum of exp) pair, and the pairs combine online (rescaling the sums), so
// one combined reduction replaces the two (max, then sum) of the textbook form and each
// element costs one exp (two for bf16, see row_regs). Rows up to 1024 columns get a warp each;
// longer rows a block each, sized so that a thread holds at most 32 values (64 for bf16, as
// raw packs in the registers of 32 floats).

#include "common.cuh"
#include "rowwise.cuh"

namespace nvscope {
inline namespace v1 {
namespace kernels {
namespace detail {

// Values a thread keeps in registers: 32 floats.
constexpr int softmax_regs = 32;

// Online softmax. A pair (m, s) stands for "s = sum exp(x - m) over the values seen"; pairs
// combine as (max, s1 exp(m1 - max) + s2 exp(m2 - max)). A pair that has seen only -inf is
// (-inf, 0) (or (-inf, NaN) after a NaN); NaN and +inf make s NaN, so the row comes out NaN,
// as the formula does, and a row of only -inf gives 0/0 = NaN.
__device__ __forceinline__ float safe_max(float m) { return m == -INFINITY ? 0.f : m; }

__device__ __forceinline__ void online_merge(float& m, float& s, float m2, float s2) {
  const float mn = fmaxf(m, m2);
  const float t1 = m == -INFINITY ? s : s * __expf(m - mn);
  const float t2 = m2 == -INFINITY ? s2 : s2 * __expf(m2 - mn);
  s = t1 + t2;
  m = mn;
}

// Folds W values read from memory into (m, s): the path for rows too long for registers.
template <int W> __device__ __forceinline__ void online_add(float& m, float& s, const float (&f)[W]) {
  float vm = f[0];
#pragma unroll
  for (int j = 1; j < W; ++j) vm = fmaxf(vm, f[j]);
  float acc = 0.f;
  const float ref = safe_max(vm);
#pragma unroll
  for (int j = 0; j < W; ++j) acc += __expf(f[j] - ref);
  online_merge(m, s, vm, acc);
}

__device__ __forceinline__ void warp_online(float& m, float& s) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    const float m2 = __shfl_xor_sync(0xffffffffu, m, o);
    const float s2 = __shfl_xor_sync(0xffffffffu, s, o);
    online_merge(m, s, m2, s2);
  }
}

// A thread's share of a row held in registers, `slots` packs of W values, pack i at index
// first + i * stride. The thread takes its own max m_t, replaces each value by exp(x - m_t)
// (one exp an element) and returns (m_t, sum); after the row's pair is known, each output is
// that value times exp(m_t - m) / s (one exp a thread).
template <int SLOTS, int W>
__device__ __forceinline__ void thread_exp(float (&v)[SLOTS][W], int first, int stride, int nvec, float& m, float& s) {
  float mt = -INFINITY;
#pragma unroll
  for (int i = 0; i < SLOTS; ++i)
    if (first + i * stride < nvec)
#pragma unroll
      for (int j = 0; j < W; ++j) mt = fmaxf(mt, v[i][j]);
  const float ref = safe_max(mt);
  float sum = 0.f;
#pragma unroll
  for (int i = 0; i < SLOTS; ++i)
    if (first + i * stride < nvec)
#pragma unroll
      for (int j = 0; j < W; ++j) {
        v[i][j] = __expf(v[i][j] - ref);
        sum += v[i][j];
      }
  m = mt;
  s = sum;
}

// The factor that turns a thread's exp(x - m_t) into the output.
__device__ __forceinline__ float thread_scale(float mt, float m, float s) {
  return (mt == -INFINITY ? 1.f : __expf(mt - m)) / s;
}

template <class T, int W> __device__ __forceinline__ void scaled_store(T* out, const float (&e)[W], float scale) {
  float o[W];
#pragma unroll
  for (int j = 0; j < W; ++j) o[j] = e[j] * scale;
  pack<T, W>::store(out, o);
}

// A thread's share of a row held in registers: SLOTS packs of W values. fp32 (and the scalar
// path) keeps the values as floats and overwrites them with exp(x - m_t), one exp an element.
// bf16 keeps the raw 16-byte packs (8 values in 4 registers), so that a thread holds twice as
// many values, 8 packs = 128 bytes in flight as for fp32, in the same registers; it converts
// them when used and takes the exp twice (for the sum, then for the output), the same
// arithmetic as the float form, so the results are the same bits.
template <class T, int W> constexpr bool softmax_raw = sizeof(T) == 2 && W * static_cast<int>(sizeof(T)) == 16;
template <class T, int W> constexpr int softmax_slots = softmax_raw<T, W> ? 2 * softmax_regs / W : softmax_regs / W;

__device__ __forceinline__ void unpack_bf16x8(const uint4& r, float (&f)[8]) {
  const unsigned w[4] = {r.x, r.y, r.z, r.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    f[2 * i] = __uint_as_float(w[i] << 16);
    f[2 * i + 1] = __uint_as_float(w[i] & 0xffff0000u);
  }
}

template <class T, int W, int SLOTS, bool RAW = softmax_raw<T, W>> struct row_regs {
  float v[SLOTS][W];
  __device__ __forceinline__ void load(int i, const T* p) { pack<T, W>::load(p, v[i]); }
  __device__ __forceinline__ void stats(int first, int stride, int nvec, float& m, float& s) {
    thread_exp(v, first, stride, nvec, m, s);
  }
  __device__ __forceinline__ void store(int i, T* p, float scale) const { scaled_store(p, v[i], scale); }
};
template <class T, int W, int SLOTS> struct row_regs<T, W, SLOTS, true> {
  uint4 r[SLOTS];
  float ref = 0.f;
  __device__ __forceinline__ void load(int i, const T* p) { r[i] = *reinterpret_cast<const uint4*>(p); }
  __device__ __forceinline__ void stats(int first, int stride, int nvec, float& m, float& s) {
    float mt = -INFINITY;
#pragma unroll
    for (int i = 0; i < SLOTS; ++i)
      if (first + i * stride < nvec) {
        float f[8];
        unpack_bf16x8(r[i], f);
#pragma unroll
        for (int j = 0; j < 8; ++j) mt = fmaxf(mt, f[j]);
      }
    ref = safe_max(mt);
    float sum = 0.f;
#pragma unroll
    for (int i = 0; i < SLOTS; ++i)
      if (first + i * stride < nvec) {
        float f[8];
        unpack_bf16x8(r[i], f);
#pragma unroll
        for (int j = 0; j < 8; ++j) sum += __expf(f[j] - ref);
      }
    m = mt;
    s = sum;
  }
  __device__ __forceinline__ void store(int i, T* p, float scale) const {
    float f[8];
    unpack_bf16x8(r[i], f);
#pragma unroll
    for (int j = 0; j < 8; ++j) f[j] = __expf(f[j] - ref);
    scaled_store<T, 8>(p, f, scale);
  }
};

// A warp per row, cols <= 32 * softmax_regs; the row lives in registers.
template <class T, int W>
__global__ void __launch_bounds__(128) softmax_warp_kernel(const T* __restrict__ x, T* __restrict__ y, int rows, int cols) {
  constexpr int slots = softmax_slots<T, W>;
  const int lane = threadIdx.x & 31;
  const long long row = static_cast<long long>(blockIdx.x) * (blockDim.x >> 5) + (threadIdx.x >> 5);
  if (row >= rows) return;  // the whole warp leaves together
  const T* xr = x + row * cols;
  T* yr = y + row * cols;
  const int nvec = cols / W;
  row_regs<T, W, slots> v;
#pragma unroll
  for (int i = 0; i < slots; ++i)
    if (lane + i * 32 < nvec) v.load(i, xr + (lane + i * 32) * W);
  float mt, st;
  v.stats(lane, 32, nvec, mt, st);
  float m = mt, s = st;
  warp_online(m, s);
  const float scale = thread_scale(mt, m, s);
#pragma unroll
  for (int i = 0; i < slots; ++i)
    if (lane + i * 32 < nvec) v.store(i, yr + (lane + i * 32) * W, scale);
}

// A block per row. The row stays in registers when it fits (blockDim.x * softmax_regs values);
// a longer row is folded in online as it streams past, and read a second time to write the
// output (from L2 where it still is).
template <class T, int W>
__global__ void __launch_bounds__(1024) softmax_block_kernel(const T* __restrict__ x, T* __restrict__ y, int cols) {
  constexpr int slots = softmax_slots<T, W>;
  __shared__ float scratch_m[32], scratch_s[32];
  const T* xr = x + static_cast<size_t>(blockIdx.x) * cols;
  T* yr = y + static_cast<size_t>(blockIdx.x) * cols;
  const int nvec = cols / W;
  const int step = blockDim.x;
  const bool in_regs = nvec <= slots * step;
  row_regs<T, W, slots> v;
  float mt = -INFINITY, st = 0.f;
  if (in_regs) {
#pragma unroll
    for (int i = 0; i < slots; ++i)
      if (threadIdx.x + i * step < nvec) v.load(i, xr + static_cast<size_t>(threadIdx.x + i * step) * W);
    v.stats(threadIdx.x, step, nvec, mt, st);
  } else {
    for (int i = threadIdx.x; i < nvec; i += step) {
      float f[W];
      pack<T, W>::load(xr + static_cast<size_t>(i) * W, f);
      online_add(mt, st, f);
    }
  }
  float m = mt, s = st;
  warp_online(m, s);
  const int warps = blockDim.x >> 5, lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (warps > 1) {
    if (lane == 0) {
      scratch_m[warp] = m;
      scratch_s[warp] = s;
    }
    __syncthreads();
    m = lane < warps ? scratch_m[lane] : -INFINITY;
    s = lane < warps ? scratch_s[lane] : 0.f;
    warp_online(m, s);
  }
  if (in_regs) {
    const float scale = thread_scale(mt, m, s);
#pragma unroll
    for (int i = 0; i < slots; ++i)
      if (threadIdx.x + i * step < nvec) v.store(i, yr + static_cast<size_t>(threadIdx.x + i * step) * W, scale);
  } else {
    const float inv = 1.f / s;
    for (int i = threadIdx.x; i < nvec; i += step) {
      float f[W], o[W];
      pack<T, W>::load(xr + static_cast<size_t>(i) * W, f);
#pragma unroll
      for (int j = 0; j < W; ++j) o[j] = __expf(f[j] - m) * inv;
      pack<T, W>::store(yr + static_cast<size_t>(i) * W, o);
    }
  }
}

// Threads for a block-per-row kernel: enough that each holds at most `per_thread` packs.
inline int row_block_threads(int nvec, int per_thread) {
  const int want = round_up((nvec + per_thread - 1) / per_thread, 32);
  return want < 32 ? 32 : want > 1024 ? 1024 : want;
}

template <class T, int W> cudaError_t launch_softmax(const T* x, T* y, int rows, int cols, cudaStream_t stream) {
  constexpr int slots = softmax_slots<T, W>;
  if (cols <= 32 * softmax_regs) {
    const int blocks = (rows + 3) / 4;
    softmax_warp_kernel<T, W><<<blocks, 128, 0, stream>>>(x, y, rows, cols);
  } else {
    softmax_block_kernel<T, W><<<rows, row_block_threads(cols / W, slots), 0, stream>>>(x, y, cols);
  }
  return cudaGetLastError();
}

} // namespace detail

template <class T> cudaError_t softmax_fused(const T* x, T* y, int rows, int cols, cudaStream_t stream) {
  if (!detail::shape_ok(rows, cols, x, y)) return cudaErrorInvalidValue;
  if (rows == 0 || cols == 0) return cudaSuccess;
  if (detail::vector_ok<T>(cols, x, y)) return detail::launch_softmax<T, detail::vec_width<T>>(x, y, rows, cols, stream);
  return detail::launch_softmax<T, 1>(x, y, rows, cols, stream);
}

} // namespace kernels
} // namespace v1
} // namespace nvscope

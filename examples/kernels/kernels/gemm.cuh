#pragma once
// GEMM C [M,N] = epilogue(A [M,K] * B [N,K]^T), fp32 accumulation, three kernels of rising
// craft: naive (a thread an output), tiled (shared-memory tiles, 8x8 outputs a thread, fp32
// FMA) and tensor_core (bf16: mma.sync m16n8k16 fed by ldmatrix from swizzled shared memory,
// filled by a multistage cp.async pipeline). Each applies bias, GELU and a residual in its
// epilogue, so the fused form writes C once; the unfused form runs the epilogue-free GEMM and
// then the element-wise kernels of rowwise.cuh.

#include <type_traits>

#include "api.hpp"
#include "common.cuh"
#include "rowwise.cuh"

namespace nvscope {
inline namespace v1 {
namespace kernels {
namespace detail {

template <class T>
__device__ __forceinline__ float apply_epilogue(float v, int m, int n, int ldc, const epilogue<T>& ep) {
  if (ep.bias) v += to_float(ep.bias[n]);
  if (ep.gelu) v = gelu(v);
  if (ep.residual) v += to_float(ep.residual[static_cast<size_t>(m) * ldc + n]);
  return v;
}

template <class T>
__global__ void gemm_naive_kernel(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ c, int M, int N, int K,
                                  epilogue<T> ep) {
  const int n = blockIdx.x * blockDim.x + threadIdx.x;
  const int m = blockIdx.y * blockDim.y + threadIdx.y;
  if (m >= M || n >= N) return;
  const T* ar = a + static_cast<size_t>(m) * K;
  const T* br = b + static_cast<size_t>(n) * K;
  float acc = 0.f;
  for (int k = 0; k < K; ++k) acc = fmaf(to_float(ar[k]), to_float(br[k]), acc);
  c[static_cast<size_t>(m) * N + n] = from_float<T>(apply_epilogue(acc, m, n, N, ep));
}

// Tiled SIMT kernel: 128x128 outputs a block of 256 threads, K in steps of 16. Tiles are held
// transposed in shared memory ([k][m]) so that a thread reads its 8 A and 8 B values as float4s;
// a thread's 8 rows are two groups of 4, 64 apart, so that 8 neighbouring threads read 128
// contiguous bytes (no bank conflict). The next tile is fetched into registers while this one
// is multiplied (double buffering).
constexpr int tiled_bm = 128, tiled_bn = 128, tiled_bk = 16, tiled_pad = 4;

template <class T>
__global__ void __launch_bounds__(256, 2) gemm_tiled_kernel(const T* __restrict__ a, const T* __restrict__ b,
                                                            T* __restrict__ c, int M, int N, int K, epilogue<T> ep) {
  constexpr int BM = tiled_bm, BN = tiled_bn, BK = tiled_bk, LD = tiled_bm + tiled_pad;
  __shared__ __align__(16) float as[2][BK][LD];
  __shared__ __align__(16) float bs[2][BK][LD];
  const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  // Loading: element e = tid + 256 * i of a 128x16 tile is row e / 16, k e % 16: 16 threads
  // read 16 consecutive k of one row.
  const int lk = tid % BK, lr = tid / BK;
  float ra[8], rb[8];
  auto fetch = [&](int k0) {
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      const int r = lr + 16 * i, gk = k0 + lk;
      ra[i] = (m0 + r < M && gk < K) ? to_float(a[static_cast<size_t>(m0 + r) * K + gk]) : 0.f;
      rb[i] = (n0 + r < N && gk < K) ? to_float(b[static_cast<size_t>(n0 + r) * K + gk]) : 0.f;
    }
  };
  auto stash = [&](int buf) {
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      as[buf][lk][lr + 16 * i] = ra[i];
      bs[buf][lk][lr + 16 * i] = rb[i];
    }
  };
  float acc[8][8] = {};
  const int kt_count = (K + BK - 1) / BK;
  fetch(0);
  stash(0);
  __syncthreads();
  for (int kt = 0; kt < kt_count; ++kt) {
    const int cur = kt & 1;
    if (kt + 1 < kt_count) fetch((kt + 1) * BK);
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      float av[8], bv[8];
      *reinterpret_cast<float4*>(&av[0]) = *reinterpret_cast<const float4*>(&as[cur][k][ty * 4]);
      *reinterpret_cast<float4*>(&av[4]) = *reinterpret_cast<const float4*>(&as[cur][k][ty * 4 + 64]);
      *reinterpret_cast<float4*>(&bv[0]) = *reinterpret_cast<const float4*>(&bs[cur][k][tx * 4]);
      *reinterpret_cast<float4*>(&bv[4]) = *reinterpret_cast<const float4*>(&bs[cur][k][tx * 4 + 64]);
#pragma unroll
      for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
    }
    if (kt + 1 < kt_count) stash(cur ^ 1);
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int m = m0 + ty * 4 + (i & 3) + (i >> 2) * 64;
    if (m >= M) continue;
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const int n = n0 + tx * 4 + (j & 3) + (j >> 2) * 64;
      if (n < N) c[static_cast<size_t>(m) * N + n] = from_float<T>(apply_epilogue(acc[i][j], m, n, N, ep));
    }
  }
}

// Tensor-core kernel (bf16). A block of WARPS_M x WARPS_N warps computes BM x BN outputs
// (64 x 64 a warp: 4 x 8 mma.sync m16n8k16 tiles, 128 fp32 accumulators a thread), K in steps
// of BK through a ring of STAGES shared-memory stages filled by cp.async. A shared tile row is
// BK bf16 = BK / 8 chunks of 16 bytes, stored XOR-swizzled so that the 8 row addresses of each
// ldmatrix fall in 8 different 16-byte bank groups. The fragments of the next 16-wide k step
// are loaded while the MMAs of this one issue.
template <int BM, int BN, int BK, int STAGES, int WARPS_M, int WARPS_N, bool PIPE_FRAGS = false, int MIN_BLOCKS = 1>
struct tc_config {
  static_assert(BM == WARPS_M * 64 && BN == WARPS_N * 64, "a warp computes 64 x 64");
  static_assert(BK == 32 || BK == 64, "rows of 64 or 128 bytes");
  static constexpr int bm = BM, bn = BN, bk = BK, stages = STAGES, warps_n = WARPS_N, min_blocks = MIN_BLOCKS;
  static constexpr bool pipe_frags = PIPE_FRAGS;  // load the next k step's fragments during this one's MMAs
  static constexpr int threads = WARPS_M * WARPS_N * 32;
  static constexpr int smem_bytes = STAGES * (BM + BN) * BK * 2;
};
// The configuration in use: the fastest of those measured (bench/results/kernels.md).
using tc_default = tc_config<128, 128, 64, 3, 2, 2, false, 2>;

__device__ __forceinline__ unsigned smem_addr(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
template <int BK> __device__ __forceinline__ int tc_swizzle(int row, int chunk) {
  const int x = BK == 64 ? (row & 7) : ((row >> 1) & 3);
  return row * BK + ((chunk ^ x) << 3);
}

__device__ __forceinline__ void cp_async16(unsigned dst, const void* src, int bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(bytes));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N> __device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], unsigned addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
__device__ __forceinline__ void mma_bf16(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

template <class Cfg>
__global__ void __launch_bounds__(Cfg::threads, Cfg::min_blocks) gemm_tc_kernel(const bf16* __restrict__ a, const bf16* __restrict__ b,
                                                               bf16* __restrict__ c, int M, int N, int K, epilogue<bf16> ep) {
  constexpr int BM = Cfg::bm, BN = Cfg::bn, BK = Cfg::bk, STAGES = Cfg::stages, THREADS = Cfg::threads;
  constexpr int CPR = BK / 8, KSTEPS = BK / 16;
  extern __shared__ __align__(128) unsigned char tc_smem[];
  bf16* sa = reinterpret_cast<bf16*>(tc_smem);  // [STAGES][BM][BK]
  bf16* sb = sa + STAGES * BM * BK;             // [STAGES][BN][BK]
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int wm = warp / Cfg::warps_n, wn = warp % Cfg::warps_n;

  // Grouped block order: 8 row-tiles in a row share their B tiles while those are in L2.
  const int grid_m = (M + BM - 1) / BM, grid_n = (N + BN - 1) / BN;
  const int group = 8, per_group = group * grid_n, pid = blockIdx.x;
  const int first_m = (pid / per_group) * group;
  const int rows_in_group = min(grid_m - first_m, group);
  const int tile_m = first_m + (pid % per_group) % rows_in_group;
  const int tile_n = (pid % per_group) / rows_in_group;
  const int m0 = tile_m * BM, n0 = tile_n * BN;

  const int kt_count = (K + BK - 1) / BK;
  static_assert((BM * CPR) % THREADS == 0 && (BN * CPR) % THREADS == 0, "whole chunks a thread");
  auto load_stage = [&](int stage, int kt) {
    const int k0 = kt * BK;
#pragma unroll
    for (int i = 0; i < (BN * CPR) / THREADS; ++i) {  // BN >= BM: B's chunks, and A's among them
      const int id = tid + i * THREADS, row = id / CPR, chunk = id % CPR, k = k0 + chunk * 8;
      const bool kin = k < K;
      if (i < (BM * CPR) / THREADS) {
        const bool v = kin && m0 + row < M;
        cp_async16(smem_addr(sa + stage * BM * BK + tc_swizzle<BK>(row, chunk)),
                   v ? a + static_cast<size_t>(m0 + row) * K + k : a, v ? 16 : 0);
      }
      const bool v = kin && n0 + row < N;
      cp_async16(smem_addr(sb + stage * BN * BK + tc_swizzle<BK>(row, chunk)), v ? b + static_cast<size_t>(n0 + row) * K + k : b,
                 v ? 16 : 0);
    }
  };

  float acc[4][8][4] = {};
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < kt_count) load_stage(s, s);
    cp_async_commit();
  }
  for (int kt = 0; kt < kt_count; ++kt) {
    cp_async_wait<STAGES - 2>();
    __syncthreads();  // tile kt is in for every thread; the stage refilled below was used at kt - 1
    const int next = kt + STAGES - 1;
    if (next < kt_count) load_stage(next % STAGES, next);
    cp_async_commit();
    const bf16* ta = sa + (kt % STAGES) * BM * BK;
    const bf16* tb = sb + (kt % STAGES) * BN * BK;
    unsigned af[2][4][4], bfr[2][4][4];
    auto load_frags = [&](int buf, int kk) {
#pragma unroll
      for (int mi = 0; mi < 4; ++mi) {
        const int row = wm * 64 + mi * 16 + (lane & 15);
        ldmatrix_x4(af[buf][mi], smem_addr(ta + tc_swizzle<BK>(row, kk * 2 + (lane >> 4))));
      }
#pragma unroll
      for (int nj = 0; nj < 4; ++nj) {
        const int row = wn * 64 + nj * 16 + (lane & 7) + ((lane >> 4) << 3);
        ldmatrix_x4(bfr[buf][nj], smem_addr(tb + tc_swizzle<BK>(row, kk * 2 + ((lane >> 3) & 1))));
      }
    };
    if (Cfg::pipe_frags) load_frags(0, 0);
#pragma unroll
    for (int kk = 0; kk < KSTEPS; ++kk) {
      const int cur = Cfg::pipe_frags ? (kk & 1) : 0;
      if (!Cfg::pipe_frags) load_frags(0, kk);
      else if (kk + 1 < KSTEPS) load_frags((kk + 1) & 1, kk + 1);
#pragma unroll
      for (int mi = 0; mi < 4; ++mi)
#pragma unroll
        for (int ni = 0; ni < 8; ++ni)
          mma_bf16(acc[mi][ni], af[cur][mi], bfr[cur][ni >> 1][(ni & 1) * 2], bfr[cur][ni >> 1][(ni & 1) * 2 + 1]);
    }
  }
  cp_async_wait<0>();

  const bool pairs = (N % 2) == 0;
#pragma unroll
  for (int mi = 0; mi < 4; ++mi) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int m = m0 + wm * 64 + mi * 16 + (lane >> 2) + half * 8;
      if (m >= M) continue;
#pragma unroll
      for (int ni = 0; ni < 8; ++ni) {
        const int n = n0 + wn * 64 + ni * 8 + (lane & 3) * 2;
        const float v0 = acc[mi][ni][half * 2], v1 = acc[mi][ni][half * 2 + 1];
        bf16* out = c + static_cast<size_t>(m) * N + n;
        if (pairs && n + 1 < N) {
          *reinterpret_cast<__nv_bfloat162*>(out) =
              __floats2bfloat162_rn(apply_epilogue(v0, m, n, N, ep), apply_epilogue(v1, m, n + 1, N, ep));
        } else {
          if (n < N) out[0] = __float2bfloat16_rn(apply_epilogue(v0, m, n, N, ep));
          if (n + 1 < N) out[1] = __float2bfloat16_rn(apply_epilogue(v1, m, n + 1, N, ep));
        }
      }
    }
  }
}

// Launches one configuration. The dynamic shared-memory limit is raised once per
// configuration (above the default 48 KiB).
template <class Cfg>
cudaError_t launch_gemm_tc(const bf16* a, const bf16* b, bf16* c, int m, int n, int k, epilogue<bf16> ep, cudaStream_t stream) {
  static const cudaError_t attr =
      cudaFuncSetAttribute(gemm_tc_kernel<Cfg>, cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg::smem_bytes);
  if (attr != cudaSuccess) return attr;
  const long long blocks = static_cast<long long>((m + Cfg::bm - 1) / Cfg::bm) * ((n + Cfg::bn - 1) / Cfg::bn);
  if (blocks > 0x7fffffffLL) return cudaErrorInvalidValue;
  gemm_tc_kernel<Cfg><<<static_cast<unsigned>(blocks), Cfg::threads, Cfg::smem_bytes, stream>>>(a, b, c, m, n, k, ep);
  return cudaGetLastError();
}

inline bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

} // namespace detail

template <class T>
cudaError_t gemm(gemm_kind kind, const T* a, const T* b, T* c, int m, int n, int k, epilogue<T> ep, cudaStream_t stream,
                 gemm_kind* ran) {
  if (m < 0 || n < 0 || k < 0) return cudaErrorInvalidValue;
  if (m == 0 || n == 0) return cudaSuccess;
  if (c == nullptr || (k > 0 && (a == nullptr || b == nullptr))) return cudaErrorInvalidValue;
  if (kind == gemm_kind::tensor_core && !std::is_same<T, bf16>::value) return cudaErrorInvalidValue;  // no fp32 MMA path
  if (kind == gemm_kind::tensor_core && (k % 8 != 0 || !detail::aligned16(a) || !detail::aligned16(b)))
    kind = gemm_kind::tiled;  // cp.async moves 16-byte chunks: rows must start on 16 bytes
  if (kind == gemm_kind::tensor_core && k == 0) kind = gemm_kind::tiled;
  if (ran) *ran = kind;
  if (kind == gemm_kind::naive) {
    const dim3 block(32, 8), grid((n + 31) / 32, (m + 7) / 8);
    if (grid.y > 65535) return cudaErrorInvalidValue;
    detail::gemm_naive_kernel<T><<<grid, block, 0, stream>>>(a, b, c, m, n, k, ep);
  } else if (kind == gemm_kind::tiled) {
    const dim3 grid((n + detail::tiled_bn - 1) / detail::tiled_bn, (m + detail::tiled_bm - 1) / detail::tiled_bm);
    if (grid.y > 65535) return cudaErrorInvalidValue;
    detail::gemm_tiled_kernel<T><<<grid, 256, 0, stream>>>(a, b, c, m, n, k, ep);
  } else if constexpr (std::is_same<T, bf16>::value) {
    return detail::launch_gemm_tc<detail::tc_default>(a, b, c, m, n, k, ep, stream);
  }
  return cudaGetLastError();
}

} // namespace kernels
} // namespace v1
} // namespace nvscope

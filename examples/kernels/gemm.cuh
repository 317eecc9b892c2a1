#pragma once
// GEMM C [M,N] = epilogue(A [M,K] * B [N,K]^T), fp32 accumulation, three kernels of rising
// craft: naive (a thread an output), tiled (shared-memory tiles, 8x8 outputs a thread, fp32
// FMA) and tensor_core (bf16: mma.sync m16n8k16 fed by ldmatrix from swizzled shared memory,
// filled by a multistage cp.async pipeline). Each applies bias, GELU and a residual in its
// epilogue, so the fused form writes C once; the unfused form runs the epilogue-free GEMM and
// then the element-wise kernels of rowwise.cuh.

#include <cuda.h>

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
// The configuration in use: the fastest of those measured (bench/results/kernels.json).
using tc_default = tc_config<128, 128, 32, 4, 2, 2, false, 2>;

// Grouped block order: blocks run 8 row-tiles at a time down a column of tiles, so the 8
// share each B tile while it is still in L2. Returns this block's tile (row, column).
__device__ __forceinline__ int2 grouped_tile(int M, int N, int BM, int BN) {
  const int grid_m = (M + BM - 1) / BM, grid_n = (N + BN - 1) / BN;
  const int group = 8, per_group = group * grid_n, pid = blockIdx.x;
  const int first_m = (pid / per_group) * group;
  const int rows_in_group = min(grid_m - first_m, group);
  return make_int2(first_m + (pid % per_group) % rows_in_group, (pid % per_group) / rows_in_group);
}

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

  const int2 tile = grouped_tile(M, N, BM, BN);
  const int m0 = tile.x * BM, n0 = tile.y * BN;

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

// Hopper tensor-core kernel (bf16, sm_90a only): wgmma.mma_async m64n256k16, both operands read
// by the tensor cores straight from shared memory through matrix descriptors. Warp-specialised:
// a block of three warpgroups (384 threads) computes 128 x 256 outputs. Warpgroup 0 is the
// producer: one thread loads each 128 x 64 A tile and 256 x 64 B tile with the bulk tensor copy
// engine (TMA, cp.async.bulk.tensor) into a 4-stage ring, each stage completing on its own
// "full" mbarrier (transaction bytes). Warpgroups 1 and 2 are the consumers, 64 x 256 each
// (128 fp32 accumulators a thread, registers moved to them with setmaxnreg): they wait on a
// stage's full barrier, issue 4 wgmma, keep one batch in flight, and release the stage read one
// step earlier on its "empty" mbarrier. No block-wide barrier in the main loop: the copies run
// as far ahead as the ring allows. TMA writes the tiles with the 128-byte swizzle (16-byte chunk
// c of row r at c ^ (r % 8)), the layout the descriptor's swizzle mode 1 names, and fills rows
// and columns outside the matrix with zeros (M, N, K tails need no code).
// Built only where the target compiles for sm_90a (NVSCOPE_KERNELS_WGMMA=1 on the host side);
// elsewhere gemm_kind::wgmma runs the mma.sync kernel.
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define NVSCOPE_KERNELS_WGMMA_DEVICE 1
#endif
constexpr int wg_bm = 128, wg_bn = 256, wg_bk = 64, wg_stages = 4, wg_threads = 384;
constexpr int wg_stage_bytes = (wg_bm + wg_bn) * wg_bk * 2;
// + room to align to 1024, + the 2 x stages mbarriers
constexpr int wg_smem_bytes = wg_stages * wg_stage_bytes + 1024 + 2 * wg_stages * 8;

#ifdef NVSCOPE_KERNELS_WGMMA_DEVICE
// Descriptor of a K-major tile with the 128-byte swizzle: start address, leading offset 16 B
// (unused with this swizzle), stride 1024 B between groups of 8 rows, swizzle mode 1.
__device__ __forceinline__ unsigned long long wg_desc(unsigned smem_byte_addr) {
  return static_cast<unsigned long long>((smem_byte_addr & 0x3FFFF) >> 4) | (1ull << 16) | (64ull << 32) | (1ull << 62);
}
__device__ __forceinline__ void wgmma_m64n256k16(float (&d)[128], unsigned long long da, unsigned long long db) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, %128, %129, p, 1, 1, 0, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
      : "l"(da), "l"(db));
}
__device__ __forceinline__ void wg_fence_operands(float (&d)[128]) {
#pragma unroll
  for (int i = 0; i < 128; ++i) asm volatile("" : "+f"(d[i])::"memory");
}
__device__ __forceinline__ void mbar_init(unsigned bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ bool mbar_try_wait(unsigned bar, unsigned parity) {
  unsigned ok;
  asm volatile(
      "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
      : "=r"(ok)
      : "r"(bar), "r"(parity)
      : "memory");
  return ok != 0;
}
__device__ __forceinline__ void mbar_wait(unsigned bar, unsigned parity) {
  while (!mbar_try_wait(bar, parity)) {
  }
}
__device__ __forceinline__ void mbar_arrive(unsigned bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
__device__ __forceinline__ void mbar_expect_tx(unsigned bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
// A 2-D box of the tensor map at (inner coordinate x, outer coordinate y) into shared memory;
// completes `bytes` on the mbarrier.
__device__ __forceinline__ void tma_load_2d(unsigned dst, const CUtensorMap* map, unsigned bar, int x, int y) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];\n" ::"r"(dst),
      "l"(reinterpret_cast<unsigned long long>(map)), "r"(bar), "r"(x), "r"(y)
      : "memory");
}
#endif

__global__ void __launch_bounds__(wg_threads, 1)
    gemm_wgmma_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b, bf16* __restrict__ c,
                      int M, int N, int K, epilogue<bf16> ep) {
#ifdef NVSCOPE_KERNELS_WGMMA_DEVICE
  constexpr int BM = wg_bm, BN = wg_bn, BK = wg_bk, STAGES = wg_stages;
  extern __shared__ __align__(1024) unsigned char wg_smem[];
  const unsigned base = smem_addr(wg_smem);
  const unsigned sa = base + ((1024 - (base & 1023)) & 1023);  // [STAGES][BM][BK] bf16
  const unsigned sb = sa + STAGES * BM * BK * 2;                // [STAGES][BN][BK] bf16
  const unsigned full = sb + STAGES * BN * BK * 2;              // STAGES mbarriers: stage loaded
  const unsigned empty = full + STAGES * 8;                     // STAGES mbarriers: stage read
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, wg = warp >> 2;

  const int2 tile = grouped_tile(M, N, BM, BN);
  const int m0 = tile.x * BM, n0 = tile.y * BN;
  const int kt_count = (K + BK - 1) / BK;

  if (tid == 0) {
#pragma unroll
    for (int s = 0; s < STAGES; ++s) {
      mbar_init(full + s * 8, 1);   // the producer's arrive (with the tile's bytes)
      mbar_init(empty + s * 8, 8);  // one arrive from each consumer warp
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();

  if (wg == 0) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
    if (tid == 0) {
      for (int kt = 0; kt < kt_count; ++kt) {
        const int s = kt % STAGES;
        if (kt >= STAGES) mbar_wait(empty + s * 8, ((kt / STAGES) - 1) & 1);
        mbar_expect_tx(full + s * 8, wg_stage_bytes);  // boxes partly outside count whole (zero-filled)
        tma_load_2d(sa + s * BM * BK * 2, &map_a, full + s * 8, kt * BK, m0);
        tma_load_2d(sb + s * BN * BK * 2, &map_b, full + s * 8, kt * BK, n0);
      }
    }
  } else {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
    const int cw = wg - 1;  // consumer 0 or 1: rows cw * 64 .. cw * 64 + 63 of the tile
    float acc[128];
#pragma unroll
    for (int i = 0; i < 128; ++i) acc[i] = 0.f;
    for (int kt = 0; kt < kt_count; ++kt) {
      const int s = kt % STAGES;
      mbar_wait(full + s * 8, (kt / STAGES) & 1);
      const unsigned ta = sa + s * BM * BK * 2 + cw * 64 * BK * 2;
      const unsigned tb = sb + s * BN * BK * 2;
      asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
      for (int kk = 0; kk < BK / 16; ++kk) wgmma_m64n256k16(acc, wg_desc(ta + kk * 32), wg_desc(tb + kk * 32));
      asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
      asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
      wg_fence_operands(acc);
      // The batch of step kt - 1 is finished: its stage may be refilled.
      if (kt > 0 && lane == 0) mbar_arrive(empty + ((kt - 1) % STAGES) * 8);
    }
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
    wg_fence_operands(acc);

    const bool pairs = (N % 2) == 0;
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int m = m0 + cw * 64 + (warp & 3) * 16 + (lane >> 2) + half * 8;
      if (m >= M) continue;
#pragma unroll
      for (int ni = 0; ni < BN / 8; ++ni) {
        const int n = n0 + ni * 8 + (lane & 3) * 2;
        const float v0 = acc[ni * 4 + half * 2], v1 = acc[ni * 4 + half * 2 + 1];
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
#else
  (void)map_a, (void)map_b, (void)c, (void)M, (void)N, (void)K, (void)ep;
  __trap();  // never launched: the host runs the mma.sync kernel where this one was not built
#endif
}

// cuTensorMapEncodeTiled, a driver function, reached through the runtime (no -lcuda).
using tensor_map_encode_fn = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                          const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                                          CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
inline tensor_map_encode_fn tensor_map_encoder() {
  static const tensor_map_encode_fn fn = [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult q{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess)
      return static_cast<tensor_map_encode_fn>(nullptr);
    return reinterpret_cast<tensor_map_encode_fn>(p);
  }();
  return fn;
}
// Row-major [rows, k] bf16 matrix read in boxes of box_rows x 64 with the 128-byte swizzle;
// reads outside the matrix give zeros.
inline bool make_tile_map(CUtensorMap* map, const bf16* p, int rows, int k, int box_rows) {
  const tensor_map_encode_fn encode = tensor_map_encoder();
  if (encode == nullptr) return false;
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(k), static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(k) * 2};
  const cuuint32_t box[2] = {static_cast<cuuint32_t>(wg_bk), static_cast<cuuint32_t>(box_rows)};
  const cuuint32_t elem_strides[2] = {1, 1};
  return encode(map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, const_cast<bf16*>(p), dims, strides, box, elem_strides,
                CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

inline cudaError_t launch_gemm_wgmma(const bf16* a, const bf16* b, bf16* c, int m, int n, int k, epilogue<bf16> ep,
                                     cudaStream_t stream) {
  static const cudaError_t attr =
      cudaFuncSetAttribute(gemm_wgmma_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, wg_smem_bytes);
  if (attr != cudaSuccess) return attr;
  const long long blocks = static_cast<long long>((m + wg_bm - 1) / wg_bm) * ((n + wg_bn - 1) / wg_bn);
  if (blocks > 0x7fffffffLL) return cudaErrorInvalidValue;
  CUtensorMap map_a, map_b;
  if (!make_tile_map(&map_a, a, m, k, wg_bm) || !make_tile_map(&map_b, b, n, k, wg_bn)) return cudaErrorInvalidValue;
  gemm_wgmma_kernel<<<static_cast<unsigned>(blocks), wg_threads, wg_smem_bytes, stream>>>(map_a, map_b, c, m, n, k, ep);
  return cudaGetLastError();
}

// True where the wgmma kernel was compiled (sm_90a) and the device is a Hopper GPU.
inline bool wgmma_available() {
#if defined(NVSCOPE_KERNELS_WGMMA) && NVSCOPE_KERNELS_WGMMA
  int dev = 0, major = 0, minor = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) return false;
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess) return false;
  if (cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) != cudaSuccess) return false;
  return major == 9 && minor == 0;
#else
  return false;
#endif
}

inline bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

} // namespace detail

template <class T>
cudaError_t gemm(gemm_kind kind, const T* a, const T* b, T* c, int m, int n, int k, epilogue<T> ep, cudaStream_t stream,
                 gemm_kind* ran) {
  if (m < 0 || n < 0 || k < 0) return cudaErrorInvalidValue;
  if (m == 0 || n == 0) return cudaSuccess;
  if (c == nullptr || (k > 0 && (a == nullptr || b == nullptr))) return cudaErrorInvalidValue;
  const bool mma = kind == gemm_kind::tensor_core || kind == gemm_kind::wgmma;
  if (mma && !std::is_same<T, bf16>::value) return cudaErrorInvalidValue;  // no fp32 MMA path
  if (mma && (k == 0 || k % 8 != 0 || !detail::aligned16(a) || !detail::aligned16(b)))
    kind = gemm_kind::tiled;  // cp.async moves 16-byte chunks: rows must start on 16 bytes
  if (kind == gemm_kind::wgmma && !detail::wgmma_available()) kind = gemm_kind::tensor_core;
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
    if (kind == gemm_kind::wgmma) return detail::launch_gemm_wgmma(a, b, c, m, n, k, ep, stream);
    return detail::launch_gemm_tc<detail::tc_default>(a, b, c, m, n, k, ep, stream);
  }
  return cudaGetLastError();
}

} // namespace kernels
} // namespace v1
} // namespace nvscope

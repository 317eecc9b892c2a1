#pragma once
// The host interface of the reference kernels. Plain C++: a .cpp file can call these; exactly
// one .cu file of each program includes <kernels/instantiate.cuh>, which defines them for
// float and __nv_bfloat16 (see examples/kernels/README.md).
//
//   #include <kernels/api.hpp>
//   namespace nk = nvscope::kernels;
//   nk::softmax_fused(d_x, d_y, rows, cols, stream);        // one kernel, one read, one write
//   nk::gemm(nk::gemm_kind::tensor_core, d_a, d_w, d_c, M, N, K, {d_bias, true}, stream);
//
// Every function returns the launch's cudaError_t (cudaErrorInvalidValue for arguments it
// refuses: negative sizes, null pointers with a non-empty shape, a grid that cannot be
// launched); none synchronises. Matrices are row-major; a GEMM computes C = A * B^T with
// A [M,K], B [N,K] (the layout of a linear layer's weight) and C [M,N], accumulating in fp32.

#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

namespace nvscope {
inline namespace v1 {
namespace kernels {

using bf16 = __nv_bfloat16;

// Softmax over each row of x [rows, cols]; fp32 arithmetic for every T.
/// One kernel: online softmax, a warp per row up to 1024 columns, a block per row above;
/// the row stays in registers up to 32768 (fp32) / 32768 (bf16) columns, beyond that it is
/// read twice. A row of only -inf gives NaN (0/0), as the formula and PyTorch do.
template <class T> cudaError_t softmax_fused(const T* x, T* y, int rows, int cols, cudaStream_t stream = nullptr);
/// The unfused form, four kernels: row max, subtract-and-exp (into y), row sum, divide.
/// `workspace` holds 2 * rows floats.
template <class T> cudaError_t softmax_unfused(const T* x, T* y, float* workspace, int rows, int cols, cudaStream_t stream = nullptr);
template <class T> cudaError_t softmax_row_max(const T* x, float* row_max, int rows, int cols, cudaStream_t stream = nullptr);
template <class T> cudaError_t softmax_sub_exp(const T* x, const float* row_max, T* y, int rows, int cols, cudaStream_t stream = nullptr);
template <class T> cudaError_t softmax_row_sum(const T* y, float* row_sum, int rows, int cols, cudaStream_t stream = nullptr);
template <class T> cudaError_t softmax_divide(T* y, const float* row_sum, int rows, int cols, cudaStream_t stream = nullptr);

// LayerNorm over each row: y = (x - mean) / sqrt(var + eps) * gamma + beta (biased variance).
/// One kernel: a block per row, the row kept in registers (up to 32768 columns; longer rows are
/// read three times), a two-level (warp, then block) reduction, two-pass variance.
template <class T> cudaError_t layernorm_fused(const T* x, const T* gamma, const T* beta, T* y, int rows, int cols, float eps = 1e-5f, cudaStream_t stream = nullptr);
/// The unfused form, three kernels: mean, variance (to 1/stddev), normalise-and-scale.
/// `workspace` holds 2 * rows floats.
template <class T> cudaError_t layernorm_unfused(const T* x, const T* gamma, const T* beta, T* y, float* workspace, int rows, int cols, float eps = 1e-5f, cudaStream_t stream = nullptr);
template <class T> cudaError_t layernorm_mean(const T* x, float* mean, int rows, int cols, cudaStream_t stream = nullptr);
template <class T> cudaError_t layernorm_rstd(const T* x, const float* mean, float* rstd, int rows, int cols, float eps = 1e-5f, cudaStream_t stream = nullptr);
template <class T> cudaError_t layernorm_apply(const T* x, const float* mean, const float* rstd, const T* gamma, const T* beta, T* y, int rows, int cols, cudaStream_t stream = nullptr);

// Element-wise kernels of the unfused forms (y may alias x).
template <class T> cudaError_t bias_add(const T* x, const T* bias, T* y, int rows, int cols, cudaStream_t stream = nullptr);
template <class T> cudaError_t gelu(const T* x, T* y, int rows, int cols, cudaStream_t stream = nullptr);
template <class T> cudaError_t residual_add(const T* x, const T* residual, T* y, int rows, int cols, cudaStream_t stream = nullptr);

/// Which GEMM kernel. `tensor_core` (bf16 only): mma.sync m16n8k16 + ldmatrix + a 4-stage
/// cp.async pipeline, 128x128x32 tiles; it needs K % 8 == 0 and 16-byte aligned A and B,
/// and otherwise runs `tiled` (the kind that ran is reported). `tiled`: shared-memory tiles of
/// 128x128x16, 8x8 outputs a thread, fp32 FMA (the fp32 path: no TF32). `naive`: a thread
/// per output. `wgmma` (bf16, Hopper): wgmma.mma_async m64n256k16 from 128-byte-swizzled
/// shared memory, 128x256x64 tiles, 4 stages; it needs the program built for sm_90a with
/// NVSCOPE_KERNELS_WGMMA=1 and a compute capability 9.0 device, and otherwise runs
/// `tensor_core` (same alignment rule).
enum class gemm_kind { naive, tiled, tensor_core, wgmma };
inline const char* to_string(gemm_kind k) {
  return k == gemm_kind::naive ? "naive" : k == gemm_kind::tiled ? "tiled" : k == gemm_kind::tensor_core ? "tensor_core" : "wgmma";
}

/// What the GEMM does to each fp32 result before its one store, in this order: add bias[n],
/// apply GELU (erf form), add residual[m, n]. Null pointers / false skip a step.
template <class T> struct epilogue {
  const T* bias = nullptr;
  bool gelu = false;
  const T* residual = nullptr;
};

/// C [M,N] = epilogue(A [M,K] * B [N,K]^T). `ran`, when given, receives the kernel used.
template <class T>
cudaError_t gemm(gemm_kind kind, const T* a, const T* b, T* c, int m, int n, int k, epilogue<T> ep = {},
                 cudaStream_t stream = nullptr, gemm_kind* ran = nullptr);

} // namespace kernels
} // namespace v1
} // namespace nvscope

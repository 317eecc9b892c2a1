#pragma once
// Bench-only helpers, defined in kernels.cu. Device-side random fill for the benchmark's multi-gigabyte inputs (host generation would
// dominate the run). Uniform in [lo, hi), never exactly zero.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include <cuda_bf16.h>

template <class T> cudaError_t fill_uniform(T* p, std::size_t n, std::uint64_t seed, float lo, float hi);

/// The tensor-core GEMM in one of the tile configurations tried while tuning (see
/// bench/results/kernels.json); all 64x64 a warp, no epilogue. 0: 128x128x32, 4 stages;
/// 1: 128x128x64, 3 stages; 2: as 1 with the next k step's fragments loaded during the MMAs;
/// 3: 128x256x64, 3 stages (8 warps, one block an SM); 4: as 0 with fragment pipelining;
/// 5: the first version measured (as 0, written without templates).
cudaError_t gemm_tc_variant(int variant, const __nv_bfloat16* a, const __nv_bfloat16* b, __nv_bfloat16* c, int m, int n, int k);
constexpr int gemm_tc_variant_count = 6;

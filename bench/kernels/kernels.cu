// The reference kernels compiled once for the benchmark, and its random fill.
#include <kernels/instantiate.cuh>

#include "bench_support.hpp"

namespace {
__device__ __forceinline__ std::uint64_t mix(std::uint64_t z) {  // splitmix64's finaliser
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
template <class T> __global__ void fill_kernel(T* p, std::size_t n, std::uint64_t seed, float lo, float hi) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const float u = static_cast<float>(mix(seed + i) >> 40) * (1.f / 16777216.f);
    float v = lo + (hi - lo) * u;
    if (v == 0.f) v = 1e-3f;
    p[i] = nvscope::kernels::detail::from_float<T>(v);
  }
}
} // namespace

template <class T> cudaError_t fill_uniform(T* p, std::size_t n, std::uint64_t seed, float lo, float hi) {
  fill_kernel<T><<<4096, 256>>>(p, n, seed, lo, hi);
  return cudaGetLastError();
}
template cudaError_t fill_uniform<float>(float*, std::size_t, std::uint64_t, float, float);
template cudaError_t fill_uniform<__nv_bfloat16>(__nv_bfloat16*, std::size_t, std::uint64_t, float, float);

cudaError_t gemm_tc_variant(int variant, const __nv_bfloat16* a, const __nv_bfloat16* b, __nv_bfloat16* c, int m, int n, int k) {
  namespace d = nvscope::kernels::detail;
  switch (variant) {
    case 0: return d::launch_gemm_tc<d::tc_config<128, 128, 32, 4, 2, 2, false, 2>>(a, b, c, m, n, k, {}, nullptr);
    case 1: return d::launch_gemm_tc<d::tc_config<128, 128, 64, 3, 2, 2, false, 2>>(a, b, c, m, n, k, {}, nullptr);
    case 2: return d::launch_gemm_tc<d::tc_config<128, 128, 64, 3, 2, 2, true, 2>>(a, b, c, m, n, k, {}, nullptr);
    case 3: return d::launch_gemm_tc<d::tc_config<128, 256, 64, 3, 2, 4, false, 1>>(a, b, c, m, n, k, {}, nullptr);
    case 4: return d::launch_gemm_tc<d::tc_config<128, 128, 32, 4, 2, 2, true, 2>>(a, b, c, m, n, k, {}, nullptr);
    default: return cudaErrorInvalidValue;
  }
}

#pragma once
// Include in exactly one .cu file of a program: defines the functions of api.hpp for float and
// __nv_bfloat16 (explicit instantiations), so that the rest of the program can be plain C++.

#include <type_traits>

#include "api.hpp"
#include "gemm.cuh"
#include "layernorm.cuh"
#include "rowwise.cuh"
#include "softmax.cuh"

#define NVSCOPE_KERNELS_INSTANTIATE(T)                                                                                       \
  namespace nvscope {                                                                                                      \
  inline namespace v1 {                                                                                                    \
  namespace kernels {                                                                                                      \
  template cudaError_t softmax_fused<T>(const T*, T*, int, int, cudaStream_t);                                             \
  template cudaError_t softmax_unfused<T>(const T*, T*, float*, int, int, cudaStream_t);                                   \
  template cudaError_t softmax_row_max<T>(const T*, float*, int, int, cudaStream_t);                                       \
  template cudaError_t softmax_sub_exp<T>(const T*, const float*, T*, int, int, cudaStream_t);                             \
  template cudaError_t softmax_row_sum<T>(const T*, float*, int, int, cudaStream_t);                                       \
  template cudaError_t softmax_divide<T>(T*, const float*, int, int, cudaStream_t);                                        \
  template cudaError_t layernorm_fused<T>(const T*, const T*, const T*, T*, int, int, float, cudaStream_t);                \
  template cudaError_t layernorm_unfused<T>(const T*, const T*, const T*, T*, float*, int, int, float, cudaStream_t);      \
  template cudaError_t layernorm_mean<T>(const T*, float*, int, int, cudaStream_t);                                        \
  template cudaError_t layernorm_rstd<T>(const T*, const float*, float*, int, int, float, cudaStream_t);                    \
  template cudaError_t layernorm_apply<T>(const T*, const float*, const float*, const T*, const T*, T*, int, int,          \
                                          cudaStream_t);                                                                   \
  template cudaError_t bias_add<T>(const T*, const T*, T*, int, int, cudaStream_t);                                        \
  template cudaError_t gelu<T>(const T*, T*, int, int, cudaStream_t);                                                      \
  template cudaError_t residual_add<T>(const T*, const T*, T*, int, int, cudaStream_t);                                    \
  template cudaError_t gemm<T>(gemm_kind, const T*, const T*, T*, int, int, int, epilogue<T>, cudaStream_t, gemm_kind*);   \
  }                                                                                                                        \
  }                                                                                                                        \
  }

NVSCOPE_KERNELS_INSTANTIATE(float)
NVSCOPE_KERNELS_INSTANTIATE(__nv_bfloat16)
#undef NVSCOPE_KERNELS_INSTANTIATE

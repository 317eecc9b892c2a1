// Kernels whose names nvscope and nsys once spelled differently (issue 9): templates with
// integer and bool arguments, an anonymous namespace, bf16 and const pointers, nested
// namespaces, a variadic template, an extern "C" kernel. Each is launched once, so that
// capture_names.sh can record how nsys and cu++filt spell them on the GPU machine.
#include <cuda_bf16.h>

#include <cstdio>

__global__ void encoder_forward_kernel3(__nv_bfloat16* out, const int* inp, const __nv_bfloat16* wte, int n) {}
template <class T, int N>
__global__ void axpy_t(T* y, const T* x, T a, int n) {}
template <int N>
__global__ void tmpl_spin(long long c) {}
namespace {
__global__ void anon_kernel(int x) {}
} // namespace
template <class T, bool B>
__global__ void matmul_backward_bias_kernel9(T* dbias, const T* dout, int n) {}
namespace outer {
namespace inner {
struct Op {
  float s;
};
template <class F>
__global__ void apply(F f, float* y, unsigned long long n) {}
} // namespace inner
} // namespace outer
extern "C" __global__ void plain_c_kernel(float* p) {}
__global__ void refs(const double* __restrict__ a, unsigned char c, short s, long l, unsigned long ul, signed char sc) {}
template <typename... Ts>
__global__ void variadic(Ts... ts) {}

int main() {
  encoder_forward_kernel3<<<1, 1>>>(nullptr, nullptr, nullptr, 0);
  axpy_t<float, 4><<<1, 1>>>(nullptr, nullptr, 1.f, 1);
  axpy_t<double, -2><<<1, 1>>>(nullptr, nullptr, 1.0, 1);
  tmpl_spin<3><<<1, 1>>>(0);
  anon_kernel<<<1, 1>>>(0);
  matmul_backward_bias_kernel9<float, true><<<1, 1>>>(nullptr, nullptr, 0);
  matmul_backward_bias_kernel9<__nv_bfloat16, false><<<1, 1>>>(nullptr, nullptr, 0);
  outer::inner::apply<outer::inner::Op><<<1, 1>>>(outer::inner::Op{}, nullptr, 0);
  plain_c_kernel<<<1, 1>>>(nullptr);
  refs<<<1, 1>>>(nullptr, 0, 0, 0, 0, 0);
  variadic<int, float, char><<<1, 1>>>(1, 2.f, 'c');
  const cudaError_t e = cudaDeviceSynchronize();
  std::printf("issue_kernels: %s\n", cudaGetErrorString(e));
  return e == cudaSuccess ? 0 : 1;
}

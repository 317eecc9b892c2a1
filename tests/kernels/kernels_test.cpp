// Correctness of the reference kernels (examples/kernels) against double-precision CPU
// references: fresh random inputs each run (the seed is printed), outputs poisoned with 0xFF
// bytes before each launch and every element checked (a poisoned element left is a failure),
// odd shapes, rows of -inf and huge values, every CUDA call's result checked.
#include <doctest/doctest.h>
#include "test_seed.hpp"

#include <kernels/api.hpp>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace nk = nvscope::kernels;
using nk::bf16;

namespace {

#define CUDA_OK(call)                                                                     \
  do {                                                                                    \
    const cudaError_t err_ = (call);                                                      \
    REQUIRE_MESSAGE(err_ == cudaSuccess, #call " failed: ", cudaGetErrorString(err_));    \
  } while (0)

std::mt19937_64& rng() {
  static auto engine = nvscope_test::announced_engine<std::mt19937_64>();
  return engine;
}

bool small_only() {
  const char* v = std::getenv("NVSCOPE_KERNELS_SMALL");
  return v != nullptr && v[0] == '1';
}

// Host images of device values. bf16 by round-to-nearest-even on the bits.
template <class T> struct host;
template <> struct host<float> {
  static float from(double v) { return static_cast<float>(v); }
  static double value(float v) { return v; }
  static bool poisoned(float v) {
    std::uint32_t b;
    std::memcpy(&b, &v, 4);
    return b == 0xffffffffu;
  }
  static constexpr const char* name = "fp32";
};
template <> struct host<bf16> {
  static bf16 from(double d) {
    const float f = static_cast<float>(d);
    std::uint32_t b;
    std::memcpy(&b, &f, 4);
    std::uint16_t h;
    if (std::isnan(f)) h = 0x7fc0;
    else h = static_cast<std::uint16_t>((b + 0x7fffu + ((b >> 16) & 1u)) >> 16);
    __nv_bfloat16_raw raw;
    raw.x = h;
    return bf16(raw);
  }
  static std::uint16_t bits(bf16 v) { return static_cast<__nv_bfloat16_raw>(v).x; }
  static double value(bf16 v) {
    const std::uint32_t b = static_cast<std::uint32_t>(bits(v)) << 16;
    float f;
    std::memcpy(&f, &b, 4);
    return f;
  }
  static bool poisoned(bf16 v) {
    return bits(v) == 0xffffu;
  }
  static constexpr const char* name = "bf16";
};

// A device buffer that frees itself.
template <class T> struct dbuf {
  T* p = nullptr;
  size_t n = 0;
  explicit dbuf(size_t count, size_t offset_elems = 0) : n(count) {
    void* raw = nullptr;
    CUDA_OK(cudaMalloc(&raw, (count + offset_elems) * sizeof(T) + 16));
    base = raw;
    p = static_cast<T*>(raw) + offset_elems;
  }
  ~dbuf() { cudaFree(base); }
  dbuf(const dbuf&) = delete;
  dbuf& operator=(const dbuf&) = delete;
  void upload(const std::vector<T>& h) { CUDA_OK(cudaMemcpy(p, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice)); }
  std::vector<T> download() {
    std::vector<T> h(n);
    CUDA_OK(cudaMemcpy(h.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost));
    return h;
  }
  void poison() { CUDA_OK(cudaMemset(p, 0xff, n * sizeof(T))); }
  void* base = nullptr;
};

// Random values rounded to T; `vals` receives the exact values the device sees.
template <class T> std::vector<T> random_tensor(size_t n, double mean, double stddev, std::vector<double>& vals) {
  std::normal_distribution<double> d(mean, stddev);
  std::vector<T> h(n);
  vals.resize(n);
  for (size_t i = 0; i < n; ++i) {
    double v = d(rng());
    if (v == 0.0) v = 1e-3;  // never zeros
    h[i] = host<T>::from(v);
    vals[i] = host<T>::value(h[i]);
  }
  return h;
}

struct compare_result {
  size_t unwritten = 0, nan_mismatch = 0, over_bound = 0;
  double norm_err = 0, worst_ratio = 0;
};

// Every element: not poison, NaN exactly where the reference is NaN, |out - ref| <= bound[i];
// and over the finite part, ||out - ref|| / ||ref||.
template <class T>
compare_result compare(const std::vector<T>& out, const std::vector<double>& ref, const std::vector<double>& bound) {
  compare_result r;
  double num = 0, den = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    if (host<T>::poisoned(out[i])) {
      ++r.unwritten;
      continue;
    }
    const double o = host<T>::value(out[i]);
    if (std::isnan(ref[i]) || std::isnan(o)) {
      if (std::isnan(ref[i]) != std::isnan(o)) ++r.nan_mismatch;
      continue;
    }
    const double e = std::fabs(o - ref[i]);
    num += e * e;
    den += ref[i] * ref[i];
    const double ratio = bound[i] > 0 ? e / bound[i] : (e > 0 ? 1e30 : 0);
    r.worst_ratio = std::max(r.worst_ratio, ratio);
    if (e > bound[i]) ++r.over_bound;
  }
  r.norm_err = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
  return r;
}

#define CHECK_RESULT(r, tol)                                                                     \
  do {                                                                                           \
    CHECK_MESSAGE((r).unwritten == 0, "elements left unwritten: ", (r).unwritten);               \
    CHECK_MESSAGE((r).nan_mismatch == 0, "NaN where the reference has none, or the reverse: ",  \
                  (r).nan_mismatch);                                                             \
    CHECK_MESSAGE((r).over_bound == 0, "elements over their bound: ", (r).over_bound,            \
                  " (worst error/bound ", (r).worst_ratio, ")");                                 \
    CHECK_MESSAGE((r).norm_err <= (tol), "relative error ", (r).norm_err, " > ", (tol));         \
  } while (0)

template <class T> double tol_of() { return std::is_same<T, float>::value ? 1e-5 : 1e-2; }
template <class T> double unit_of() { return std::is_same<T, float>::value ? std::ldexp(1.0, -24) : std::ldexp(1.0, -8); }

// ---------------------------------------------------------------- softmax

std::vector<double> softmax_ref(const std::vector<double>& x, int rows, int cols) {
  std::vector<double> y(x.size());
  for (int r = 0; r < rows; ++r) {
    const double* xr = &x[static_cast<size_t>(r) * cols];
    double m = -std::numeric_limits<double>::infinity();
    bool nan = false;
    for (int c = 0; c < cols; ++c) {
      m = std::max(m, xr[c]);
      nan |= std::isnan(xr[c]);
    }
    double s = 0;
    for (int c = 0; c < cols; ++c) s += std::exp(xr[c] - m);  // all -inf: (-inf) - (-inf) = NaN
    for (int c = 0; c < cols; ++c)
      y[static_cast<size_t>(r) * cols + c] = nan ? std::nan("") : std::exp(xr[c] - m) / s;
  }
  return y;
}

// Per element: a relative bound (fp32: exp's argument error grows with |x - max|), plus a
// share of the row's largest output.
std::vector<double> row_bound(const std::vector<double>& ref, int rows, int cols, double tol) {
  std::vector<double> b(ref.size());
  for (int r = 0; r < rows; ++r) {
    double mx = 0;
    for (int c = 0; c < cols; ++c) {
      const double v = ref[static_cast<size_t>(r) * cols + c];
      if (!std::isnan(v)) mx = std::max(mx, std::fabs(v));
    }
    for (int c = 0; c < cols; ++c) {
      const size_t i = static_cast<size_t>(r) * cols + c;
      b[i] = tol * (std::fabs(ref[i]) + mx) + 1e-37;
    }
  }
  return b;
}

template <class T> void check_softmax(const std::vector<T>& hx, const std::vector<double>& x, int rows, int cols, size_t offset = 0) {
  const size_t n = static_cast<size_t>(rows) * cols;
  dbuf<T> dx(n, offset), dy(n, offset);
  dbuf<float> ws(2 * static_cast<size_t>(rows) + 1);
  dx.upload(hx);
  const std::vector<double> ref = softmax_ref(x, rows, cols);
  const std::vector<double> bound = row_bound(ref, rows, cols, 10 * tol_of<T>());
  for (int fused = 0; fused < 2; ++fused) {
    CAPTURE(fused);
    dy.poison();
    if (fused) CUDA_OK(nk::softmax_fused<T>(dx.p, dy.p, rows, cols));
    else CUDA_OK(nk::softmax_unfused<T>(dx.p, dy.p, ws.p, rows, cols));
    CUDA_OK(cudaDeviceSynchronize());
    const compare_result r = compare(dy.download(), ref, bound);
    CHECK_RESULT(r, tol_of<T>());
  }
}

struct shape {
  int rows, cols;
};

std::vector<shape> row_shapes() {
  std::vector<shape> s = {{1, 1}, {1, 7}, {3, 33}, {37, 1000}, {5, 1024}, {7, 1025}, {3, 4099}, {64, 4096}, {9, 2056}};
  if (!small_only()) {
    s.insert(s.end(), {{2, 40000}, {1, 65536}, {3, 100003}, {2048, 512}, {300, 8192}});
  }
  return s;
}

template <class T> void softmax_cases() {
  for (const shape& sh : row_shapes()) {
    const std::string dtype = host<T>::name;
    CAPTURE(dtype);
    CAPTURE(sh.rows);
    CAPTURE(sh.cols);
    std::vector<double> x;
    const auto hx = random_tensor<T>(static_cast<size_t>(sh.rows) * sh.cols, 0.5, 3.0, x);
    check_softmax<T>(hx, x, sh.rows, sh.cols);
  }
}

TEST_CASE("softmax fp32 and bf16, fused and unfused, odd shapes") {
  softmax_cases<float>();
  softmax_cases<bf16>();
}

TEST_CASE("softmax on a pointer that is not 16-byte aligned (the scalar path)") {
  std::vector<double> x;
  const auto hx = random_tensor<float>(8 * 4096, 0, 2, x);
  check_softmax<float>(hx, x, 8, 4096, 1);
  std::vector<double> xb;
  const auto hb = random_tensor<bf16>(8 * 4096, 0, 2, xb);
  check_softmax<bf16>(hb, xb, 8, 4096, 3);
}

template <class T> void softmax_special(int cols) {
  const int rows = 7;
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> x;
  auto hx = random_tensor<T>(static_cast<size_t>(rows) * cols, 0, 1, x);
  std::uniform_real_distribution<double> huge(-3e38, 3e38);
  std::normal_distribution<double> noise(0, 1);
  for (int c = 0; c < cols; ++c) {
    const size_t i = c;
    auto set = [&](int row, double v) {
      hx[static_cast<size_t>(row) * cols + i] = host<T>::from(v);
      x[static_cast<size_t>(row) * cols + i] = host<T>::value(hx[static_cast<size_t>(row) * cols + i]);
    };
    set(0, -inf);                                    // all -inf: NaN, as 0/0
    set(1, c % 2 ? -inf : noise(rng()));             // half masked: exactly 0 there
    set(2, huge(rng()));                             // huge values: no overflow
    set(3, 1e4 + noise(rng()));                      // a large common offset
    set(4, c == cols / 2 ? noise(rng()) : -inf);     // one finite value: exactly 1 there
    set(5, c % 3 ? -3e38 : 3e38);                    // extremes of the range
    set(6, noise(rng()) * 50);                       // wide spread
  }
  check_softmax<T>(hx, x, rows, cols);
}

TEST_CASE("softmax rows of -inf, masked rows, huge values") {
  for (int cols : {1, 37, 1000, 3000, 40000}) {
    CAPTURE(cols);
    softmax_special<float>(cols);
    softmax_special<bf16>(cols);
  }
}

// ---------------------------------------------------------------- layernorm

std::vector<double> layernorm_ref(const std::vector<double>& x, const std::vector<double>& g, const std::vector<double>& b,
                                  int rows, int cols, double eps) {
  std::vector<double> y(x.size());
  for (int r = 0; r < rows; ++r) {
    const double* xr = &x[static_cast<size_t>(r) * cols];
    double mean = 0, var = 0;
    for (int c = 0; c < cols; ++c) mean += xr[c];
    mean /= cols;
    for (int c = 0; c < cols; ++c) var += (xr[c] - mean) * (xr[c] - mean);
    var /= cols;
    const double rstd = 1 / std::sqrt(var + eps);
    for (int c = 0; c < cols; ++c) y[static_cast<size_t>(r) * cols + c] = (xr[c] - mean) * rstd * g[c] + b[c];
  }
  return y;
}

template <class T> void check_layernorm(int rows, int cols, double offset, double tol, size_t misalign = 0) {
  const size_t n = static_cast<size_t>(rows) * cols;
  std::vector<double> x, g, b;
  const auto hx = random_tensor<T>(n, offset, 1.0, x);
  const auto hg = random_tensor<T>(cols, 1.0, 0.5, g);
  const auto hb = random_tensor<T>(cols, 0.0, 0.5, b);
  dbuf<T> dx(n, misalign), dy(n, misalign), dg(cols), db(cols);
  dbuf<float> ws(2 * static_cast<size_t>(rows) + 1);
  dx.upload(hx);
  dg.upload(hg);
  db.upload(hb);
  const double eps = 1e-5;
  const std::vector<double> ref = layernorm_ref(x, g, b, rows, cols, eps);
  // Per element: the tolerance times (|ref| + |gamma| + |beta|), the size of the terms.
  std::vector<double> bound(n);
  for (size_t i = 0; i < n; ++i) {
    const size_t c = i % cols;
    bound[i] = 10 * tol * (std::fabs(ref[i]) + std::fabs(g[c]) + std::fabs(b[c]));
  }
  for (int fused = 0; fused < 2; ++fused) {
    CAPTURE(fused);
    dy.poison();
    if (fused) CUDA_OK(nk::layernorm_fused<T>(dx.p, dg.p, db.p, dy.p, rows, cols, static_cast<float>(eps)));
    else CUDA_OK(nk::layernorm_unfused<T>(dx.p, dg.p, db.p, dy.p, ws.p, rows, cols, static_cast<float>(eps)));
    CUDA_OK(cudaDeviceSynchronize());
    const compare_result r = compare(dy.download(), ref, bound);
    CHECK_RESULT(r, tol);
  }
}

TEST_CASE("layernorm fp32 and bf16, fused and unfused, odd shapes") {
  std::vector<shape> shapes = row_shapes();
  shapes.erase(std::remove_if(shapes.begin(), shapes.end(), [](const shape& s) { return s.cols < 2; }), shapes.end());
  for (const shape& sh : shapes) {
    CAPTURE(sh.rows);
    CAPTURE(sh.cols);
    check_layernorm<float>(sh.rows, sh.cols, 3.0, tol_of<float>());
    check_layernorm<bf16>(sh.rows, sh.cols, 3.0, tol_of<bf16>());
  }
}

TEST_CASE("layernorm: misaligned pointers, a large mean") {
  check_layernorm<float>(16, 4096, 0.0, tol_of<float>(), 1);
  check_layernorm<bf16>(16, 4096, 0.0, tol_of<bf16>(), 5);
  // With mean 1000 and stddev 1, the fp32 mean alone carries ~1000 * 2^-24 per add: a looser
  // bound, which the two-pass variance still meets (a one-pass E[x^2] - E[x]^2 would not).
  check_layernorm<float>(8, 3000, 1000.0, 2e-4);
}

TEST_CASE("a row with a single column normalises to beta") {
  check_layernorm<float>(5, 1, 0.0, 1e-5);
}

// ---------------------------------------------------------------- gemm

struct gemm_shape {
  int m, n, k;
};

template <class T> struct gemm_inputs {
  std::vector<T> ha, hb, hbias, hres;
  std::vector<double> a, b, bias, res;
};

template <class T> gemm_inputs<T> make_gemm_inputs(const gemm_shape& s) {
  gemm_inputs<T> in;
  in.ha = random_tensor<T>(static_cast<size_t>(s.m) * s.k, 0, 1, in.a);
  in.hb = random_tensor<T>(static_cast<size_t>(s.n) * s.k, 0, 1, in.b);
  in.hbias = random_tensor<T>(s.n, 0, 1, in.bias);
  in.hres = random_tensor<T>(static_cast<size_t>(s.m) * s.n, 0, 1, in.res);
  return in;
}

double gelu_ref(double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }

// The reference and each element's bound: accumulation error grows with K (fp32: K * 2^-23
// times sum |a_k b_k|, a worst case), plus `roundings` roundings to T of the terms' size.
template <class T>
void gemm_ref(const gemm_shape& s, const gemm_inputs<T>& in, bool bias, bool gelu, bool res, int roundings,
              std::vector<double>& ref, std::vector<double>& bound) {
  ref.assign(static_cast<size_t>(s.m) * s.n, 0);
  bound.assign(ref.size(), 0);
  const double u = unit_of<T>(), u32 = std::ldexp(1.0, -23);
  for (int i = 0; i < s.m; ++i) {
    for (int j = 0; j < s.n; ++j) {
      double acc = 0, mag = 0;
      const double* ar = &in.a[static_cast<size_t>(i) * s.k];
      const double* br = &in.b[static_cast<size_t>(j) * s.k];
      for (int k = 0; k < s.k; ++k) {
        acc += ar[k] * br[k];
        mag += std::fabs(ar[k] * br[k]);
      }
      double v = acc;
      if (bias) {
        v += in.bias[j];
        mag += std::fabs(in.bias[j]);
      }
      if (gelu) v = gelu_ref(v);
      const size_t idx = static_cast<size_t>(i) * s.n + j;
      if (res) {
        v += in.res[idx];
        mag += std::fabs(in.res[idx]);
      }
      ref[idx] = v;
      bound[idx] = 1.2 * (s.k + 2) * u32 * mag + roundings * u * (mag + std::fabs(v)) + 4e-6 * mag + 1e-30;
    }
  }
}

std::vector<gemm_shape> gemm_shapes() {
  std::vector<gemm_shape> s = {{1, 1, 1}, {1, 300, 64}, {300, 1, 64}, {127, 129, 67}, {67, 45, 8}, {130, 260, 1000},
                               {256, 256, 256}, {3, 5, 4104}};
  // 1100 and 2200 rows: an odd count of 128-row tiles, and more than one group of tiles in the
  // wgmma kernel's grouped block order.
  if (!small_only()) s.insert(s.end(), {{200, 384, 520}, {513, 257, 264}, {1024, 1024, 128}, {1100, 520, 136}, {2200, 300, 72}});
  return s;
}

template <class T> std::vector<nk::gemm_kind> kinds_for() {
  if (std::is_same<T, float>::value) return {nk::gemm_kind::naive, nk::gemm_kind::tiled};
  return {nk::gemm_kind::naive, nk::gemm_kind::tiled, nk::gemm_kind::tensor_core, nk::gemm_kind::wgmma};
}

template <class T> void gemm_cases() {
  for (const gemm_shape& s : gemm_shapes()) {
    const std::string dtype = host<T>::name;
    CAPTURE(dtype);
    CAPTURE(s.m);
    CAPTURE(s.n);
    CAPTURE(s.k);
    const gemm_inputs<T> in = make_gemm_inputs<T>(s);
    dbuf<T> da(in.ha.size()), db(in.hb.size()), dbias(in.hbias.size()), dres(in.hres.size()), dc(in.hres.size());
    da.upload(in.ha);
    db.upload(in.hb);
    dbias.upload(in.hbias);
    dres.upload(in.hres);
    for (int epi = 0; epi < 3; ++epi) {
      CAPTURE(epi);  // 0: none, 1: bias + GELU, 2: bias + GELU + residual
      std::vector<double> ref, bound;
      gemm_ref(s, in, epi >= 1, epi >= 1, epi == 2, 1, ref, bound);
      nk::epilogue<T> ep;
      if (epi >= 1) {
        ep.bias = dbias.p;
        ep.gelu = true;
      }
      if (epi == 2) ep.residual = dres.p;
      for (nk::gemm_kind kind : kinds_for<T>()) {
        CAPTURE(nk::to_string(kind));
        dc.poison();
        nk::gemm_kind ran = kind;
        CUDA_OK(nk::gemm<T>(kind, da.p, db.p, dc.p, s.m, s.n, s.k, ep, nullptr, &ran));
        CUDA_OK(cudaDeviceSynchronize());
        if (kind == nk::gemm_kind::tensor_core) CHECK((ran == nk::gemm_kind::tensor_core) == (s.k % 8 == 0));
        if (kind == nk::gemm_kind::wgmma) CHECK((ran == nk::gemm_kind::wgmma) == (s.k % 8 == 0));  // built for sm_90a, run on sm_90
        const compare_result r = compare(dc.download(), ref, bound);
        CHECK_RESULT(r, tol_of<T>());
      }
      if (epi == 2) {
        // The unfused form: GEMM, then bias, GELU and residual kernels, each rounding to T.
        std::vector<double> uref, ubound;
        gemm_ref(s, in, true, true, true, 4, uref, ubound);
        dc.poison();
        const nk::gemm_kind k = std::is_same<T, float>::value ? nk::gemm_kind::tiled : nk::gemm_kind::wgmma;
        CUDA_OK(nk::gemm<T>(k, da.p, db.p, dc.p, s.m, s.n, s.k, {}, nullptr, nullptr));
        CUDA_OK(nk::bias_add<T>(dc.p, dbias.p, dc.p, s.m, s.n));
        CUDA_OK(nk::gelu<T>(dc.p, dc.p, s.m, s.n));
        CUDA_OK(nk::residual_add<T>(dc.p, dres.p, dc.p, s.m, s.n));
        CUDA_OK(cudaDeviceSynchronize());
        const compare_result r = compare(dc.download(), uref, ubound);
        CHECK_RESULT(r, 4 * tol_of<T>());  // four kernels, four roundings to T
      }
    }
  }
}

TEST_CASE("gemm fp32 (naive, tiled) and bf16 (naive, tiled, mma.sync, wgmma), epilogues, odd shapes") {
  gemm_cases<float>();
  gemm_cases<bf16>();
}

TEST_CASE("bad arguments are refused with cudaErrorInvalidValue, not launched") {
  dbuf<float> d(16);
  CHECK(nk::softmax_fused<float>(d.p, d.p, -1, 4) == cudaErrorInvalidValue);
  CHECK(nk::softmax_fused<float>(nullptr, d.p, 2, 4) == cudaErrorInvalidValue);
  CHECK(nk::softmax_unfused<float>(d.p, d.p, nullptr, 2, 4) == cudaErrorInvalidValue);
  CHECK(nk::layernorm_fused<float>(d.p, nullptr, d.p, d.p, 2, 4) == cudaErrorInvalidValue);
  CHECK(nk::layernorm_fused<float>(d.p, d.p, d.p, d.p, 2, 4, -1.f) == cudaErrorInvalidValue);
  CHECK(nk::layernorm_unfused<float>(d.p, d.p, d.p, d.p, d.p, 2, 4, std::nanf("")) == cudaErrorInvalidValue);
  CHECK(nk::gemm<float>(nk::gemm_kind::tensor_core, d.p, d.p, d.p, 2, 2, 2) == cudaErrorInvalidValue);
  CHECK(nk::gemm<float>(nk::gemm_kind::tiled, d.p, d.p, d.p, 2, -2, 2) == cudaErrorInvalidValue);
  // Empty shapes are no work, not an error.
  CHECK(nk::softmax_fused<float>(nullptr, nullptr, 0, 0) == cudaSuccess);
  CHECK(nk::gemm<float>(nk::gemm_kind::naive, nullptr, nullptr, nullptr, 0, 5, 5) == cudaSuccess);
  CHECK(cudaGetLastError() == cudaSuccess);
}

} // namespace

// The reference kernels measured against the ceilings of the same run: the device-to-device
// copy bandwidth (bytes read plus written) and cuBLAS on the same GEMM shapes. GPU time by CUDA
// events around each iteration (Google Benchmark's manual time); the median iteration backs
// the metrics. Sizes are far larger than L2 (1 GiB tensors). Writes the metrics of issue 5 to
// --kernels_out=FILE in the results format of DESIGN.md.
//
//   CUDA_MODULE_LOAD=EAGER kernels_bench --kernels_out=bench/results/kernels.json --kernels_commit=$(git rev-parse --short HEAD)
#include <benchmark/benchmark.h>

#include <kernels/api.hpp>
#include <kernels/transformer_block.hpp>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <functional>
#include <map>
#include <stdexcept>
#include <cerrno>
#include <cmath>
#include <string>
#include <vector>

#include "bench_support.hpp"

namespace nk = nvscope::kernels;
using nk::bf16;

namespace {

std::map<std::string, double>& medians() {  // benchmark name -> median seconds
  static std::map<std::string, double> m;
  return m;
}
std::map<std::string, double>& extras() {  // counts measured along the way
  static std::map<std::string, double> m;
  return m;
}

const char* cublas_error(cublasStatus_t s) { return cublasGetStatusString(s); }

cublasHandle_t cublas() {
  static cublasHandle_t h = [] {
    cublasHandle_t handle = nullptr;
    if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) return static_cast<cublasHandle_t>(nullptr);
    cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH);  // fp32 stays fp32: no TF32
    return handle;
  }();
  return h;
}

// A device allocation that frees itself; `ok` is false (and `error` says why) if it failed.
template <class T> struct dmem {
  T* p = nullptr;
  std::string error;
  explicit dmem(size_t n) {
    void* raw = nullptr;
    const cudaError_t e = cudaMalloc(&raw, n * sizeof(T));
    p = static_cast<T*>(raw);
    if (e != cudaSuccess) {
      error = std::string("cudaMalloc(") + std::to_string(n * sizeof(T)) + " bytes) failed: " + cudaGetErrorString(e);
      p = nullptr;
    }
  }
  ~dmem() { cudaFree(p); }
  dmem(const dmem&) = delete;
  dmem& operator=(const dmem&) = delete;
};

struct skip : std::runtime_error {
  using std::runtime_error::runtime_error;
};
void ok(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw skip(std::string(what) + " failed: " + cudaGetErrorString(e));
}
void ok(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) throw skip(std::string(what) + " failed: " + cublas_error(s));
}
template <class T> void need(const dmem<T>& m) {
  if (!m.p) throw skip(m.error);
}

// Times `step` (which launches GPU work and returns a cudaError_t) with events, one
// iteration per benchmark iteration; records the median under the benchmark's name.
void time_gpu(benchmark::State& st, const std::string& key, const std::function<cudaError_t()>& step, double bytes, double flops) {
  cudaEvent_t a = nullptr, b = nullptr;
  ok(cudaEventCreate(&a), "cudaEventCreate");
  ok(cudaEventCreate(&b), "cudaEventCreate");
  for (int i = 0; i < 2; ++i) ok(step(), "warm-up launch");
  ok(cudaDeviceSynchronize(), "warm-up");
  std::vector<double> t;
  for (auto _ : st) {
    ok(cudaEventRecord(a), "cudaEventRecord");
    ok(step(), "launch");
    ok(cudaEventRecord(b), "cudaEventRecord");
    ok(cudaEventSynchronize(b), "cudaEventSynchronize");
    float ms = 0;
    ok(cudaEventElapsedTime(&ms, a, b), "cudaEventElapsedTime");
    st.SetIterationTime(ms * 1e-3);
    t.push_back(ms * 1e-3);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  std::sort(t.begin(), t.end());
  const double med = t.empty() ? 0 : t[t.size() / 2];
  medians()[key] = med;
  if (bytes > 0 && med > 0) st.counters["GB/s"] = bytes / med * 1e-9;
  if (flops > 0 && med > 0) st.counters["TFLOP/s"] = flops / med * 1e-12;
  st.counters["median_ms"] = med * 1e3;
}

// Runs `body` and turns a skip into SkipWithError (the metric is then missing, and reported so).
template <class F> void guarded(benchmark::State& st, F&& body) {
  try {
    body();
  } catch (const skip& e) {
    st.SkipWithError(e.what());
  }
}

constexpr int row_count = 65536, row_len = 4096;          // 1 GiB of fp32 (512 MiB bf16) a tensor
constexpr int short_rows = 262144, short_len = 1024;      // the warp-per-row path, 1 GiB fp32
constexpr int gemm_size = 4096;

void bm_copy(benchmark::State& st, const std::string& key) {
  guarded(st, [&] {
    const size_t bytes = size_t(1) << 30;
    dmem<char> src(bytes), dst(bytes);
    need(src);
    need(dst);
    ok(cudaMemset(src.p, 1, bytes), "cudaMemset");
    time_gpu(st, key, [&] { return cudaMemcpyAsync(dst.p, src.p, bytes, cudaMemcpyDeviceToDevice); }, 2.0 * bytes, 0);
  });
}

template <class T> void bm_softmax(benchmark::State& st, const std::string& key, bool fused, int rows, int cols) {
  guarded(st, [&] {
    const size_t n = size_t(rows) * cols;
    dmem<T> x(n), y(n);
    dmem<float> ws(2 * size_t(rows));
    need(x);
    need(y);
    need(ws);
    ok(fill_uniform<T>(x.p, n, 1, -8.f, 8.f), "fill");
    auto step = [&] { return fused ? nk::softmax_fused<T>(x.p, y.p, rows, cols) : nk::softmax_unfused<T>(x.p, y.p, ws.p, rows, cols); };
    time_gpu(st, key, step, 2.0 * n * sizeof(T), 0);
  });
}

template <class T> void bm_layernorm(benchmark::State& st, const std::string& key, bool fused) {
  guarded(st, [&] {
    const int rows = row_count, cols = row_len;
    const size_t n = size_t(rows) * cols;
    dmem<T> x(n), y(n), g(cols), b(cols);
    dmem<float> ws(2 * size_t(rows));
    need(x);
    need(y);
    need(g);
    need(b);
    need(ws);
    ok(fill_uniform<T>(x.p, n, 2, -1.f, 2.f), "fill");
    ok(fill_uniform<T>(g.p, cols, 3, 0.5f, 1.5f), "fill");
    ok(fill_uniform<T>(b.p, cols, 4, -0.5f, 0.5f), "fill");
    auto step = [&] {
      return fused ? nk::layernorm_fused<T>(x.p, g.p, b.p, y.p, rows, cols)
                   : nk::layernorm_unfused<T>(x.p, g.p, b.p, y.p, ws.p, rows, cols);
    };
    time_gpu(st, key, step, 2.0 * n * sizeof(T), 0);
  });
}

enum class gemm_impl { ours, cublas, ours_unfused_epilogue, variant };

template <class T> void bm_gemm(benchmark::State& st, const std::string& key, gemm_impl impl, nk::gemm_kind kind, bool bias_gelu, int variant = 0) {
  guarded(st, [&] {
    const int M = gemm_size, N = gemm_size, K = gemm_size;
    dmem<T> a(size_t(M) * K), b(size_t(N) * K), c(size_t(M) * N), bias(N);
    need(a);
    need(b);
    need(c);
    need(bias);
    ok(fill_uniform<T>(a.p, size_t(M) * K, 5, -1.f, 1.f), "fill");
    ok(fill_uniform<T>(b.p, size_t(N) * K, 6, -1.f, 1.f), "fill");
    ok(fill_uniform<T>(bias.p, N, 7, -1.f, 1.f), "fill");
    nk::epilogue<T> ep;
    if (bias_gelu) {
      ep.bias = bias.p;
      ep.gelu = true;
    }
    std::function<cudaError_t()> step;
    if (impl == gemm_impl::cublas) {
      if (!cublas()) throw skip("cublasCreate failed");
      const float alpha = 1.f, beta = 0.f;
      const cudaDataType_t dt = std::is_same<T, float>::value ? CUDA_R_32F : CUDA_R_16BF;
      // Row-major C = A B^T is column-major C^T = B^T(col) ... : op(B)=T over B [K x N] col-major.
      step = [&, dt, alpha, beta] {
        const cublasStatus_t s = cublasGemmEx(cublas(), CUBLAS_OP_T, CUBLAS_OP_N, N, M, K, &alpha, b.p, dt, K, a.p, dt, K, &beta,
                                              c.p, dt, N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
        return s == CUBLAS_STATUS_SUCCESS ? cudaGetLastError() : cudaErrorUnknown;
      };
    } else if (impl == gemm_impl::variant) {
      if constexpr (std::is_same<T, bf16>::value) step = [&, variant] { return gemm_tc_variant(variant, a.p, b.p, c.p, M, N, K); };
    } else if (impl == gemm_impl::ours) {
      nk::gemm_kind ran = kind;
      ok(nk::gemm<T>(kind, a.p, b.p, c.p, M, N, K, ep, nullptr, &ran), "gemm");
      if (ran != kind) throw skip("the requested GEMM kernel did not run");
      step = [&, kind, ep] { return nk::gemm<T>(kind, a.p, b.p, c.p, M, N, K, ep); };
    } else {
      step = [&, kind] {
        cudaError_t e = nk::gemm<T>(kind, a.p, b.p, c.p, M, N, K, {});
        if (e == cudaSuccess) e = nk::bias_add<T>(c.p, bias.p, c.p, M, N);
        if (e == cudaSuccess) e = nk::gelu<T>(c.p, c.p, M, N);
        return e;
      };
    }
    time_gpu(st, key, step, 0, 2.0 * M * N * K);
  });
}

void bm_block(benchmark::State& st, const std::string& key, bool fused) {
  guarded(st, [&] {
    nk::block_shape shape;  // the example's defaults
    nk::transformer_block blk(shape);
    ok(blk.init(20261121), "transformer_block::init");
    long long launches = 0;
    auto hook = [&](const char*, int, auto&& fn) {
      ++launches;
      return fn();
    };
    time_gpu(st, key, [&] { return blk.run(fused, hook); }, 0, 0);
    // Launches over the forward passes run (warm-up included) and their layers.
    const double passes = double(st.iterations()) + 2;
    extras()[fused ? "block_fused_kernels_per_layer" : "block_unfused_kernels_per_layer"] = launches / passes / shape.layers;
  });
}

void register_all() {
  auto reg = [](const char* name, auto fn, double min_time = 0.5) {
    benchmark::RegisterBenchmark(name, fn, std::string(name))->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(min_time);
  };
  reg("copy_d2d_1GiB", [](benchmark::State& s, const std::string& k) { bm_copy(s, k); });
  reg("softmax_fused_fp32", [](benchmark::State& s, const std::string& k) { bm_softmax<float>(s, k, true, row_count, row_len); });
  reg("softmax_unfused_fp32", [](benchmark::State& s, const std::string& k) { bm_softmax<float>(s, k, false, row_count, row_len); });
  reg("softmax_fused_bf16", [](benchmark::State& s, const std::string& k) { bm_softmax<bf16>(s, k, true, row_count, row_len); });
  reg("softmax_unfused_bf16", [](benchmark::State& s, const std::string& k) { bm_softmax<bf16>(s, k, false, row_count, row_len); });
  reg("softmax_fused_fp32_rows1024", [](benchmark::State& s, const std::string& k) { bm_softmax<float>(s, k, true, short_rows, short_len); });
  reg("softmax_unfused_fp32_rows1024", [](benchmark::State& s, const std::string& k) { bm_softmax<float>(s, k, false, short_rows, short_len); });
  reg("layernorm_fused_fp32", [](benchmark::State& s, const std::string& k) { bm_layernorm<float>(s, k, true); });
  reg("layernorm_unfused_fp32", [](benchmark::State& s, const std::string& k) { bm_layernorm<float>(s, k, false); });
  reg("layernorm_fused_bf16", [](benchmark::State& s, const std::string& k) { bm_layernorm<bf16>(s, k, true); });
  reg("layernorm_unfused_bf16", [](benchmark::State& s, const std::string& k) { bm_layernorm<bf16>(s, k, false); });
  using K = nk::gemm_kind;
  reg("gemm_bf16_wgmma", [](benchmark::State& s, const std::string& k) { bm_gemm<bf16>(s, k, gemm_impl::ours, K::wgmma, false); });
  reg("gemm_bf16_tensor_core", [](benchmark::State& s, const std::string& k) { bm_gemm<bf16>(s, k, gemm_impl::ours, K::tensor_core, false); });
  reg("gemm_bf16_cublas", [](benchmark::State& s, const std::string& k) { bm_gemm<bf16>(s, k, gemm_impl::cublas, K::tensor_core, false); });
  static const char* const variant_names[gemm_tc_variant_count] = {
      "gemm_bf16_tc_v0_128x128x32_s4", "gemm_bf16_tc_v1_128x128x64_s3", "gemm_bf16_tc_v2_128x128x64_s3_pipe",
      "gemm_bf16_tc_v3_128x256x64_s3", "gemm_bf16_tc_v4_128x128x32_s4_pipe", "gemm_bf16_tc_v5_first_version"};
  for (int v = 0; v < gemm_tc_variant_count; ++v)
    benchmark::RegisterBenchmark(variant_names[v], [v](benchmark::State& s, const std::string& k) {
      bm_gemm<bf16>(s, k, gemm_impl::variant, K::tensor_core, false, v);
    }, std::string(variant_names[v]))->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(0.3);
  reg("gemm_bf16_tiled", [](benchmark::State& s, const std::string& k) { bm_gemm<bf16>(s, k, gemm_impl::ours, K::tiled, false); }, 0.2);
  reg("gemm_bf16_naive", [](benchmark::State& s, const std::string& k) { bm_gemm<bf16>(s, k, gemm_impl::ours, K::naive, false); }, 0.1);
  reg("gemm_fp32_tiled", [](benchmark::State& s, const std::string& k) { bm_gemm<float>(s, k, gemm_impl::ours, K::tiled, false); });
  reg("gemm_fp32_cublas", [](benchmark::State& s, const std::string& k) { bm_gemm<float>(s, k, gemm_impl::cublas, K::tiled, false); });
  reg("gemm_fp32_naive", [](benchmark::State& s, const std::string& k) { bm_gemm<float>(s, k, gemm_impl::ours, K::naive, false); }, 0.1);
  reg("gemm_bf16_wgmma_bias_gelu_fused", [](benchmark::State& s, const std::string& k) { bm_gemm<bf16>(s, k, gemm_impl::ours, K::wgmma, true); });
  reg("gemm_bf16_wgmma_bias_gelu_unfused",
      [](benchmark::State& s, const std::string& k) { bm_gemm<bf16>(s, k, gemm_impl::ours_unfused_epilogue, K::wgmma, true); });
  reg("block_unfused", [](benchmark::State& s, const std::string& k) { bm_block(s, k, false); });
  reg("block_fused", [](benchmark::State& s, const std::string& k) { bm_block(s, k, true); });
}

// Takes --kernels_out=, --kernels_commit=, --kernels_date= out of argv (the rest is Google
// Benchmark's).
struct options {
  std::string out, commit = "unknown", date, command;
};
options take_options(int& argc, char** argv) {
  options o;
  for (int i = 0; i < argc; ++i) o.command += (i ? " " : "") + std::string(argv[i]);
  int w = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](const char* key) -> const char* {
      const size_t n = std::strlen(key);
      return a.compare(0, n, key) == 0 ? argv[i] + n : nullptr;
    };
    if (const char* v = value("--kernels_out=")) o.out = v;
    else if (const char* v2 = value("--kernels_commit=")) o.commit = v2;
    else if (const char* v3 = value("--kernels_date=")) o.date = v3;
    else argv[w++] = argv[i];
  }
  argc = w;
  if (o.date.empty()) {
    char buf[16];
    const std::time_t now = std::time(nullptr);
    std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&now));
    o.date = buf;
  }
  return o;
}

std::string json_escape(const std::string& s) {
  std::string r;
  for (char c : s) {
    if (c == '"' || c == '\\') r += '\\';
    if (static_cast<unsigned char>(c) < 0x20) continue;
    r += c;
  }
  return r;
}

} // namespace

int main(int argc, char** argv) {
  options opt = take_options(argc, argv);
  int devices = 0;
  const cudaError_t de = cudaGetDeviceCount(&devices);
  if (de != cudaSuccess || devices == 0) {
    std::printf("kernels_bench: no CUDA device (%s); nothing measured\n",
                de != cudaSuccess ? cudaGetErrorString(de) : "cudaGetDeviceCount returned 0");
    return 0;
  }
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) return 1;

  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();

  const auto& t = medians();
  auto get = [&](const char* name) { auto it = t.find(name); return it == t.end() ? 0.0 : it->second; };
  std::vector<std::pair<std::string, double>> metrics;
  std::vector<std::string> missing;
  auto put = [&](const std::string& name, double v) {
    if (v > 0 && std::isfinite(v)) metrics.emplace_back(name, v);
    else missing.push_back(name);
  };
  auto ratio = [](double a, double b) { return a > 0 && b > 0 ? a / b : 0.0; };
  const double copy_bytes = 2.0 * (size_t(1) << 30);
  const double copy = ratio(copy_bytes, get("copy_d2d_1GiB")) * 1e-9;
  put("copy_gbps", copy);
  const double big = double(row_count) * row_len, small = double(short_rows) * short_len;
  for (const char* op : {"softmax", "layernorm"}) {
    for (const char* dt : {"fp32", "bf16"}) {
      const double elem = std::strcmp(dt, "fp32") == 0 ? 4 : 2;
      const std::string f = std::string(op) + "_fused_" + dt, u = std::string(op) + "_unfused_" + dt;
      const double gbps = ratio(2 * big * elem, get(f.c_str())) * 1e-9;
      const std::string prefix = std::string(op) + "_fused" + (elem == 4 ? "" : "_bf16");
      put(prefix + "_gbps", gbps);
      put(prefix + "_frac_of_copy", ratio(gbps, copy));
      put(prefix + "_speedup", ratio(get(u.c_str()), get(f.c_str())));
    }
  }
  const double gs = ratio(2 * small * 4, get("softmax_fused_fp32_rows1024")) * 1e-9;
  put("softmax_fused_rows1024_gbps", gs);
  put("softmax_fused_rows1024_frac_of_copy", ratio(gs, copy));
  put("softmax_fused_rows1024_speedup", ratio(get("softmax_unfused_fp32_rows1024"), get("softmax_fused_fp32_rows1024")));
  const double flops = 2.0 * gemm_size * gemm_size * gemm_size;
  auto tflops = [&](const char* name) { return ratio(flops, get(name)) * 1e-12; };
  // The headline is the faster of the two tensor-core kernels (wgmma where it was built).
  const char* best = tflops("gemm_bf16_wgmma") >= tflops("gemm_bf16_tensor_core") ? "gemm_bf16_wgmma" : "gemm_bf16_tensor_core";
  put("gemm_bf16_tflops", tflops(best));
  put("cublas_bf16_tflops", tflops("gemm_bf16_cublas"));
  put("gemm_bf16_frac_of_cublas", ratio(tflops(best), tflops("gemm_bf16_cublas")));
  put("gemm_bf16_wgmma_tflops", tflops("gemm_bf16_wgmma"));
  put("gemm_bf16_mma_sync_tflops", tflops("gemm_bf16_tensor_core"));
  put("gemm_bf16_mma_sync_frac_of_cublas", ratio(tflops("gemm_bf16_tensor_core"), tflops("gemm_bf16_cublas")));
  put("gemm_bf16_tiled_tflops", tflops("gemm_bf16_tiled"));
  for (const char* v : {"gemm_bf16_tc_v0_128x128x32_s4", "gemm_bf16_tc_v1_128x128x64_s3", "gemm_bf16_tc_v2_128x128x64_s3_pipe",
                        "gemm_bf16_tc_v3_128x256x64_s3", "gemm_bf16_tc_v4_128x128x32_s4_pipe", "gemm_bf16_tc_v5_first_version"})
    put(std::string(v).substr(0, 15) + "_tflops", tflops(v));
  put("gemm_bf16_naive_tflops", tflops("gemm_bf16_naive"));
  put("gemm_fp32_tflops", tflops("gemm_fp32_tiled"));
  put("cublas_fp32_tflops", tflops("gemm_fp32_cublas"));
  put("gemm_fp32_frac_of_cublas", ratio(tflops("gemm_fp32_tiled"), tflops("gemm_fp32_cublas")));
  put("gemm_fp32_naive_tflops", tflops("gemm_fp32_naive"));
  put("gemm_epilogue_unfused_tflops", tflops("gemm_bf16_wgmma_bias_gelu_unfused"));
  put("gemm_epilogue_fused_speedup",
      ratio(get("gemm_bf16_wgmma_bias_gelu_unfused"), get("gemm_bf16_wgmma_bias_gelu_fused")));
  put("block_fused_speedup", ratio(get("block_unfused"), get("block_fused")));
  put("block_unfused_kernels_per_layer", extras()["block_unfused_kernels_per_layer"]);
  put("block_fused_kernels_per_layer", extras()["block_fused_kernels_per_layer"]);

  std::printf("\n%-40s %12s\n", "metric", "value");
  for (const auto& m : metrics) std::printf("%-40s %12.4g\n", m.first.c_str(), m.second);
  for (const auto& m : missing) std::printf("%-40s %12s\n", m.c_str(), "MISSING");

  if (!opt.out.empty()) {
    FILE* f = std::fopen(opt.out.c_str(), "w");
    if (!f) {
      std::fprintf(stderr, "kernels_bench: cannot write %s: %s\n", opt.out.c_str(), std::strerror(errno));
      return 1;
    }
    std::fprintf(f, "{\n  \"topic\": \"kernels\",\n  \"device\": \"%s\",\n  \"date\": \"%s\",\n  \"commit\": \"%s\",\n",
                 json_escape(prop.name).c_str(), json_escape(opt.date).c_str(), json_escape(opt.commit).c_str());
    std::fprintf(f, "  \"command\": \"%s\",\n  \"metrics\": {\n", json_escape(opt.command).c_str());
    for (size_t i = 0; i < metrics.size(); ++i)
      std::fprintf(f, "    \"%s\": %.6g%s\n", metrics[i].first.c_str(), metrics[i].second, i + 1 < metrics.size() ? "," : "");
    std::fprintf(f, "  }\n}\n");
    std::fclose(f);
    std::printf("wrote %s\n", opt.out.c_str());
  }
  if (!missing.empty()) {
    std::fprintf(stderr, "kernels_bench: %zu metric(s) missing (a benchmark failed or was filtered out)\n", missing.size());
    return 1;
  }
  return 0;
}

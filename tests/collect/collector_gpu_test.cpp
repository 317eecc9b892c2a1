// The collector on a real GPU: exact counts for known programs, bytes exact, launches tied to
// the NVTX range open on the launching thread (graph and driver launches too), one clock for
// host and GPU, capture windows, a second subscriber refused cleanly, drops reported; a bounded
// collection folding ranges, marks and sync waits as they close, and its window edge rule.
#include <nvscope/collector.hpp>

#include "workloads.hpp"

#include <cuda_profiler_api.h>
#include <doctest/doctest.h>
#include "test_seed.hpp"
#include <nvscope/annotate.hpp>
#include <nvtx3/nvtx3.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace ns = nvscope;

namespace {

#define REQUIRE_OK(expr)            \
  do {                              \
    std::string e_ = (expr);        \
    INFO(e_);                       \
    REQUIRE(e_.empty());            \
  } while (0)

std::mt19937& rng() {
  static auto g = nvscope_test::announced_engine<std::mt19937>();
  return g;
}

// NVSCOPE_TEST_LAUNCH_SOURCE=driver|both|activity runs every case with that launch source.
ns::collector_options quiet_options() {
  ns::collector_options o;
  o.print_errors = true;
  if (const char* v = std::getenv("NVSCOPE_TEST_LAUNCH_SOURCE")) {
    const std::string s = v;
    if (s == "driver") o.launches = ns::launch_source::driver_callbacks;
    if (s == "both") o.launches = ns::launch_source::runtime_and_driver_callbacks;
    if (s == "activity") o.launches = ns::launch_source::api_activity;
  }
  return o;
}

std::size_t count_kernels(const ns::trace& t, const char* part) {
  return static_cast<std::size_t>(std::count_if(t.kernels.begin(), t.kernels.end(), [&](const ns::kernel_record& k) {
    return t.strings[k.name].find(part) != std::string_view::npos;
  }));
}

const ns::range_record* find_range(const ns::trace& t, const char* name) {
  for (const auto& r : t.ranges)
    if (t.strings[r.name] == name) return &r;
  return nullptr;
}

const ns::launch_record* find_launch(const ns::trace& t, std::uint32_t correlation) {
  for (const auto& l : t.launches)
    if (l.correlation == correlation) return &l;
  return nullptr;
}

// The ranges open on the launch's thread when the launch was made (innermost last).
std::vector<std::string> stack_at(const ns::trace& t, const ns::launch_record& l) {
  std::vector<std::string> out;
  for (const auto& r : t.ranges)
    if (!r.is_mark && r.thread == l.thread && r.start <= l.time && (r.end == 0 || l.time < r.end))
      out.emplace_back(t.strings[r.name]);
  return out;
}

struct device_buffers {
  float* x = nullptr;
  float* y = nullptr;
  int n = 0;
  explicit device_buffers(int count) : n(count) {
    REQUIRE(cudaMalloc(reinterpret_cast<void**>(&x), sizeof(float) * n) == cudaSuccess);
    REQUIRE(cudaMalloc(reinterpret_cast<void**>(&y), sizeof(float) * n) == cudaSuccess);
  }
  ~device_buffers() {
    cudaFree(x);
    cudaFree(y);
  }
};

} // namespace

TEST_CASE("exact kernel, copy, memset and range counts; bytes exact; results right") {
  std::uniform_int_distribution<int> un(1000, 200000);
  std::uniform_real_distribution<float> uf(-2.f, 2.f);
  const int n = un(rng());
  const float a = uf(rng());
  std::vector<float> hx(n), hy(n), out(n);
  for (auto& v : hx) v = uf(rng());
  for (auto& v : hy) v = uf(rng());
  device_buffers d(n);
  REQUIRE_OK(wl::fill(d.x, n, 0.f)); // warm-up outside the collection

  ns::collector c(quiet_options());
  REQUIRE(c.start());
  const int fills = 3 + static_cast<int>(rng()() % 5);
  const int axpys = 2 + static_cast<int>(rng()() % 4);
  {
    nvtx3::scoped_range outer{"outer"};
    REQUIRE(cudaMemcpy(d.x, hx.data(), sizeof(float) * n, cudaMemcpyHostToDevice) == cudaSuccess);
    REQUIRE(cudaMemcpy(d.y, hy.data(), sizeof(float) * n, cudaMemcpyHostToDevice) == cudaSuccess);
    {
      nvtx3::scoped_range inner{"inner"};
      for (int i = 0; i < axpys; ++i) REQUIRE_OK(wl::axpy(d.y, d.x, a, n));
    }
    REQUIRE(cudaMemcpy(out.data(), d.y, sizeof(float) * n, cudaMemcpyDeviceToHost) == cudaSuccess);
    REQUIRE(cudaMemset(d.x, 0, sizeof(float) * n) == cudaSuccess);
    for (int i = 0; i < fills; ++i) REQUIRE_OK(wl::fill(d.y, n, 1.f));
  }
  REQUIRE(c.stop());
  const ns::trace& t = c.result();

  for (int i = 0; i < n; ++i) {
    double ref = static_cast<double>(hy[i]);
    for (int k = 0; k < axpys; ++k) ref = static_cast<double>(a) * hx[i] + ref;
    REQUIRE(std::fabs(out[i] - ref) <= 1e-4 * (1.0 + std::fabs(ref)));
  }
  CHECK(count_kernels(t, "fill_kernel") == static_cast<std::size_t>(fills));
  CHECK(count_kernels(t, "axpy_kernel") == static_cast<std::size_t>(axpys));
  CHECK(t.kernels.size() == static_cast<std::size_t>(fills + axpys));
  REQUIRE(t.copies.size() == 3);
  std::size_t h2d = 0, d2h = 0;
  for (const auto& cp : t.copies) {
    CHECK(cp.bytes == sizeof(float) * static_cast<std::uint64_t>(n));
    h2d += cp.kind == ns::copy_kind::host_to_device;
    d2h += cp.kind == ns::copy_kind::device_to_host;
  }
  CHECK(h2d == 2);
  CHECK(d2h == 1);
  REQUIRE(t.memsets.size() == 1);
  CHECK(t.memsets[0].bytes == sizeof(float) * static_cast<std::uint64_t>(n));
  const auto* outer = find_range(t, "outer");
  const auto* inner = find_range(t, "inner");
  INFO("ranges recorded: " << t.ranges.size());
  REQUIRE(outer != nullptr);
  REQUIRE(inner != nullptr);
  CHECK(t.ranges.size() == 2);
  CHECK(outer->domain == 0);
  CHECK(inner->start >= outer->start); // nested (analysis computes the nesting itself)
  CHECK(inner->end <= outer->end);
  CHECK(inner->thread == outer->thread);
  CHECK(t.threads[outer->thread].os_id == nvscope::detail::os_thread_id());
  CHECK(t.lost.dropped_records == 0);
  CHECK(t.lost.incomplete_records == 0);

  // Every kernel, copy and memset has its launch, on this thread, inside the right range.
  for (const auto& k : t.kernels) {
    const auto* l = find_launch(t, k.correlation);
    REQUIRE(l != nullptr);
    CHECK(l->time <= k.start); // one clock: the launch precedes the kernel
    auto stack = stack_at(t, *l);
    const bool is_axpy = t.strings[k.name].find("axpy_kernel") != std::string_view::npos;
    CHECK(stack == (is_axpy ? std::vector<std::string>{"outer", "inner"} : std::vector<std::string>{"outer"}));
  }
  for (const auto& cp : t.copies) CHECK(find_launch(t, cp.correlation) != nullptr);
  CHECK(find_launch(t, t.memsets[0].correlation) != nullptr);
  CHECK(t.begin <= outer->start);
  CHECK(outer->end <= t.finish);
}

TEST_CASE("graph-launched kernels share their launch's correlation id and land in its range") {
  const int n = 4096, per_graph = 2 + static_cast<int>(rng()() % 5), launches = 2 + static_cast<int>(rng()() % 3);
  device_buffers d(n);
  cudaStream_t s = nullptr;
  REQUIRE(cudaStreamCreate(&s) == cudaSuccess);
  cudaGraphExec_t exec = nullptr;
  REQUIRE_OK(wl::make_axpy_graph(per_graph, d.y, d.x, 0.5f, n, s, &exec));
  ns::collector c(quiet_options());
  REQUIRE(c.start());
  {
    nvtx3::scoped_range r{"graph_step"};
    for (int i = 0; i < launches; ++i) REQUIRE(cudaGraphLaunch(exec, s) == cudaSuccess);
  }
  REQUIRE(cudaStreamSynchronize(s) == cudaSuccess);
  REQUIRE(c.stop());
  const auto& t = c.result();
  REQUIRE(t.kernels.size() == static_cast<std::size_t>(per_graph * launches));
  std::vector<std::uint32_t> corr;
  for (const auto& k : t.kernels) {
    CHECK(t.kernel_configs[k.config].graph != 0);
    corr.push_back(k.correlation);
    const auto* l = find_launch(t, k.correlation);
    REQUIRE(l != nullptr);
    CHECK(stack_at(t, *l) == std::vector<std::string>{"graph_step"});
  }
  std::sort(corr.begin(), corr.end());
  corr.erase(std::unique(corr.begin(), corr.end()), corr.end());
  CHECK(corr.size() == static_cast<std::size_t>(launches));
  cudaGraphExecDestroy(exec);
  cudaStreamDestroy(s);
}

TEST_CASE("driver-API launches and launches from several threads are tied to their thread's range") {
  const int n = 8192;
  device_buffers d(n);
  ns::collector c(quiet_options());
  REQUIRE(c.start());
  {
    nvtx3::scoped_range r{"driver_launch"};
    REQUIRE_OK(wl::axpy_driver(d.y, d.x, 2.f, n));
  }
  const int threads = 3;
  std::vector<std::thread> pool;
  std::vector<std::string> errors(threads);
  for (int i = 0; i < threads; ++i)
    pool.emplace_back([i, &errors, &d] {
      std::string name = "worker_" + std::to_string(i);
      nvtx3::scoped_range r{name.c_str()};
      for (int k = 0; k <= i; ++k) {
        std::string e = wl::fill(d.x, d.n, static_cast<float>(i));
        if (!e.empty()) errors[i] = e;
      }
      std::string e = wl::check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
      if (!e.empty()) errors[i] = e;
    });
  for (auto& th : pool) th.join();
  for (const auto& e : errors) REQUIRE(e.empty());
  REQUIRE(c.stop());
  const auto& t = c.result();
  REQUIRE(count_kernels(t, "axpy_kernel") == 1);
  REQUIRE(count_kernels(t, "fill_kernel") == 6);
  std::vector<int> per_worker(threads, 0);
  for (const auto& k : t.kernels) {
    const auto* l = find_launch(t, k.correlation);
    REQUIRE(l != nullptr);
    auto stack = stack_at(t, *l);
    REQUIRE(stack.size() == 1);
    if (t.strings[k.name].find("axpy_kernel") != std::string_view::npos) {
      CHECK(stack[0] == "driver_launch");
    } else {
      REQUIRE(stack[0].rfind("worker_", 0) == 0);
      ++per_worker[std::stoi(stack[0].substr(7))];
    }
  }
  for (int i = 0; i < threads; ++i) CHECK(per_worker[i] == i + 1);
  // The workers' synchronisations are theirs.
  std::size_t worker_syncs = 0;
  for (const auto& s : t.syncs)
    if (s.kind == ns::sync_kind::context && s.thread < t.threads.size() && t.threads[s.thread].os_id != 0) ++worker_syncs;
  CHECK(worker_syncs >= static_cast<std::size_t>(threads));
}

TEST_CASE("only_in_capture keeps exactly what was launched between capture start and stop") {
  auto o = quiet_options();
  o.only_in_capture = true;
  ns::collector c(o);
  REQUIRE(c.start());
  const int before = 2, inside = 3 + static_cast<int>(rng()() % 4), after = 4;
  for (int i = 0; i < before; ++i) REQUIRE_OK(wl::empty());
  nvscope::detail::notify_capture(true);
  for (int i = 0; i < inside; ++i) REQUIRE_OK(wl::empty());
  nvscope::detail::notify_capture(false);
  for (int i = 0; i < after; ++i) REQUIRE_OK(wl::empty());
  REQUIRE(c.stop());
  CHECK(c.result().kernels.size() == static_cast<std::size_t>(inside));
  CHECK(c.stats().records_outside_capture >= static_cast<std::uint64_t>(before + after));
}

TEST_CASE("only_in_capture follows the program's own cudaProfilerStart/Stop and cuProfilerStart/Stop") {
  auto o = quiet_options();
  o.only_in_capture = true;
  ns::collector c(o);
  REQUIRE(c.start());
  for (int i = 0; i < 2; ++i) REQUIRE_OK(wl::empty());
  REQUIRE(cudaProfilerStart() == cudaSuccess);
  for (int i = 0; i < 3; ++i) REQUIRE_OK(wl::empty());
  REQUIRE(cudaProfilerStop() == cudaSuccess);
  for (int i = 0; i < 2; ++i) REQUIRE_OK(wl::empty());
  REQUIRE_OK(wl::profiler_driver(true));
  REQUIRE_OK(wl::empty());
  REQUIRE_OK(wl::profiler_driver(false));
  REQUIRE_OK(wl::empty());
  REQUIRE(c.stop());
  CHECK(c.result().kernels.size() == 4);
  CHECK(c.result().capture_windows.size() == 2);
  CHECK(c.stats().records_outside_capture >= 5);
}

TEST_CASE("capture windows are recorded without only_in_capture; only_in_capture keeping nothing says so") {
  ns::collector a(quiet_options());
  REQUIRE(a.start());
  REQUIRE(cudaProfilerStart() == cudaSuccess);
  REQUIRE_OK(wl::empty());
  REQUIRE(cudaProfilerStop() == cudaSuccess);
  REQUIRE_OK(wl::empty());
  REQUIRE(a.stop());
  CHECK(a.result().kernels.size() == 2);
  REQUIRE(a.result().capture_windows.size() == 1);
  CHECK(a.result().capture_windows[0].begin < a.result().capture_windows[0].end);

  auto o = quiet_options();
  o.only_in_capture = true;
  o.print_errors = false;
  ns::collector b(o);
  REQUIRE(b.start());
  REQUIRE_OK(wl::empty());
  CHECK_FALSE(b.stop());
  CHECK(b.result().kernels.empty());
  REQUIRE(b.errors().size() == 1);
  CHECK(b.errors()[0].find("only_in_capture kept nothing: no capture window") == 0);
}

TEST_CASE("a second collector, or a collector after another CUPTI subscriber, is refused in one line") {
  ns::collector a(quiet_options());
  REQUIRE(a.start());
  auto o = quiet_options();
  o.print_errors = false;
  ns::collector b(o);
  CHECK_FALSE(b.start());
  REQUIRE(b.errors().size() == 1);
  CHECK(b.errors()[0] == "another nvscope collector is already running in this process");
  REQUIRE(a.stop());

  // Another tool's subscription first: the collector goes inert, the program runs on.
  CUpti_SubscriberHandle other = nullptr;
  auto noop = [](void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {};
  REQUIRE(nvscope::detail::cupti().cuptiSubscribe(&other, noop, nullptr) == CUPTI_SUCCESS);
  ns::collector c(o);
  CHECK_FALSE(c.start());
  REQUIRE(c.errors().size() == 1);
  CHECK(c.errors()[0].find("cuptiSubscribe failed: CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED (39)") == 0);
  CHECK(c.errors()[0].find("another profiler") != std::string::npos);
  CHECK_FALSE(c.active());
  REQUIRE_OK(wl::empty());
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  REQUIRE(nvscope::detail::cupti().cuptiUnsubscribe(other) == CUPTI_SUCCESS);
  // And it works again once the other tool is gone.
  ns::collector again(quiet_options());
  REQUIRE(again.start());
  REQUIRE_OK(wl::empty());
  REQUIRE(again.stop());
  CHECK(again.result().kernels.size() == 1);
}

TEST_CASE("tiny buffers: dropped records are counted and reported, never silent") {
  auto o = quiet_options();
  o.buffer_size = 1024;
  o.buffer_count = 1;
  o.kinds = ns::activity::kernels;
  // Launches from callbacks: api_activity would put RUNTIME/DRIVER records in the same buffers,
  // and their drops would count too.
  o.launches = ns::launch_source::driver_callbacks;
  o.print_errors = false;
  ns::collector c(o);
  REQUIRE(c.start());
  const int launched = 20000;
  for (int i = 0; i < launched; ++i) REQUIRE_OK(wl::empty());
  CHECK_FALSE(c.stop());
  const auto& t = c.result();
  INFO("kept " << t.kernels.size() << ", dropped " << t.lost.dropped_records << ", refused "
               << c.stats().buffers_refused);
  CHECK(t.lost.dropped_records > 0);
  CHECK(t.kernels.size() + t.lost.dropped_records == static_cast<std::size_t>(launched));
  REQUIRE_FALSE(c.errors().empty());
  CHECK(c.errors().back().find("activity records dropped") != std::string::npos);
}

TEST_CASE("every launch source ties runtime, driver, graph, copy and memset launches to their range") {
  const int n = 4096;
  device_buffers d(n);
  std::vector<float> h(n, 1.f);
  cudaStream_t s = nullptr;
  REQUIRE(cudaStreamCreate(&s) == cudaSuccess);
  cudaGraphExec_t exec = nullptr;
  REQUIRE_OK(wl::make_axpy_graph(2, d.y, d.x, 0.5f, n, s, &exec));
  const ns::launch_source sources[] = {ns::launch_source::driver_callbacks,
                                       ns::launch_source::runtime_and_driver_callbacks,
                                       ns::launch_source::api_activity};
  for (auto source : sources) {
    INFO("launch source " << static_cast<int>(source));
    auto o = quiet_options();
    o.launches = source;
    ns::collector c(o);
    REQUIRE(c.start());
    {
      nvtx3::scoped_range r{"runtime"};
      REQUIRE_OK(wl::fill(d.x, n, 1.f));
      REQUIRE(cudaMemcpy(d.y, h.data(), sizeof(float) * n, cudaMemcpyHostToDevice) == cudaSuccess);
      REQUIRE(cudaMemset(d.x, 0, sizeof(float) * n) == cudaSuccess);
    }
    {
      nvtx3::scoped_range r{"driver"};
      REQUIRE_OK(wl::axpy_driver(d.y, d.x, 2.f, n));
    }
    {
      nvtx3::scoped_range r{"graph"};
      REQUIRE(cudaGraphLaunch(exec, s) == cudaSuccess);
    }
    REQUIRE(cudaStreamSynchronize(s) == cudaSuccess);
    REQUIRE(c.stop());
    const auto& t = c.result();
    MESSAGE("source " << static_cast<int>(source) << ": runtime calls " << c.stats().launch_calls_runtime
                      << ", driver calls " << c.stats().launch_calls_driver);
    REQUIRE(t.kernels.size() == 4);
    REQUIRE(t.copies.size() == 1);
    REQUIRE(t.memsets.size() == 1);
    for (const auto& k : t.kernels) {
      const auto* l = find_launch(t, k.correlation);
      REQUIRE(l != nullptr);
      CHECK(l->time <= k.start);
      const std::string expect = t.kernel_configs[k.config].graph != 0 ? "graph"
                                 : t.strings[k.name].find("axpy_kernel") != std::string_view::npos ? "driver"
                                                                                                   : "runtime";
      CHECK(stack_at(t, *l) == std::vector<std::string>{expect});
    }
    const auto* lc = find_launch(t, t.copies[0].correlation);
    REQUIRE(lc != nullptr);
    CHECK(stack_at(t, *lc) == std::vector<std::string>{"runtime"});
    const auto* lm = find_launch(t, t.memsets[0].correlation);
    REQUIRE(lm != nullptr);
    CHECK(stack_at(t, *lm) == std::vector<std::string>{"runtime"});
    CHECK(t.lost.dropped_records == 0);
  }
  cudaGraphExecDestroy(exec);
  cudaStreamDestroy(s);
}

namespace {
struct early_domain {
  static constexpr const char* name = "nvscope_test_early";
};
} // namespace

TEST_CASE("names nvscope registered before start (call sites, formatted names, domains) are resolved") {
  REQUIRE(ns::prepare_collector());
  device_buffers d(4096);
  const int first = static_cast<int>(rng()() % 1000);
  auto body = [&](int i) {
    NVSCOPE_RANGE_IN(early_domain, "early_site");
    NVSCOPE_RANGE_F("early_%d", i);
    REQUIRE_OK(wl::fill(d.x, d.n, 1.f));
  };
  body(first);  // first use: domain created and names registered with no collector listening
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  ns::collector c(quiet_options());
  REQUIRE(c.start());
  body(first);
  body(first + 1);  // registered while the collector listens
  c.stop();
  const auto& t = c.result();
  auto count = [&](const char* name, const char* domain) {
    return std::count_if(t.ranges.begin(), t.ranges.end(), [&](const ns::range_record& r) {
      return t.strings[r.name] == name && t.strings[r.domain] == domain;
    });
  };
  CHECK(count("early_site", "nvscope_test_early") == 2);
  CHECK(count(("early_" + std::to_string(first)).c_str(), "") == 1);
  CHECK(count(("early_" + std::to_string(first + 1)).c_str(), "") == 1);
  for (const auto& r : t.ranges) CHECK(t.strings[r.name].find("<unknown") == std::string_view::npos);
}

TEST_CASE("syncs: exact counts, one per wait, each spanning the wait, under each sync source") {
  // ~20 ms at the H200's 1.98 GHz (longer at lower clocks): long enough that the host wait is
  // almost all of the kernel.
  const long long cycles = 40'000'000;
  cudaStream_t s = nullptr, s2 = nullptr;
  cudaEvent_t e = nullptr;
  REQUIRE(cudaStreamCreate(&s) == cudaSuccess);
  REQUIRE(cudaStreamCreate(&s2) == cudaSuccess);
  REQUIRE(cudaEventCreateWithFlags(&e, cudaEventDisableTiming) == cudaSuccess);
  REQUIRE_OK(wl::spin(1000, s)); // warm-up outside the collection
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  struct config {
    ns::sync_source source;
    bool record_launches;
  };
  const config configs[] = {{ns::sync_source::host_callbacks, true},
                            {ns::sync_source::activity, true},
                            {ns::sync_source::host_callbacks, false}};
  for (const auto& cfg : configs) {
    const bool host = cfg.source == ns::sync_source::host_callbacks;
    const std::string label = std::string(host ? "host_callbacks" : "activity") +
                              (cfg.record_launches ? ", record_launches" : ", no launch records");
    INFO("sync source " << label);
    auto o = quiet_options();
    o.syncs = cfg.source;
    o.record_launches = cfg.record_launches;
    ns::collector c(o);
    REQUIRE(c.start());
    REQUIRE_OK(wl::spin(cycles, s));
    REQUIRE(cudaStreamSynchronize(s) == cudaSuccess);
    REQUIRE_OK(wl::spin(cycles, s));
    REQUIRE(cudaEventRecord(e, s) == cudaSuccess);
    REQUIRE(cudaEventSynchronize(e) == cudaSuccess);
    REQUIRE(cudaStreamWaitEvent(s2, e, 0) == cudaSuccess);
    REQUIRE_OK(wl::empty(s2));
    REQUIRE_OK(wl::spin(cycles));
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    REQUIRE(c.stop());
    const auto& t = c.result();
    std::vector<const ns::kernel_record*> spins;
    const ns::kernel_record* empty = nullptr;
    for (const auto& k : t.kernels) {
      if (t.strings[k.name].find("spin_kernel") != std::string_view::npos) spins.push_back(&k);
      if (t.strings[k.name].find("empty_kernel") != std::string_view::npos) empty = &k;
    }
    REQUIRE(spins.size() == 3);
    REQUIRE(empty != nullptr);
    std::size_t count[5] = {};
    for (const auto& y : t.syncs) {
      MESSAGE("sync kind " << static_cast<int>(y.kind) << " stream " << y.stream << " " << (y.end - y.start)
                           << " ns, thread " << y.thread << ", correlation " << y.correlation);
      ++count[static_cast<int>(y.kind)];
    }
    MESSAGE("nested " << c.stats().sync_calls_nested << ", unpaired " << c.stats().sync_calls_unpaired);
    CHECK(t.syncs.size() == 4);
    CHECK(count[static_cast<int>(ns::sync_kind::stream)] == 1);
    CHECK(count[static_cast<int>(ns::sync_kind::event)] == 1);
    CHECK(count[static_cast<int>(ns::sync_kind::stream_wait_event)] == 1);
    CHECK(count[static_cast<int>(ns::sync_kind::context)] == 1);
    if (host) CHECK(c.stats().sync_calls_unpaired == 0);
    CHECK(t.launches.empty() == !cfg.record_launches);
    auto find_sync = [&](ns::sync_kind kind) -> const ns::sync_record* {
      for (const auto& y : t.syncs)
        if (y.kind == kind) return &y;
      return nullptr;
    };
    // Each blocking sync spans the spin kernel it waited for: it ends after the kernel (within
    // 5 % of the kernel, for the clocks) and lasts most of it (80 %: seen on the H200, the
    // driver's cuStreamSynchronize inside a runtime cudaStreamSynchronize began ~2 ms, 10 %,
    // after the kernel, by either source; the runtime call itself, 0.25 ms after).
    const ns::sync_kind blocking[] = {ns::sync_kind::stream, ns::sync_kind::event, ns::sync_kind::context};
    for (std::size_t i = 0; i < 3; ++i) {
      const auto* y = find_sync(blocking[i]);
      REQUIRE(y != nullptr);
      const ns::kernel_record& k = *spins[i];
      const double kernel_ns = static_cast<double>(k.end - k.start);
      INFO("kind " << static_cast<int>(blocking[i]) << ": sync [" << y->start << ", " << y->end << "], kernel ["
                   << k.start << ", " << k.end << "]");
      CHECK(kernel_ns > 1e6);
      CHECK(static_cast<double>(y->end - y->start) >= 0.8 * kernel_ns);
      CHECK(static_cast<double>(y->end) + 0.05 * kernel_ns >= static_cast<double>(k.end));
      CHECK(y->start <= k.end);
      REQUIRE(y->thread < t.threads.size());
      CHECK(t.threads[y->thread].os_id == ns::detail::os_thread_id());
    }
    const auto* ys = find_sync(ns::sync_kind::stream);
    const auto* yw = find_sync(ns::sync_kind::stream_wait_event);
    REQUIRE(ys != nullptr);
    REQUIRE(yw != nullptr);
    CHECK(yw->end >= yw->start);
    CHECK(t.threads[yw->thread].os_id == ns::detail::os_thread_id());
    if (host) { // the call returned before the kernel behind it ran; streams match the kernels'
      CHECK(yw->end <= empty->start + 1000000); // 1 ms slack for the clocks
      CHECK(ys->stream == spins[0]->stream);
      CHECK(yw->stream == empty->stream);
    }
    CHECK(t.lost.dropped_records == 0);
  }
  cudaEventDestroy(e);
  cudaStreamDestroy(s2);
  cudaStreamDestroy(s);
}

TEST_CASE("the first kernel after start() does not carry CUPTI's start-up wait, and the warm-up leaves no record") {
  device_buffers d(1024);
  REQUIRE_OK(wl::fill(d.x, d.n, 0.f)); // module loaded, context warm
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  ns::collector c(quiet_options());
  REQUIRE(c.start());
  const auto t0 = std::chrono::steady_clock::now();
  REQUIRE_OK(wl::fill(d.x, d.n, 1.f));
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  const double first_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  c.stop();
  INFO("first kernel after start, launch to sync: " << first_us << " us");
  CHECK(first_us < 1000.0); // ~3000 us when CUPTI's start-up wait lands on it; ~20 us otherwise
  const auto& t = c.result();
  CHECK(t.kernels.size() == 1);
  CHECK(t.memsets.empty());  // the warm-up memset is not the program's
  CHECK(c.stats().records_before_start >= 1);
}

namespace {

std::size_t count_ranges(const ns::trace& t, const char* name) {
  return static_cast<std::size_t>(
      std::count_if(t.ranges.begin(), t.ranges.end(), [&](const ns::range_record& r) { return t.strings[r.name] == name; }));
}

std::uint64_t folded_ranges(const ns::totals& f, const char* name) {
  const auto it = f.ranges.find(ns::range_key{"", name, true});
  return it == f.ranges.end() ? 0 : it->second.count();
}

} // namespace

TEST_CASE("bounded: ranges, marks and sync waits outside the kept steps are folded as they close; the kept steps keep theirs, named") {
  auto o = quiet_options();
  o.bounded = true;
  o.keep_steps = 2;
  o.keep_slowest = 0;
  ns::collector c(o);
  REQUIRE(c.start());
  constexpr int steps = 40;
  for (int s = 0; s < steps; ++s) {
    {
      nvtx3::scoped_range step{("step_" + std::to_string(s)).c_str()};
      {
        nvtx3::scoped_range forward{"forward"};
        REQUIRE_OK(wl::empty());
        REQUIRE_OK(wl::empty());
      }
      nvtx3::mark("loss");
      REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    }
    { nvtx3::scoped_range load{"data_load"}; } // between steps: folded at once
    if (s % 10 == 9) c.flush();                 // buffers delivered while recording
  }
  REQUIRE(c.stop());
  const auto& t = c.result();
  const ns::totals f = c.folded();
  CHECK(count_ranges(t, "step_38") == 1); // the last two steps, their ranges named
  CHECK(count_ranges(t, "step_39") == 1);
  CHECK(count_ranges(t, "step_37") == 0);
  CHECK(count_ranges(t, "forward") == 2);
  CHECK(count_ranges(t, "data_load") == 0);
  CHECK(t.kernels.size() == 4);
  CHECK(t.syncs.size() == 2);
  CHECK(folded_ranges(f, "data_load") == steps);
  CHECK(folded_ranges(f, "forward") == steps - 2);
  CHECK(folded_ranges(f, "step_5") == 0); // step ranges go to the steps' wall times
  CHECK(f.steps.count() == steps);
  CHECK(f.run.marks == steps - 2);
  CHECK(f.run.kernels == 2 * steps - 4);
  CHECK(f.run.syncs >= steps - 2);
  CHECK(c.stats().steps_summarised == steps);
}

TEST_CASE("bounded with only_in_capture: a range goes whole to the side it began on") {
  auto o = quiet_options();
  o.bounded = true;
  o.only_in_capture = true;
  o.keep_steps = 0;
  o.keep_slowest = 0;
  ns::collector c(o);
  REQUIRE(c.start());
  {
    nvtx3::scoped_range before{"before"}; // begun before the window: folded
    REQUIRE_OK(wl::empty());
    nvscope::detail::notify_capture(true);
    nvtx3::scoped_range inside{"inside"};
    REQUIRE_OK(wl::empty());
  }
  {
    nvtx3::scoped_range straddle{"straddle"}; // begun inside, ends after: kept whole
    REQUIRE_OK(wl::empty());
    nvscope::detail::notify_capture(false);
    REQUIRE_OK(wl::empty());
  }
  REQUIRE(c.stop());
  const auto& t = c.result();
  CHECK(count_ranges(t, "before") == 0);
  CHECK(count_ranges(t, "inside") == 1);
  REQUIRE(count_ranges(t, "straddle") == 1);
  REQUIRE(t.capture_windows.size() == 1);
  CHECK(find_range(t, "straddle")->end > t.capture_windows[0].end);
  CHECK(t.kernels.size() == 2); // launched inside the window
  CHECK(folded_ranges(c.folded(), "before") == 1);
}

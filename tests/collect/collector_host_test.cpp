// The collector's host-only parts: CUPTI records decoded into trace records (hand-made
// records, no device), NVTX events into ranges, the buffer pool, the launch log, joining
// launches, capture windows, and the one-line error messages.
#include <nvscope/collector.hpp>

#include <doctest/doctest.h>
#include "test_seed.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <random>
#include <set>
#include <thread>
#include <vector>

namespace ns = nvscope;
namespace nd = nvscope::detail;

namespace {

std::mt19937_64& rng() {
  static auto g = nvscope_test::announced_engine<std::mt19937_64>();
  return g;
}

// A CUPTI record of `kind`, zeroed as CUPTI leaves unused fields, that ran [start, end) for
// launch `corr`.
template <class Activity>
Activity gpu_activity(CUpti_ActivityKind kind, std::uint64_t start, std::uint64_t end, std::uint32_t corr) {
  Activity a;
  std::memset(&a, 0, sizeof a);
  a.kind = kind;
  a.start = start;
  a.end = end;
  a.correlationId = corr;
  return a;
}

// Where a kernel, copy or memset ran.
template <class Activity>
void place(Activity& a, std::uint32_t stream, std::uint32_t context, std::uint32_t device, std::uint32_t graph) {
  a.streamId = stream;
  a.contextId = context;
  a.deviceId = device;
  a.graphId = graph;
}

CUpti_ActivityKernel10 make_kernel(const char* name, std::uint64_t start, std::uint64_t end, std::uint32_t corr) {
  auto k = gpu_activity<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, start, end, corr);
  k.name = name;
  return k;
}

const CUpti_Activity* as_activity(const void* p) { return static_cast<const CUpti_Activity*>(p); }

} // namespace

TEST_CASE("kernel records decode with every field, demangled by default") {
  ns::trace t;
  nd::activity_decoder d(t, true);
  std::uniform_int_distribution<std::uint32_t> u(1, 1u << 20);
  const std::uint64_t start = u(rng());
  const std::uint64_t dur = u(rng());
  const std::uint32_t corr = u(rng());
  auto k = make_kernel("_Z6scale_PfS_fi", start, start + dur, corr);
  k.gridX = static_cast<std::int32_t>(u(rng()));
  k.gridY = 3;
  k.gridZ = 1;
  k.blockX = 256;
  k.blockY = 2;
  k.blockZ = 1;
  place(k, 13, 5, 1, 9);
  k.registersPerThread = 40;
  k.staticSharedMemory = 1024;
  k.dynamicSharedMemory = 2048;
  d.decode(as_activity(&k));
  REQUIRE(t.kernels.size() == 1);
  const auto r = t.kernels[0]; // a copy: more kernels are decoded below
  CHECK(r.start == start);
  CHECK(r.end == start + dur);
  CHECK(r.correlation == corr);
  CHECK(t.strings[r.name] == "scale_(float *, float *, float, int)"); // nsys's spelling, with libcufilt or not
  CHECK(r.stream == 13);
  const auto& c = t.kernel_configs[r.config];
  CHECK(r.config != 0);
  CHECK(c.grid[0] == static_cast<std::uint32_t>(k.gridX));
  CHECK(c.grid[1] == 3);
  CHECK(c.block[0] == 256);
  CHECK(c.block[1] == 2);
  CHECK(c.device == 1);
  CHECK(c.context == 5);
  CHECK(c.registers == 40);
  CHECK(c.shared_bytes == 3072);
  CHECK(c.graph == 9);
  CHECK(ns::device_of(t, r) == 1);

  // kernels launched alike share one configuration; any field apart makes another
  d.decode(as_activity(&k));
  k.blockZ = 2;
  d.decode(as_activity(&k));
  k.blockZ = 1;
  k.graphId = 10;
  d.decode(as_activity(&k));
  k.graphId = 9;
  d.decode(as_activity(&k));
  REQUIRE(t.kernels.size() == 5);
  CHECK(t.kernels[1].config == r.config);
  CHECK(t.kernels[4].config == r.config);
  CHECK(t.kernels[2].config != r.config);
  CHECK(t.kernels[3].config != r.config);
  CHECK(t.kernels[2].config != t.kernels[3].config);
  CHECK(t.kernel_configs[t.kernels[2].config].block[2] == 2);
  CHECK(t.kernel_configs[t.kernels[3].config].graph == 10);
  CHECK(t.kernel_configs.size() == 4); // the all-zero one and three

  ns::trace t2;
  nd::activity_decoder mangled(t2, false);
  mangled.decode(as_activity(&k));
  CHECK(t2.strings[t2.kernels[0].name] == "_Z6scale_PfS_fi");
}

TEST_CASE("the configuration table: one id a distinct configuration, past every growth; unknown ids read as zeros; copies keep it") {
  NVSCOPE_SEEDED_RNG(std::mt19937_64, g);
  ns::config_table table;
  REQUIRE(table.size() == 1);
  CHECK(table.intern(ns::kernel_config{}) == 0); // the all-zero one is always id 0
  // a graph instantiated anew each step: every kernel's configuration differs in its graph id
  std::vector<ns::kernel_config> made;
  std::vector<std::uint32_t> ids;
  for (std::uint32_t i = 0; i < 50000; ++i) {
    ns::kernel_config c;
    c.grid[0] = 1 + static_cast<std::uint32_t>(g() % 64), c.block[0] = 128, c.registers = 32;
    c.graph = 1 + static_cast<std::uint32_t>(g() % 20000); // repeats, out of order
    made.push_back(c);
    ids.push_back(table.intern(c));
  }
  std::vector<ns::kernel_config> distinct = made;
  const auto key = [](const ns::kernel_config& c) { return std::make_pair(c.graph, c.grid[0]); };
  std::sort(distinct.begin(), distinct.end(), [&](const auto& a, const auto& b) { return key(a) < key(b); });
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  CHECK(table.size() == distinct.size() + 1);
  const ns::config_table copy = table;
  for (std::size_t i = 0; i < made.size(); ++i) {
    REQUIRE(table[ids[i]] == made[i]);
    CHECK(copy[ids[i]] == made[i]);
    CHECK(table.intern(made[i]) == ids[i]); // found again, not added
  }
  CHECK(table.size() == distinct.size() + 1);
  CHECK(table[static_cast<std::uint32_t>(table.size())] == ns::kernel_config{});
  CHECK(table[0xffffffffu] == ns::kernel_config{});
  CHECK(table.memory_bytes() >= table.size() * sizeof(ns::kernel_config));
  // vectors that double: at most twice the configurations, and fewer than 4 slots each (1,024 at least)
  CHECK(table.memory_bytes() < table.size() * (2 * sizeof(ns::kernel_config) + 4 * sizeof(std::uint32_t)) + 8192);
}

TEST_CASE("records with no end are counted as incomplete, never reported") {
  ns::trace t;
  nd::activity_decoder d(t, true);
  auto a = make_kernel("k", 100, 0, 1);
  auto b = make_kernel("k", 0, 50, 2);
  auto c = make_kernel("k", 100, 90, 3);
  auto ok = make_kernel("k", 100, 200, 4);
  for (auto* k : {&a, &b, &c, &ok}) d.decode(as_activity(k));
  CHECK(t.kernels.size() == 1);
  CHECK(d.counts().incomplete == 3);
}

TEST_CASE("kernel names are cached by pointer yet stay right when a pointer is reused") {
  ns::trace t;
  nd::activity_decoder d(t, true);
  char buf[32];
  std::strcpy(buf, "_Z3fooi");
  auto k1 = make_kernel(buf, 10, 20, 1);
  d.decode(as_activity(&k1));
  std::strcpy(buf, "_Z3bari");
  auto k2 = make_kernel(buf, 30, 40, 2);
  d.decode(as_activity(&k2));
  REQUIRE(t.kernels.size() == 2);
  CHECK(t.strings[t.kernels[0].name] == "foo(int)");
  CHECK(t.strings[t.kernels[1].name] == "bar(int)");
}

TEST_CASE("copies, memsets and syncs keep bytes, direction, memory kinds, stream, device and graph exactly") {
  ns::trace t;
  nd::activity_decoder d(t, true);
  std::uniform_int_distribution<std::uint64_t> u(1, 1ull << 40);
  auto m = gpu_activity<CUpti_ActivityMemcpy6>(CUPTI_ACTIVITY_KIND_MEMCPY, 1000, 2000, 77);
  m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
  m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
  m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  m.bytes = u(rng());
  place(m, 21, 4, 2, 6);
  d.decode(as_activity(&m));
  auto s = gpu_activity<CUpti_ActivityMemset4>(CUPTI_ACTIVITY_KIND_MEMSET, 3000, 3100, 78);
  s.bytes = u(rng());
  s.value = 0xab;
  s.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  place(s, 22, 5, 3, 7);
  d.decode(as_activity(&s));
  auto w = gpu_activity<CUpti_ActivitySynchronization2>(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, 4000, 4500, 79);
  w.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
  w.streamId = 23;
  w.contextId = 6;
  d.decode(as_activity(&w));
  REQUIRE(t.copies.size() == 1);
  const std::uint64_t copy_bytes = m.bytes;
  CHECK(t.copies[0].bytes == copy_bytes);
  CHECK(t.copies[0].kind == ns::copy_kind::host_to_device);
  CHECK(t.copies[0].src == ns::memory_kind::pinned);
  CHECK(t.copies[0].dst == ns::memory_kind::device);
  CHECK(t.copies[0].correlation == 77);
  REQUIRE(t.memsets.size() == 1);
  const std::uint64_t set_bytes = s.bytes;
  CHECK(t.memsets[0].bytes == set_bytes);
  CHECK(t.memsets[0].value == 0xab);
  CHECK(t.memsets[0].memory == ns::memory_kind::device);
  // Where and when: the fields every GPU record shares.
  const auto& c = t.copies[0];
  CHECK((c.start == 1000 && c.end == 2000 && c.stream == 21 && c.context == 4 && c.device == 2 && c.graph == 6));
  const auto& e = t.memsets[0];
  CHECK((e.start == 3000 && e.end == 3100 && e.correlation == 78 && e.stream == 22 && e.context == 5 && e.device == 3 && e.graph == 7));
  REQUIRE(t.syncs.size() == 1);
  const auto& y = t.syncs[0];
  CHECK((y.start == 4000 && y.end == 4500 && y.correlation == 79 && y.stream == 23 && y.context == 6));
  CHECK(y.kind == ns::sync_kind::stream);
}

TEST_CASE("NVTX events become ranges: push/pop per thread and domain, start/end across threads, marks; attributes kept") {
  ns::trace t;
  std::vector<nd::nvtx_event> events;
  auto ev = [&](nd::nvtx_event_kind k, std::uint64_t time, std::uint64_t thread, std::uint64_t domain,
                std::uint64_t key, const char* name) -> nd::nvtx_event& {
    nd::nvtx_event e;
    e.kind = k;
    e.time = time;
    e.os_thread = thread;
    e.domain = domain;
    e.key = key;
    if (name != nullptr) e.name = name;
    events.push_back(e);
    return events.back();
  };
  using k = nd::nvtx_event_kind;
  ev(k::domain_created, 1, 7, 0x50, 0, "mylib");
  ev(k::push, 100, 7, 0, 0, "outer");
  auto& inner = ev(k::push, 150, 7, 0x50, 0, "inner");
  inner.color = 0xff00ff00u;
  inner.value.kind = ns::payload_kind::int64;
  inner.value.value.i = -7;
  ev(k::start, 160, 7, 0, 42, "crossing");
  ev(k::pop, 180, 8, 0x50, 0, nullptr);  // another thread's pop: matches nothing
  ev(k::pop, 185, 7, 0x50, 0, nullptr);  // closes inner (its own domain's stack)
  ev(k::mark, 190, 7, 0, 0, "tick");
  ev(k::end, 250, 8, 0, 42, nullptr);    // start/end ranges may end on another thread
  ev(k::pop, 300, 7, 0, 0, nullptr);
  ev(k::push, 400, 7, 0, 0, "never_closed");
  ev(k::end, 500, 7, 0, 99, nullptr);    // no such start
  auto index = [&](std::uint64_t os) -> std::uint32_t {
    for (std::uint32_t i = 0; i < t.threads.size(); ++i)
      if (t.threads[i].os_id == os) return i;
    t.threads.push_back({os, 0});
    return static_cast<std::uint32_t>(t.threads.size() - 1);
  };
  const auto unmatched = nd::nvtx_events_to_ranges(events, t, [](std::uint64_t x) { return x; }, index);
  CHECK(unmatched == 2);
  nd::finish_trace(t, {}, nullptr);
  REQUIRE(t.ranges.size() == 5);
  CHECK(t.strings[t.ranges[0].name] == "outer");
  CHECK(t.ranges[0].domain == 0);
  CHECK(t.ranges[0].end == 300);
  CHECK(t.strings[t.ranges[1].name] == "inner");
  CHECK(t.strings[t.ranges[1].domain] == "mylib");
  CHECK(t.ranges[1].end == 185);
  CHECK(t.ranges[1].color == 0xff00ff00u);
  CHECK(t.ranges[1].payload.kind == ns::payload_kind::int64);
  CHECK(t.ranges[1].payload.value.i == -7);
  CHECK(t.strings[t.ranges[2].name] == "crossing");
  CHECK_FALSE(t.ranges[2].is_push_pop);
  CHECK(t.ranges[2].end == 250);
  CHECK(t.threads[t.ranges[2].thread].os_id == 7);
  CHECK(t.threads[t.ranges[2].closing_thread()].os_id == 8); // nsys's same-thread rule reads this
  CHECK(t.ranges[0].closing_thread() == t.ranges[0].thread);
  CHECK(t.ranges[3].is_mark);
  CHECK(t.ranges[3].end == 190);
  CHECK(t.ranges[4].end == 0);
  CHECK(t.lost.unclosed_ranges == 1);
  CHECK(t.threads[t.ranges[0].thread].os_id == 7);
}

TEST_CASE("launches join GPU records by correlation; duplicates keep the earliest; capture windows filter") {
  ns::trace t;
  std::uniform_int_distribution<std::uint32_t> u(10, 1000);
  const int n = 50;
  std::vector<nd::timed_host_call> calls;
  for (int i = 0; i < n; ++i) {
    const std::uint64_t launch = 10000ull * static_cast<std::uint64_t>(i + 1);
    ns::kernel_record k;
    k.correlation = static_cast<std::uint32_t>(i + 1);
    k.start = launch + u(rng());
    k.end = k.start + u(rng());
    t.kernels.push_back(k);
    calls.push_back({launch, k.correlation, 0, false});
    calls.push_back({launch + 5, k.correlation, 0, false}); // the driver call inside the runtime one
  }
  calls.push_back({1, 999999, 0, false}); // a launch that produced nothing we kept
  std::shuffle(t.kernels.begin(), t.kernels.end(), rng());
  std::shuffle(calls.begin(), calls.end(), rng());
  // Keep the launches in [100000, 300000): i + 1 in [10, 29].
  std::vector<ns::time_window> windows{{100000, 300000}};
  auto fc = nd::finish_trace(t, calls, &windows);
  CHECK(t.kernels.size() == 20);
  CHECK(fc.records_outside_capture == n - 20);
  REQUIRE(t.launches.size() == 20);
  for (std::size_t i = 0; i < t.kernels.size(); ++i) {
    CHECK(t.launches[i].correlation == t.kernels[i].correlation);
    CHECK(t.launches[i].time == 10000ull * t.kernels[i].correlation);
    if (i > 0) CHECK(t.kernels[i - 1].start <= t.kernels[i].start);
  }
}

TEST_CASE("the buffer pool is bounded, aligned and counts refusals and foreign releases") {
  nd::buffer_pool pool;
  std::uniform_int_distribution<std::size_t> u(1, 9);
  const std::size_t count = u(rng());
  REQUIRE(pool.reserve(4000 + u(rng()), count));
  CHECK(pool.buffer_size() % nd::buffer_pool::alignment == 0);
  std::vector<std::uint8_t*> out;
  for (std::size_t i = 0; i < count; ++i) {
    auto* p = pool.acquire();
    REQUIRE(p != nullptr);
    CHECK(reinterpret_cast<std::uintptr_t>(p) % nd::buffer_pool::alignment == 0);
    out.push_back(p);
  }
  CHECK(pool.acquire() == nullptr);
  CHECK(pool.refusals() == 1);
  CHECK(pool.high_water() == count);
  std::uint8_t stranger[16];
  pool.release(stranger);
  pool.release(out[0]);
  pool.release(out[0]);
  CHECK(pool.foreign_releases() == 2);
  CHECK(pool.in_use() == count - 1);
  CHECK(pool.acquire() == out[0]);
  for (auto* p : out) pool.release(p);
  CHECK(pool.in_use() == 0);
  pool.release_all();
  CHECK(pool.capacity() == 0);
}

TEST_CASE("the launch log keeps every call of every thread, in order, across chunks") {
  nd::drain_host_calls([](std::uint64_t, const nd::host_call&) {});
  const int threads = 4;
  const std::uint32_t per_thread = nd::host_call_chunk::capacity * 2 + 123;
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([t, per_thread] {
      for (std::uint32_t i = 0; i < per_thread; ++i)
        REQUIRE(nd::record_host_call(i, static_cast<std::uint32_t>(t) * 1000000u + i, nd::host_call_launch));
    });
  // Drain while they write, then once more after.
  std::vector<std::pair<std::uint64_t, nd::host_call>> seen;
  auto sink = [&](std::uint64_t os, const nd::host_call& c) { seen.emplace_back(os, c); };
  nd::drain_host_calls(sink);
  for (auto& th : pool) th.join();
  CHECK(nd::drain_host_calls(sink) == 0);
  REQUIRE(seen.size() == static_cast<std::size_t>(threads) * per_thread);
  std::set<std::uint64_t> os_ids;
  std::vector<std::uint32_t> next(threads, 0);
  for (const auto& s : seen) {
    const std::uint32_t t = s.second.correlation / 1000000u;
    REQUIRE(t < static_cast<std::uint32_t>(threads));
    CHECK(s.second.correlation % 1000000u == next[t]);
    CHECK(s.second.time == next[t]);
    ++next[t];
    os_ids.insert(s.first);
  }
  CHECK(os_ids.size() == static_cast<std::size_t>(threads));
}

TEST_CASE("clock calibration interpolates the offset between start and stop") {
  nd::clock_calibration c;
  std::uint64_t fake = 0;
  nd::clock_calibration::measure([&] { return nd::steady_ns() + 5000; }, c.host0, c.offset0);
  CHECK(c.offset0 >= 4000);
  CHECK(c.offset0 <= 5000 + 100000);
  (void)fake;
  c.host0 = 1000000;
  c.offset0 = 100;
  c.host1 = 2000000;
  c.offset1 = 300;
  c.has_end = true;
  CHECK(c.to_trace(1000000) == 1000100);
  CHECK(c.to_trace(1500000) == 1500200);
  CHECK(c.to_trace(2000000) == 2000300);
}

TEST_CASE("CUPTI failures read as one line naming the call, with what it means") {
  auto s = nd::cupti_check(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED, "cuptiSubscribe", "a/b/collector.hpp", 12);
  CHECK_FALSE(static_cast<bool>(s));
  CHECK(s.code == 39);
  CHECK(s.message.find("cuptiSubscribe failed: CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED (39)") == 0);
  CHECK(s.message.find("another profiler") != std::string::npos);
  CHECK(s.message.find("[collector.hpp:12]") != std::string::npos);
  CHECK(s.message.find('\n') == std::string::npos);
  CHECK(nd::cupti_error_message("cuptiActivityEnable", CUPTI_ERROR_INSUFFICIENT_PRIVILEGES, nullptr, 0)
            .find("no permission") != std::string::npos);
  CHECK(static_cast<bool>(nd::cupti_check(CUPTI_SUCCESS, "x", nullptr, 0)));
  // Under `nvscope run` the other client is nvscope's own injection: say that, not "nsys".
  REQUIRE(::setenv("CUDA_INJECTION64_PATH", "/opt/nvscope/lib/libnvscope_inject.so", 1) == 0);
  const auto run = nd::cupti_error_message("cuptiSubscribe", CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED, nullptr, 0);
  ::unsetenv("CUDA_INJECTION64_PATH");
  CHECK(run.find("`nvscope run` already records this process") != std::string::npos);
  CHECK(run.find("another profiler") == std::string::npos);
}

TEST_CASE("activity kinds: one list, CONCURRENT_KERNEL and never KERNEL, each kind once") {
  std::set<int> kinds;
  for (const auto& e : nd::activity_kind_list::entries) {
    CHECK(e.kind != CUPTI_ACTIVITY_KIND_KERNEL);
    CHECK(kinds.insert(static_cast<int>(e.kind)).second);
  }
  CHECK(kinds.count(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) == 1);
}

TEST_CASE("registered range names resolve: from registrations seen, from names known before, else marked unknown") {
  ns::trace t;
  t.threads.push_back({77, 0});
  ns::nvtx_registrations known;
  known.domains[0x10] = "early_domain";  // created before the collector listened
  known.strings[0x100] = "early_name";   // registered before the collector listened
  std::vector<nd::nvtx_event> events;
  auto ev = [&](nd::nvtx_event_kind k, std::uint64_t time, std::uint64_t domain, std::uint64_t key,
                std::uint64_t registered, const char* name) {
    nd::nvtx_event e;
    e.kind = k;
    e.time = time;
    e.os_thread = 77;
    e.domain = domain;
    e.key = key;
    e.registered = registered;
    if (name != nullptr) e.name = name;
    events.push_back(e);
  };
  ev(nd::nvtx_event_kind::string_registered, 1, 0x20, 0x200, 0, "late_name");
  ev(nd::nvtx_event_kind::domain_created, 2, 0x20, 0, 0, "late_domain");
  ev(nd::nvtx_event_kind::push, 10, 0x10, 0, 0x100, nullptr);  // known before start
  ev(nd::nvtx_event_kind::push, 20, 0x20, 0, 0x200, nullptr);  // registered while listening
  ev(nd::nvtx_event_kind::pop, 30, 0x20, 0, 0, nullptr);
  ev(nd::nvtx_event_kind::push, 40, 0x10, 0, 0x999, nullptr);  // never seen
  ev(nd::nvtx_event_kind::pop, 50, 0x10, 0, 0, nullptr);
  ev(nd::nvtx_event_kind::pop, 60, 0x10, 0, 0, nullptr);
  const auto unmatched = nd::nvtx_events_to_ranges(
      events, t, [](std::uint64_t x) { return x; }, [](std::uint64_t) { return 0u; }, known);
  CHECK(unmatched == 0);
  REQUIRE(t.ranges.size() == 3);
  CHECK(t.strings[t.ranges[0].name] == "early_name");
  CHECK(t.strings[t.ranges[0].domain] == "early_domain");
  CHECK(t.ranges[0].end == 60);
  CHECK(t.strings[t.ranges[1].name] == "late_name");
  CHECK(t.strings[t.ranges[1].domain] == "late_domain");
  CHECK(t.ranges[1].end == 30);
  CHECK(t.strings[t.ranges[2].name] == "<unknown registered string>");
  CHECK(t.ranges[2].end == 50);
}

namespace {
// The entry and exit of one sync call as the callbacks log them.
nd::sync_call sync_enter(std::uint64_t t, std::uint32_t corr, std::uint32_t thread, ns::sync_kind kind, bool driver = false) {
  return {t, corr, thread,
          nd::host_call_sync | nd::host_call_sync_span | (driver ? nd::host_call_driver : 0u) |
              (static_cast<std::uint32_t>(kind) << nd::host_call_kind_shift)};
}
nd::sync_call sync_exit(std::uint64_t t, std::uint32_t corr, std::uint32_t thread, int stream = -1) {
  std::uint32_t f = nd::host_call_sync | nd::host_call_sync_span | nd::host_call_exit;
  if (stream >= 0) f |= nd::host_call_stream_bits(static_cast<std::uint32_t>(stream));
  return {t, corr, thread, f};
}
} // namespace

TEST_CASE("sync call names map to their kind, driver flag and per-thread stream; launches stay launches") {
  auto flags = [](const char* name, bool driver, bool spans = true) {
    return static_cast<std::uint32_t>(nd::host_call_flags_for(name, driver, true, true, spans));
  };
  auto kind = [](std::uint32_t f) { return static_cast<ns::sync_kind>((f & nd::host_call_kind_mask) >> nd::host_call_kind_shift); };
  struct expect {
    const char* name;
    ns::sync_kind kind;
  };
  const expect all[] = {{"cudaDeviceSynchronize_v3020", ns::sync_kind::context}, {"cuCtxSynchronize", ns::sync_kind::context},
                        {"cudaStreamSynchronize_v3020", ns::sync_kind::stream},   {"cuStreamSynchronize", ns::sync_kind::stream},
                        {"cudaEventSynchronize_v3020", ns::sync_kind::event},     {"cuEventSynchronize", ns::sync_kind::event},
                        {"cudaStreamWaitEvent_v3020", ns::sync_kind::stream_wait_event},
                        {"cuStreamWaitEvent", ns::sync_kind::stream_wait_event}};
  for (const auto& e : all) {
    const bool driver = e.name[2] != 'd';
    const std::uint32_t f = flags(e.name, driver);
    INFO(e.name);
    CHECK((f & nd::host_call_sync) != 0);
    CHECK((f & nd::host_call_launch) == 0);
    CHECK((f & nd::host_call_sync_span) != 0);
    CHECK(((f & nd::host_call_driver) != 0) == driver);
    CHECK((f & nd::host_call_per_thread) == 0);
    CHECK(kind(f) == e.kind);
    CHECK((flags(e.name, driver, false) & nd::host_call_sync_span) == 0); // sync_source::activity
  }
  CHECK((flags("cuStreamSynchronize_ptsz", true) & nd::host_call_per_thread) != 0);
  CHECK(kind(flags("cudaStreamWaitEvent_ptsz_v7000", false)) == ns::sync_kind::stream_wait_event);
  CHECK(flags("cuLaunchKernel", true) == (nd::host_call_launch | nd::host_call_driver));
  CHECK(flags("cudaMemcpyAsync_v3020", false) == nd::host_call_launch);
  CHECK(flags("cuStreamQuery", true) == 0);
  CHECK(nd::host_call_flags_for("cuCtxSynchronize", true, true, false, true) == 0); // syncs not wanted
  CHECK(nd::host_call_flags_for("cuLaunchKernel", true, false, true, true) == 0);   // launches not wanted
  // Every flag of a callback id fits the one-byte tables, below the per-call bits.
  CHECK(flags("cudaStreamWaitEvent_ptsz_v7000", false) < nd::host_call_exit);
  // Stream ids travel in an exit's flags; ids too large for the bits left read as unknown.
  for (std::uint32_t id : {0u, 7u, 12345u, (1u << 23) - 2}) {
    const std::uint32_t f = nd::host_call_exit | nd::host_call_stream_bits(id);
    CHECK(nd::host_call_has_stream(f));
    CHECK(nd::host_call_stream(f) == id);
  }
  CHECK(!nd::host_call_has_stream(nd::host_call_exit | nd::host_call_stream_bits((1u << 23) - 1)));
  CHECK(!nd::host_call_has_stream(nd::host_call_exit));
}

TEST_CASE("sync entries and exits pair into one record per wait; a runtime sync and its driver call are one") {
  std::vector<nd::sync_call> calls;
  // thread 0: cudaStreamSynchronize (runtime) around cuStreamSynchronize (driver), same correlation
  calls.push_back(sync_enter(100, 5, 0, ns::sync_kind::stream));
  calls.push_back(sync_enter(110, 5, 0, ns::sync_kind::stream, true));
  // thread 1 interleaved: a driver-only cuCtxSynchronize
  calls.push_back(sync_enter(120, 6, 1, ns::sync_kind::context, true));
  calls.push_back(sync_exit(900, 5, 0, 9)); // the driver exit knows the stream
  calls.push_back(sync_exit(905, 5, 0));    // the runtime exit does not
  calls.push_back(sync_exit(950, 6, 1));
  // thread 0: cudaEventSynchronize whose driver call has another correlation id
  calls.push_back(sync_enter(1000, 7, 0, ns::sync_kind::event));
  calls.push_back(sync_enter(1001, 8, 0, ns::sync_kind::event, true));
  calls.push_back(sync_exit(1500, 8, 0));
  calls.push_back(sync_exit(1502, 7, 0));
  // thread 0: a stream wait with only a driver callback, stream known
  calls.push_back(sync_enter(2000, 9, 0, ns::sync_kind::stream_wait_event, true));
  calls.push_back(sync_exit(2003, 9, 0, 0));
  // thread 2: an exit whose entry came before start, then a sync still waiting at stop
  calls.push_back(sync_exit(50, 1, 2));
  calls.push_back(sync_enter(3000, 10, 2, ns::sync_kind::context));
  nd::sync_pairing_counts counts;
  auto syncs = nd::syncs_from_host_calls(calls, &counts);
  REQUIRE(syncs.size() == 4);
  CHECK(counts.nested == 2);
  CHECK(counts.unpaired == 2);
  CHECK(syncs[0].start == 100);
  CHECK(syncs[0].end == 905);
  CHECK(syncs[0].correlation == 5);
  CHECK(syncs[0].thread == 0);
  CHECK(syncs[0].kind == ns::sync_kind::stream);
  CHECK(syncs[0].stream == 9);
  CHECK(syncs[1].start == 120);
  CHECK(syncs[1].end == 950);
  CHECK(syncs[1].thread == 1);
  CHECK(syncs[1].kind == ns::sync_kind::context);
  CHECK(syncs[1].stream == 0);
  CHECK(syncs[2].start == 1000);
  CHECK(syncs[2].end == 1502);
  CHECK(syncs[2].correlation == 7);
  CHECK(syncs[2].kind == ns::sync_kind::event);
  CHECK(syncs[3].kind == ns::sync_kind::stream_wait_event);
  CHECK(syncs[3].stream == 0);
  CHECK(syncs[3].end == 2003);
}

TEST_CASE("sync pairing: many threads, random interleaving, each thread's order kept; one record per wait") {
  std::uniform_int_distribution<int> coin(0, 1);
  const std::uint32_t threads = 6;
  const int per_thread = 200;
  std::vector<std::vector<nd::sync_call>> logs(threads);
  std::uint32_t corr = 1;
  for (std::uint32_t th = 0; th < threads; ++th) {
    std::uint64_t t = 1000 * th;
    for (int i = 0; i < per_thread; ++i) {
      const bool nested = coin(rng()) != 0; // runtime call around the driver call
      const std::uint32_t c = corr++;
      logs[th].push_back(sync_enter(t++, c, th, ns::sync_kind::context));
      if (nested) logs[th].push_back(sync_enter(t++, c, th, ns::sync_kind::context, true));
      t += 10;
      if (nested) logs[th].push_back(sync_exit(t++, c, th));
      logs[th].push_back(sync_exit(t++, c, th));
    }
  }
  // Merge the logs in a random interleaving that keeps each thread's order.
  std::vector<nd::sync_call> calls;
  std::vector<std::size_t> pos(threads, 0);
  std::uniform_int_distribution<std::uint32_t> pick(0, threads - 1);
  for (;;) {
    bool left = false;
    for (std::uint32_t th = 0; th < threads; ++th) left |= pos[th] < logs[th].size();
    if (!left) break;
    const std::uint32_t th = pick(rng());
    if (pos[th] < logs[th].size()) calls.push_back(logs[th][pos[th]++]);
  }
  nd::sync_pairing_counts counts;
  auto syncs = nd::syncs_from_host_calls(calls, &counts);
  CHECK(syncs.size() == threads * per_thread);
  CHECK(counts.unpaired == 0);
  std::set<std::uint32_t> corrs;
  for (const auto& s : syncs) {
    CHECK(s.end - s.start >= 11);
    corrs.insert(s.correlation);
  }
  CHECK(corrs.size() == syncs.size());
  for (std::size_t i = 1; i < syncs.size(); ++i) CHECK(syncs[i - 1].start <= syncs[i].start);
}

TEST_CASE("capture windows: profiler starts and stops by anyone, repeated calls collapse, guards merge in") {
  using sw = nd::profiler_switch;
  const ns::timestamp_ns begin = 100, finish = 1000;
  // A runtime start and the driver start inside it; a stop and its driver stop; a second window left open.
  auto w = nd::capture_windows_from({{200, true}, {201, true}, {300, false}, {301, false}, {800, true}}, {}, begin, finish);
  REQUIRE(w.size() == 2);
  CHECK(w[0].begin == 200);
  CHECK(w[0].end == 300);
  CHECK(w[1].begin == 800);
  CHECK(w[1].end == finish);
  // A stop with no start: the profiler was on since collection began. Shuffled input.
  std::vector<sw> calls{{150, false}, {400, true}, {500, false}, {120, false}};
  std::shuffle(calls.begin(), calls.end(), rng());
  w = nd::capture_windows_from(calls, {}, begin, finish);
  REQUIRE(w.size() == 2);
  CHECK(w[0].begin == begin);
  CHECK(w[0].end == 120);
  CHECK(w[1].begin == 400);
  CHECK(w[1].end == 500);
  // nvscope's guards (one still open) merge with the program's own windows.
  w = nd::capture_windows_from({{200, true}, {300, false}}, {{250, 350}, {600, ~ns::timestamp_ns{0}}}, begin, finish);
  REQUIRE(w.size() == 2);
  CHECK(w[0].begin == 200);
  CHECK(w[0].end == 350);
  CHECK(w[1].begin == 600);
  CHECK(w[1].end == finish);
  CHECK(nd::capture_windows_from({}, {}, begin, finish).empty());
}

TEST_CASE("time windows: merged windows cover the same instants as the raw ones; erase_outside keeps order") {
  // Random windows, some overlapping, touching, empty or reversed, against a linear search
  // of the raw list: what the collector's capture filter did before merging was shared.
  std::uniform_int_distribution<ns::timestamp_ns> at(0, 2000), len(0, 200);
  for (int round = 0; round < 200; ++round) {
    std::vector<ns::time_window> raw;
    const int n = static_cast<int>(len(rng()) % 8);
    for (int i = 0; i < n; ++i) {
      const ns::timestamp_ns b = at(rng());
      raw.push_back(i % 3 == 2 ? ns::time_window{b, b - len(rng()) % (b + 1)} : ns::time_window{b, b + len(rng())});
    }
    const auto merged = ns::merge_windows(raw);
    for (std::size_t i = 1; i < merged.size(); ++i) CHECK(merged[i - 1].end < merged[i].begin);
    for (ns::timestamp_ns t = 0; t <= 2300; ++t) {
      const bool linear = std::any_of(raw.begin(), raw.end(), [t](const ns::time_window& w) { return t >= w.begin && t < w.end; });
      if (ns::in_windows(merged, t) != linear) FAIL("instant " << t << " disagrees in round " << round);
    }
  }
  const auto two = ns::merge_windows({{300, 400}, {100, 200}, {200, 250}});
  REQUIRE(two.size() == 2);
  CHECK(two[0].begin == 100);
  CHECK(two[0].end == 250);
  CHECK(ns::in_windows(two, 249));
  CHECK_FALSE(ns::in_windows(two, 250));
  CHECK_FALSE(ns::in_windows({}, 0));
  std::vector<int> values{5, 120, 399, 260, 300, 99, 150};
  const auto gone = ns::erase_outside(values, two, [](int v) { return static_cast<ns::timestamp_ns>(v); });
  CHECK(gone == 3);
  CHECK(values == std::vector<int>{120, 399, 300, 150});
}

TEST_CASE("NVTX_INJECTION64_PATH is set only where recording can happen, and taken back when start fails") {
  const char* before = std::getenv("NVTX_INJECTION64_PATH");
  const std::string saved = before != nullptr ? before : "";
  ::unsetenv("NVTX_INJECTION64_PATH");
  int devices = 0;
  const bool possible = nd::cupti().loaded && cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0;
  {
    ns::collector_options o;
    o.print_errors = false;
    ns::collector c(o);
    const char* now = std::getenv("NVTX_INJECTION64_PATH");
    if (possible) CHECK(now != nullptr);
    else CHECK_MESSAGE(now == nullptr, "set although no collection can start here: children would inherit it");
    if (!c.start()) CHECK(std::getenv("NVTX_INJECTION64_PATH") == nullptr); // failed: taken back
    else c.stop();
    CHECK(std::getenv("NVTX_INJECTION64_PATH") == nullptr); // after stop: children no longer inherit it
  }
  // A value someone else set is never touched.
  ::setenv("NVTX_INJECTION64_PATH", "/some/other/tool.so", 1);
  {
    ns::collector_options o;
    o.print_errors = false;
    ns::collector c(o);
    if (c.start()) c.stop();
    CHECK(std::string(std::getenv("NVTX_INJECTION64_PATH")) == "/some/other/tool.so");
  }
  if (saved.empty()) ::unsetenv("NVTX_INJECTION64_PATH");
  else ::setenv("NVTX_INJECTION64_PATH", saved.c_str(), 1);
}

TEST_CASE("a buffer completed while no collector records is counted late and returned; a foreign one is counted") {
  auto& p = nd::collector_state();
  REQUIRE(p.decoder == nullptr); // no collection runs in this test program
  REQUIRE(p.pool.reserve(4096, 2));
  const auto late_before = p.late_buffers.load();
  std::uint8_t* b = p.pool.acquire();
  REQUIRE(b != nullptr);
  CHECK(p.pool.in_use() == 1);
  nd::on_buffer_completed(nullptr, 0, b, 4096, 64);
  CHECK(p.late_buffers.load() == late_before + 1);
  CHECK(p.pool.in_use() == 0); // back in the pool
  std::uint8_t stranger[64];
  nd::on_buffer_completed(nullptr, 0, stranger, sizeof stranger, 0); // empty, and not the pool's
  CHECK(p.late_buffers.load() == late_before + 1);                  // nothing in it: not late
  CHECK(p.pool.foreign_releases() == 1);
  p.late_buffers.store(late_before);
  p.pool.release_all();
}

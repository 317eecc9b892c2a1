// The Chrome trace writer, before and after issue 8 (structured writer), in one binary.
//
//   chrome_trace_bench check           both write the same bytes, on the synthetic trace and
//                                      on traces with every kind of record (exit 1 if not)
//   chrome_trace_bench before|after N  N timed calls on the synthetic trace in this process;
//                                      prints one JSON line (records, bytes, wall and CPU
//                                      seconds of each)
//   chrome_trace_bench after_small_pages N
//                                      "after" with transparent huge pages off for this
//                                      process: the writer's own share of the gain
//   chrome_trace_bench streamed N      "after" as nvscope run writes it: write_chrome_trace to
//                                      /dev/null, never whole in memory (bytes printed as 0)
//
// bench/export/run.sh runs before and after in fresh processes, interleaved over several
// rounds, and writes bench/results/export.json. The synthetic trace is analyze_bench's
// (tests/analyze/synthetic_trace.hpp's training_run: 100 steps x 12 layers x (attention, ffn)
// ranges, ~1M kernels, a copy per layer, a graph launch per step). "Records" counts kernels,
// copies, memsets, ranges, launches and syncs, as scale_bench counts them.
#define NVSCOPE_IMPLEMENTATION // this program's one file with the analysis definitions (docs/analysis.md, "Building")
#include "chrome_trace_before.hpp"
#include "synthetic_trace.hpp"

#include <nvscope/export/chrome_trace.hpp>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <random>
#include <string>
#include <vector>

#if defined(__linux__)
#include <sys/prctl.h>
#endif

namespace {

nvscope::trace training_run_trace() { return synthetic::training_run(); }

// Every kind of record and field, hostile names included, on several threads and devices.
nvscope::trace varied(unsigned seed) {
  std::mt19937 rng(seed);
  nvscope::trace t;
  t.process_id = 4242;
  t.threads.push_back({501, t.strings.intern("main \"loop\"")});
  t.threads.push_back({502, 0});
  t.threads.push_back({0, 0});
  t.devices.push_back({1, t.strings.intern("NVIDIA H200")});
  const nvscope::string_id names[] = {t.strings.intern("k<\"x\">\n"), t.strings.intern(std::string("nul\0in", 6)),
                                      t.strings.intern("bad\xff\xfe utf8"), t.strings.intern("caf\xc3\xa9"),
                                      t.strings.intern("cudaLaunchKernel"), t.strings.intern("dom")};
  const auto pick = [&](std::uint32_t n) { return static_cast<std::uint32_t>(rng() % n); };
  std::uint64_t now = 10000;
  for (std::uint32_t corr = 1; corr < 400; ++corr) {
    now += 50 + pick(500);
    const std::uint32_t thread = pick(5); // 3 and 4 do not exist: clamped to the first
    t.launches.push_back({now, corr, thread});
    if (pick(2)) t.api_calls.push_back({now - pick(40), now + pick(40), names[4], corr, thread, false});
    const std::uint64_t start = now + pick(3000), end = pick(20) ? start + pick(900) : 0;
    const std::uint16_t device = static_cast<std::uint16_t>(pick(2));
    switch (pick(3)) {
      case 0: {
        nvscope::kernel_record k;
        k.name = names[pick(4)];
        k.start = start, k.end = end, k.correlation = corr, k.stream = pick(4);
        nvscope::kernel_config c;
        c.device = device, c.grid[0] = pick(1000), c.block[1] = static_cast<std::uint16_t>(pick(1024)), c.registers = 32, c.graph = pick(3);
        k.config = t.kernel_configs.intern(c);
        t.kernels.push_back(k);
        break;
      }
      case 1: {
        nvscope::copy_record c;
        c.kind = static_cast<nvscope::copy_kind>(pick(11));
        c.start = start, c.end = end, c.bytes = pick(1u << 30), c.correlation = corr, c.stream = pick(4), c.device = device;
        t.copies.push_back(c);
        break;
      }
      default: {
        nvscope::memset_record m;
        m.start = start, m.end = end, m.bytes = pick(4096), m.correlation = pick(2) ? corr : 99999, m.stream = 3;
        t.memsets.push_back(m);
      }
    }
    if (pick(3) == 0) {
      nvscope::range_record r;
      r.name = names[pick(4)];
      r.domain = pick(3) == 0 ? names[5] : 0;
      r.start = now - pick(2000), r.end = pick(6) ? r.start + pick(5000) : 0, r.thread = pick(5);
      r.is_push_pop = pick(4) != 0, r.is_mark = pick(8) == 0, r.color = pick(2) ? 0xff00ff00u + corr : 0;
      r.payload.kind = static_cast<nvscope::payload_kind>(pick(7));
      if (r.payload.kind == nvscope::payload_kind::float64) r.payload.value.d = 1.5 * corr;
      else r.payload.value.i = -static_cast<std::int64_t>(corr);
      t.ranges.push_back(r);
    }
    if (pick(5) == 0)
      t.syncs.push_back({now, now + pick(800), corr, pick(4), 0, pick(5), static_cast<nvscope::sync_kind>(pick(6))});
  }
  t.begin = 9000;
  t.finish = now + 10000;
  return t;
}

std::uint64_t records(const nvscope::trace& t) {
  return t.kernels.size() + t.copies.size() + t.memsets.size() + t.ranges.size() + t.launches.size() + t.syncs.size();
}

int check() {
  int bad = 0;
  const auto same = [&](const char* what, const nvscope::trace& t, const nvscope::chrome_trace_options& o) {
    const std::string before = nvscope_bench::to_chrome_trace_before(t, o), after = nvscope::to_chrome_trace(t, o);
    if (before == after) return;
    std::size_t at = 0;
    while (at < before.size() && at < after.size() && before[at] == after[at]) ++at;
    std::fprintf(stderr, "chrome_trace_bench: %s: outputs differ at byte %zu (before %zu bytes, after %zu)\n", what, at,
                 before.size(), after.size());
    ++bad;
  };
  same("synthetic", training_run_trace(), {});
  same("empty", nvscope::trace{}, {});
  for (unsigned seed = 1; seed <= 100; ++seed) {
    const auto t = varied(seed);
    same("varied", t, {});
    same("varied, no flows", t, {false, true});
    same("varied, no API calls", t, {true, false});
  }
  std::printf("chrome_trace_bench check: %s\n", bad ? "outputs differ" : "before and after write the same bytes (301 traces)");
  return bad ? 1 : 0;
}

// CPU time of this process (user and system, page faults included): on a shared machine it
// moves far less than wall time when other jobs take the cores.
double cpu_now() {
  timespec ts{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

int timed(const char* impl, int runs) {
  const bool after = std::strcmp(impl, "before") != 0;
  const bool streamed = std::strcmp(impl, "streamed") == 0;
  if (std::strcmp(impl, "after_small_pages") == 0) {
#if defined(__linux__) && defined(PR_SET_THP_DISABLE)
    if (::prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0) != 0) std::perror("prctl(PR_SET_THP_DISABLE)");
#endif
  }
  const nvscope::trace t = training_run_trace();
  std::vector<double> seconds, cpu_seconds;
  std::size_t bytes = 0;
  for (int i = 0; i < runs; ++i) {
    const auto start = std::chrono::steady_clock::now();
    const double cpu_start = cpu_now();
    if (streamed) {
      if (const auto w = nvscope::write_chrome_trace("/dev/null", t); !w) {
        std::fprintf(stderr, "chrome_trace_bench: %s\n", w.error.c_str());
        return 1;
      }
    } else {
      bytes = (after ? nvscope::to_chrome_trace(t) : nvscope_bench::to_chrome_trace_before(t)).size();
    }
    cpu_seconds.push_back(cpu_now() - cpu_start);
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::printf("{\"impl\":\"%s\",\"records\":%llu,\"bytes\":%zu,\"seconds\":[", impl,
              static_cast<unsigned long long>(records(t)), bytes);
  for (std::size_t i = 0; i < seconds.size(); ++i) std::printf("%s%.6f", i ? "," : "", seconds[i]);
  std::printf("],\"cpu_seconds\":[");
  for (std::size_t i = 0; i < cpu_seconds.size(); ++i) std::printf("%s%.6f", i ? "," : "", cpu_seconds[i]);
  std::printf("]}\n");
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], "check") == 0) return check();
  for (const char* impl : {"before", "after", "after_small_pages", "streamed"})
    if (argc >= 3 && std::strcmp(argv[1], impl) == 0 && std::atoi(argv[2]) > 0) return timed(impl, std::atoi(argv[2]));
  std::fprintf(stderr, "usage: chrome_trace_bench check | before N | after N | after_small_pages N | streamed N\n");
  return 2;
}

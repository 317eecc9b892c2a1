// A long run through the collector's decode-and-fold path (collect/detail/long_run.hpp, issue
// 47): synthetic CUPTI activity records (tests/collect/long_run_feed.hpp: steps of about 200
// kernels, copies, a memset and a sync, three kernels between steps) decoded a buffer of 4096
// at a time and folded, the last 3 and the 3 slowest steps kept raw within 64 MiB.
//
//   long_run_bench [records, default 1000000000] [curve file, default none] [seconds, default none] [host]
//
// `host`: the feed's host records too (a runtime API record per launch, 15 NVTX events a step:
// ranges inside and between steps, a mark), through the collector's range builder; `join`: as
// `host`, and each launch logged and joined to its record as the collector's bounded state does
// (detail/bounded.hpp), the whole CPU path of a bounded collection's buffer.
// With `seconds`, the feed stops at the first step after that much wall time (a shared machine
// may not fold 10^9 records in the time it lends): `records` says how many were folded.
// Prints one JSON object to stdout:
//   records                            CUPTI records decoded and folded
//   nvtx_events                        NVTX events built into ranges and folded (0 without `host`)
//   rss_peak_mb                        VmHWM at the end (the most resident memory the process had)
//   fold_records_per_s                 records per CPU second of this thread spent decoding and
//                                      folding (the feed's own generation left out)
//   rss_after_first_minute_mb, rss_end_mb   VmRSS after the first minute of wall time, at the end
//   rss_growth_mb_per_billion_records  their difference, per 10^9 records folded after the minute
//   steps, steps_kept, bytes_high_water  steps summarised, kept raw at the end, most bytes held
//   sketch_rel_err_p50, _p99           |sketch - exact| / exact of the nearest-rank p50 and p99
//                                      of 1,000,000 log-normal durations (seed 47; exact by a
//                                      sort), the largest over 3 spreads (sigma 0.5, 1, 2)
// The curve file gets "records wall_s vm_rss_bytes" every 10 M records.
#include "long_run_feed.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

namespace {

long long status_bytes(const char* field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  const std::size_t n = std::strlen(field);
  while (std::getline(in, line))
    if (line.compare(0, n, field) == 0) return 1024 * std::atoll(line.c_str() + n);
  return 0;
}
long long vm_rss_bytes() { return status_bytes("VmRSS:"); }

double sketch_error(double q) {
  double worst = 0.0;
  for (const double sigma : {0.5, 1.0, 2.0}) {
    std::mt19937_64 rng(47);
    std::lognormal_distribution<double> d(std::log(10000.0), sigma);
    std::vector<std::uint64_t> v(1000000);
    nvscope::duration_sketch s;
    for (auto& x : v) s.add(x = 1 + static_cast<std::uint64_t>(d(rng)));
    std::sort(v.begin(), v.end());
    const auto rank = std::max<std::size_t>(1, static_cast<std::size_t>(std::ceil(q * static_cast<double>(v.size()))));
    const double exact = static_cast<double>(v[rank - 1]);
    worst = std::max(worst, std::fabs(s.quantile(q) - exact) / exact);
  }
  return worst;
}

} // namespace

int main(int argc, char** argv) {
  const unsigned long long wanted = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1000000000ull;
  std::FILE* curve = argc > 2 && argv[2][0] != '\0' ? std::fopen(argv[2], "w") : nullptr;
  const double deadline_s = argc > 3 ? std::atof(argv[3]) : 0.0;
  const std::string mode = argc > 4 ? argv[4] : "";
  const bool host = mode == "host" || mode == "join";
  namespace lf = long_run_feed;
  nvscope::detail::long_run_limits limits;
  limits.memory_limit = std::size_t{64} << 20;
  std::uint64_t steps = 0;
  nvscope::detail::long_run_folder folder(limits, [&](const nvscope::step_totals&) { ++steps; },
                                          [](std::string line) { std::fprintf(stderr, "nvscope: %s\n", line.c_str()); });
  const lf::generator gen(47, 200, host);
  lf::feed f;
  nvscope::detail::bounded_state join;
  if (mode == "join") f.join = &join;
  const auto t0 = std::chrono::steady_clock::now();
  auto wall = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  long long rss_minute = 0;
  std::uint64_t records_minute = 0, next_sample = 0;
  const std::uint64_t step_count = wanted / (host ? 410 : 207) + 1;
  const std::uint64_t chunk = 1000; // steps a run call
  std::uint64_t fed = 0;             // steps fed
  for (std::uint64_t s = 0; s < step_count && f.records < wanted && !(deadline_s > 0 && wall() > deadline_s); s += chunk) {
    fed = std::min(step_count, s + chunk);
    f.run(gen, folder, s, fed, 4096, [](const lf::step_content&) {}, [&](std::uint64_t records) {
      if (rss_minute == 0 && wall() >= 60.0) rss_minute = vm_rss_bytes(), records_minute = records;
      if (records >= next_sample) {
        if (curve) std::fprintf(curve, "%llu %.1f %lld\n", static_cast<unsigned long long>(records), wall(), vm_rss_bytes()), std::fflush(curve);
        next_sample += 10000000;
      }
    });
  }
  folder.finish(lf::origin + fed * lf::period);
  const long long rss_end = vm_rss_bytes(), rss_peak = status_bytes("VmHWM:"); // before the sketch check's own arrays
  if (rss_minute == 0) rss_minute = rss_end, records_minute = f.records; // ran under a minute
  const double after = static_cast<double>(f.records - records_minute);
  const double growth = after > 0 ? static_cast<double>(rss_end - rss_minute) / 1048576.0 * 1e9 / after : 0.0;
  if (curve) std::fclose(curve);
  std::printf("{\"records\": %llu, \"nvtx_events\": %llu, \"rss_peak_mb\": %.1f, \"fold_records_per_s\": %.0f, \"rss_after_first_minute_mb\": %.1f, \"rss_end_mb\": %.1f, "
              "\"rss_growth_mb_per_billion_records\": %.2f, \"steps\": %llu, \"steps_kept\": %zu, \"bytes_high_water\": %zu, "
              "\"wall_s\": %.1f, \"sketch_rel_err_p50\": %.6f, \"sketch_rel_err_p99\": %.6f}\n",
              static_cast<unsigned long long>(f.records), static_cast<unsigned long long>(f.events), rss_peak / 1048576.0,
              static_cast<double>(f.records) / f.fold_cpu_s, rss_minute / 1048576.0,
              rss_end / 1048576.0, growth, static_cast<unsigned long long>(steps), folder.recent().size() + folder.slowest().size(),
              folder.counts().bytes_high_water, wall(), sketch_error(0.5), sketch_error(0.99));
  return 0;
}

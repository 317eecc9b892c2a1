// Folding into running totals (analyze/totals.hpp, issue 47): records folded a second on one
// core, and peak memory that does not grow with the records folded. One synthetic trace
// (tests/analyze/synthetic_trace.hpp's make_trace: kernels, copies, memsets, syncs and ranges of
// every kind) is folded again and again into one `totals`, as a long run folds buffer after
// buffer; each fold also finds its step ranges (step_ranges, the default rule).
//
//   fold_bench [kernels per trace, default 1000000] [timed folds, default 21]
//
// Prints one JSON object to stdout:
//   fold_records_per_s              records (kernels, copies, memsets, syncs, ranges) per CPU
//                                   second of this thread, median over the timed folds (after a
//                                   first, untimed one); _min, _max: the slowest and fastest fold
//   records_folded                  records folded in all, the warm-up included
//   peak_rss_growth_bytes           VmHWM after the last fold less VmHWM after the first: what
//                                   folding more records costs in memory (the trace is built
//                                   before, and stays)
//   totals_bytes                    the sketches' memory_bytes at the end
//   sketch_rel_err_p50, _p99        |sketch - exact| / exact of the nearest-rank p50 and p99 of
//                                   1,000,000 log-normal durations (seed 47; exact by a sort),
//                                   the largest over 3 spreads (sigma 0.5, 1, 2 around 10 us)
#include "synthetic_trace.hpp"

#include <nvscope/analyze/step_names.hpp>
#include <nvscope/analyze/totals.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <random>
#include <string>
#include <vector>

namespace {

double thread_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// A field of /proc/self/status in bytes ("VmHWM", "VmRSS"); 0 where it cannot be read.
long long status_bytes(const std::string& field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.compare(0, field.size() + 1, field + ":") == 0) return 1024 * std::atoll(line.c_str() + field.size() + 1);
  return 0;
}

std::size_t totals_bytes(const nvscope::totals& all) {
  std::size_t bytes = all.steps.memory_bytes();
  for (const auto& [name, s] : all.kernels) bytes += name.size() + s.memory_bytes();
  for (const auto& [key, s] : all.ranges) bytes += key.domain.size() + key.name.size() + s.memory_bytes();
  return bytes;
}

// The sketch's relative error at quantile q on log-normal durations, the largest over 3 spreads.
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

void fold_once(const nvscope::trace& t, nvscope::totals& all) {
  nvscope::fold_options o;
  o.steps = nvscope::step_ranges(t, {});
  nvscope::fold(t, all, o);
}

} // namespace

int main(int argc, char** argv) {
  const unsigned long long kernels = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1000000;
  const int folds = argc > 2 ? std::max(1, std::atoi(argv[2])) : 21;
  const auto t = synthetic::make_trace(kernels);
  const double records = static_cast<double>(t.kernels.size() + t.copies.size() + t.memsets.size() + t.syncs.size() + t.ranges.size());
  nvscope::totals all;
  fold_once(t, all); // warm-up: the sketches' buckets and the allocator's pages
  const long long peak_first = status_bytes("VmHWM");
  std::vector<double> rates;
  for (int i = 1; i <= folds; ++i) {
    const double t0 = thread_cpu_s();
    fold_once(t, all);
    rates.push_back(records / (thread_cpu_s() - t0));
    std::fprintf(stderr, "fold %d: %.0f records/s\n", i, rates.back());
  }
  const long long peak_last = status_bytes("VmHWM");
  std::sort(rates.begin(), rates.end());
  std::printf("{\"fold_records_per_s\": %.0f, \"fold_records_per_s_min\": %.0f, \"fold_records_per_s_max\": %.0f, "
              "\"records_folded\": %.0f, \"peak_rss_growth_bytes\": %lld, \"totals_bytes\": %zu, "
              "\"sketch_rel_err_p50\": %.6f, \"sketch_rel_err_p99\": %.6f}\n",
              rates[rates.size() / 2], rates.front(), rates.back(), records * (folds + 1), peak_last - peak_first, totals_bytes(all),
              sketch_error(0.5), sketch_error(0.99));
  return 0;
}

// Accuracy and speed of the diagnosis, written as bench/results/diagnosis.json:
//  - scenarios: the synthetic traces of tests/diagnose at three sizes; correct when the class,
//    the first finding's kind and the range it names are the expected ones (outlier scenario:
//    the outlier step found and its gemm named as what grew);
//  - nvscope diff on noisy samples (tests/diagnose/noise.hpp: 8 kernels, 200 instances each,
//    log-normal noise 2-10 %, 1 % slowed 1.5-3x), default options (95 % bootstrap interval of
//    2000 resamples, threshold 5 %): the gate's false-positive rate on pairs from one
//    distribution, and the share of runs with a 10 % regression injected in one kernel
//    (a different one each seed) where that kernel is flagged;
//  - speed: diagnose() on a launch-bound trace of 240,000 kernels, records per second.
// usage: diagnosis_bench [--seeds N] [--commit HASH] [--command TEXT]

#define NVSCOPE_IMPLEMENTATION // this program's one file with the analysis definitions (docs/analysis.md, "Building")
#include "noise.hpp"
#include "scenarios.hpp"

#include <nvscope/analyze/diagnose/compare.hpp>
#include <nvscope/analyze/diagnose/diagnose.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace nvscope;

namespace {

struct expectation {
  const char* name;
  nvscope::trace (*make)(int);
  bottleneck kind;
  finding_kind first;
  const char* range;
};

bool names(const trace& t, const std::vector<range_time>& rs, const char* name) {
  for (const auto& r : rs)
    if (t.strings[r.name] == name) return true;
  return false;
}

bool outlier_right(const trace& t, const diagnosis& d, int slow) {
  if (d.steps.outlier_count != 1 || d.steps.outliers.empty()) return false;
  const auto& o = d.steps.outliers[0];
  return o.ordinal == static_cast<std::uint64_t>(slow) && !o.grew.empty() && t.strings[o.grew[0].name] == "gemm";
}

void scenarios(int& total, int& correct) {
  const expectation cases[] = {
      {"launch_bound", scenario::launch_bound, bottleneck::launch_bound, finding_kind::launch_gaps, "forward"},
      {"gpu_bound", scenario::gpu_bound, bottleneck::gpu_bound, finding_kind::gpu_time, "model"},
      {"sync_bound", scenario::sync_bound, bottleneck::sync_bound, finding_kind::sync_gaps, "check_loss"},
      {"copy_bound", scenario::copy_bound, bottleneck::copy_bound, finding_kind::pageable_copies, "load_batch"},
      {"host_bound", scenario::host_bound, bottleneck::host_bound, finding_kind::host_gaps, "preprocess"},
  };
  for (int steps : {3, 10, 30}) {
    for (const auto& c : cases) {
      const auto t = c.make(steps);
      const auto d = diagnose(t, attribute(t));
      const bool ok = d.verdict.kind == c.kind && !d.verdict.findings.empty() &&
                      d.verdict.findings[0].kind == c.first && names(t, d.verdict.findings[0].ranges, c.range);
      total += 1;
      correct += ok;
      if (!ok) std::fprintf(stderr, "scenario %s (%d steps): wrong\n", c.name, steps);
    }
    const int slow = steps / 2;
    const auto t = scenario::outlier_step(steps + 5, slow);
    const auto d = diagnose(t, attribute(t));
    const bool ok = d.verdict.kind == bottleneck::gpu_bound && outlier_right(t, d, slow);
    total += 1;
    correct += ok;
    if (!ok) std::fprintf(stderr, "scenario outlier_step (%d steps): wrong\n", steps + 5);
  }
}

struct diff_figures {
  int pairs = 0, gate_failed = 0, detected = 0, rows = 0, rows_significant = 0, others = 0, others_flagged = 0;
};

diff_figures diff_runs(int seeds) {
  diff_figures f;
  const compare_options o;
  for (int seed = 0; seed < seeds; ++seed) {
    const auto same = compare_runs(noise::run(10'000 + seed, 8, 200), noise::run(20'000 + seed, 8, 200), o);
    f.pairs += 1;
    f.gate_failed += same.gate_failed;
    f.rows += static_cast<int>(same.tested);
    f.rows_significant += static_cast<int>(same.significant);
    const int slow = seed % 8;
    const auto hit = compare_runs(noise::run(30'000 + seed, 8, 200), noise::run(40'000 + seed, 8, 200, slow, 1.10), o);
    for (const auto& r : hit.rows) {
      if (r.name == "kernel_" + std::to_string(slow)) f.detected += r.regression;
      else f.others += 1, f.others_flagged += r.regression;
    }
  }
  return f;
}

double records_per_second(std::uint64_t& records) {
  const auto t = scenario::launch_bound(4000); // 240,000 kernels
  records = t.kernels.size() + t.ranges.size() + t.launches.size() + t.api_calls.size();
  double best = 1e300;
  for (int rep = 0; rep < 3; ++rep) {
    const auto start = std::chrono::steady_clock::now();
    const auto d = diagnose(t, attribute(t));
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (d.verdict.kind != bottleneck::launch_bound) std::fprintf(stderr, "speed trace misdiagnosed\n");
    best = s < best ? s : best;
  }
  return static_cast<double>(records) / best;
}

} // namespace

int main(int argc, char** argv) {
  int seeds = 200;
  std::string commit = "unknown", command = "diagnosis_bench";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--seeds")) seeds = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--commit")) commit = argv[i + 1];
    else if (!std::strcmp(argv[i], "--command")) command = argv[i + 1];
  }
  int total = 0, correct = 0;
  scenarios(total, correct);
  const auto f = diff_runs(seeds);
  std::uint64_t records = 0;
  const double rate = records_per_second(records);
  std::printf("{\n  \"topic\": \"diagnosis\",\n  \"device\": \"CPU (2 cores, shared); no GPU: synthetic traces\",\n"
              "  \"date\": \"2026-11-23\",\n  \"commit\": \"%s\",\n  \"command\": \"%s\",\n  \"metrics\": {\n",
              commit.c_str(), command.c_str());
  std::printf("    \"scenarios_total\": %d,\n    \"scenarios_correct\": %d,\n", total, correct);
  std::printf("    \"diff_seeds\": %d,\n    \"diff_false_positive_rate\": %.4f,\n", seeds, double(f.gate_failed) / f.pairs);
  std::printf("    \"diff_detects_injected_fraction\": %.4f,\n", double(f.detected) / f.pairs);
  std::printf("    \"diff_row_false_significant_rate\": %.4f,\n", double(f.rows_significant) / (f.rows ? f.rows : 1));
  std::printf("    \"diff_uninjected_rows_flagged_rate\": %.4f,\n", double(f.others_flagged) / (f.others ? f.others : 1));
  std::printf("    \"diagnose_records_per_s\": %.0f,\n    \"diagnose_records\": %llu\n  }\n}\n", rate,
              (unsigned long long)records);
  return correct == total ? 0 : 1;
}

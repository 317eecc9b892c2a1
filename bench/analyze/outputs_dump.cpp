// Every output of analyze (summary JSON, text, every CSV, diagnosis JSON and text, samples) on
// 47 fixed traces (with their options), to stdout: the byte-for-byte check that a change to
// the analysis changes no figure. Built by hand, not by CMake (a tool for changing analyze, not a benchmark):
//
//   g++ -O2 -std=c++17 -Iinclude -Itests/analyze -Itests/diagnose bench/analyze/outputs_dump.cpp -o dump
//   ./dump > new.txt    # and the same built from the commit to compare against: cmp old.txt new.txt
//
// Traces: the synthetic trace (tests/analyze/synthetic_trace.hpp) at 3 sizes with the default
// options and with base names, the opening-thread start/end rule and a step range; PyTorch's
// shape (synthetic_trace.hpp's per_operator) at 2 sizes with both option sets; the training
// run; 30 random traces (seeded: the same each run) with nested push/pop ranges, start/end
// ranges ended on other threads, marks, graphs, copies, memsets, syncs, API calls, kernels and
// copies with no end, unclosed pushes and a thread index outside the table; the 6 diagnosis
// scenarios (tests/diagnose/scenarios.hpp). About 30 MB of text, 2 s.
#define NVSCOPE_IMPLEMENTATION // this program's one file with the analysis definitions (docs/analysis.md, "Building")
#include <nvscope/analysis.hpp>
#include <nvscope/export.hpp>
#include "synthetic_trace.hpp"
#include "scenarios.hpp"
#include "random_trace.hpp"

#include <algorithm>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

using namespace nvscope;

namespace {

void dump(const char* label, const trace& t, const analysis_options& o) {
  const auto r = analyze(t, o);
  std::printf("==== %s\n", label);
  std::fputs(to_json(r, t).c_str(), stdout);
  std::fputs(to_text(r, t).c_str(), stdout);
  for (auto w : all_reports) std::fputs(to_csv(r, w).c_str(), stdout);
  std::fputs(diagnosis_json(t, r.diagnosis).c_str(), stdout);
  std::fputs(diagnosis_text(t, r.diagnosis).c_str(), stdout);
  std::fputs(samples_json(r.diagnosis.samples).c_str(), stdout);
}

} // namespace

int main() {
  analysis_options plain, other;
  other.kernel_names = name_form::base;
  other.start_end = start_end_rule::opening_thread;
  other.step_range = "layer";
  for (std::uint64_t n : {3000ull, 40000ull, 200000ull}) {
    const auto t = synthetic::make_trace(n);
    dump(("make " + std::to_string(n)).c_str(), t, plain);
    dump(("make other " + std::to_string(n)).c_str(), t, other);
  }
  dump("training", synthetic::training_run(), plain);
  for (std::uint64_t n : {3000ull, 60000ull}) {
    const auto t = synthetic::per_operator(n);
    dump(("per operator " + std::to_string(n)).c_str(), t, plain);
    dump(("per operator other " + std::to_string(n)).c_str(), t, other);
  }
  for (int i = 0; i < 30; ++i) {
    const auto t = synthetic::random_trace(1000 + static_cast<std::uint64_t>(i), 1 + i % 5, 50 + i * 97);
    dump(("random " + std::to_string(i)).c_str(), t, i % 3 ? plain : other);
  }
  for (auto& s : {scenario::launch_bound(), scenario::gpu_bound(), scenario::sync_bound(), scenario::copy_bound(),
                  scenario::host_bound(), scenario::outlier_step()})
    dump("scenario", s, plain);
}

// analyze() against the plain reference definitions of analyze/reference/: every table of the
// report and the overall activity, field by field, on the fixed traces (the synthetic training
// run and its PyTorch shape, the diagnosis scenarios) and on seeded random traces of every kind
// (tests/analyze/random_trace.hpp). Integers compare exactly, and so do doubles computed by the
// same formula; a sample deviation summed in another order compares to 1e-12 relative. A
// failure names the trace, the table, the row and the field.
#include "engine_vs_reference.hpp"
#include "random_trace.hpp"
#include "synthetic_trace.hpp"
#include "../diagnose/scenarios.hpp"
#include "../support/test_seed.hpp"

#include <nvscope/analysis.hpp>
#include <nvscope/analyze/reference/activity.hpp>
#include <nvscope/analyze/reference/tables.hpp>

#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

using namespace nvscope;

namespace {

using namespace engine_vs_reference;

void same_tables(const trace& t, const analysis_options& o, const analysis_report& r, const std::string& label) {
  same_rows(r.kernels, reference::cuda_gpu_kern_sum(t, o.kernel_names), label + " cuda_gpu_kern_sum", [](const auto& e, const auto& f, const std::string& w) {
    SAME(e.name, f.name, w + " name");
    SAME(e.time_percent, f.time_percent, w + " time %");
    same_stats(e.time, f.time, w + " " + f.name);
  });
  same_rows(r.memops_by_time, reference::cuda_gpu_mem_time_sum(t), label + " cuda_gpu_mem_time_sum", [](const auto& e, const auto& f, const std::string& w) {
    SAME(e.operation, f.operation, w + " operation");
    SAME(e.time_percent, f.time_percent, w + " time %");
    same_stats(e.time, f.time, w + " " + f.operation);
  });
  same_rows(r.memops_by_size, reference::cuda_gpu_mem_size_sum(t), label + " cuda_gpu_mem_size_sum", [](const auto& e, const auto& f, const std::string& w) {
    SAME(e.operation, f.operation, w + " operation");
    same_stats(e.bytes, f.bytes, w + " " + f.operation);
  });
  same_rows(r.ranges, reference::nvtx_sum(t), label + " nvtx_sum", [](const auto& e, const auto& f, const std::string& w) {
    SAME(e.range, f.range, w + " range");
    SAME(e.style, f.style, w + " style");
    SAME(e.name, f.name, w + " name");
    SAME(e.time_percent, f.time_percent, w + " time %");
    same_stats(e.time, f.time, w + " " + f.range);
  });
  same_rows(r.range_kernels, reference::nvtx_kern_sum(t, o.kernel_names, o.start_end, o.attribute), label + " nvtx_kern_sum",
            [](const auto& e, const auto& f, const std::string& w) {
              SAME(e.range, f.range, w + " range");
              SAME(e.style, f.style, w + " style");
              SAME(e.kernel, f.kernel, w + " kernel");
              SAME(e.pid, f.pid, w + " pid");
              SAME(e.tid, f.tid, w + " tid");
              SAME(e.name, f.name, w + " name");
              SAME(e.range_instances, f.range_instances, w + " NVTX Inst");
              same_stats(e.time, f.time, w + " " + f.range + " / " + f.kernel);
            });
  same_rows(r.projections, reference::nvtx_gpu_proj_sum(t, o.start_end, o.attribute), label + " nvtx_gpu_proj_sum", [](const auto& e, const auto& f, const std::string& w) {
    SAME(e.range, f.range, w + " range");
    SAME(e.style, f.style, w + " style");
    SAME(e.name, f.name, w + " name");
    SAME(e.total_range_time, f.total_range_time, w + " total range time");
    SAME(e.total_gpu_ops, f.total_gpu_ops, w + " total GPU ops");
    SAME(e.avg_gpu_ops, f.avg_gpu_ops, w + " avg GPU ops");
    SAME(e.avg_range_level, f.avg_range_level, w + " avg range level");
    SAME(e.avg_children, f.avg_children, w + " avg children");
    same_stats(e.projected, f.projected, w + " " + f.range);
  });
}

void same_activity(const activity_metrics& e, const activity_metrics& f, const std::string& w) {
  SAME(e.window_begin, f.window_begin, w + " window begin");
  SAME(e.window_end, f.window_end, w + " window end");
  SAME(e.window_ns, f.window_ns, w + " window");
  SAME(e.busy_ns, f.busy_ns, w + " busy");
  SAME(e.kernel_ns, f.kernel_ns, w + " kernel time");
  SAME(e.copy_ns, f.copy_ns, w + " copy time");
  SAME(e.overlap_ns, f.overlap_ns, w + " overlap");
  SAME(e.sync_ns, f.sync_ns, w + " sync");
  SAME(e.gpu_busy_percent, f.gpu_busy_percent, w + " GPU busy %");
  SAME(e.copy_compute_overlap_percent, f.copy_compute_overlap_percent, w + " overlap %");
  SAME(e.sync_percent, f.sync_percent, w + " sync %");
  SAME(e.gap_count, f.gap_count, w + " gaps");
  SAME(e.gap_median_ns, f.gap_median_ns, w + " gap median");
  SAME(e.gap_p90_ns, f.gap_p90_ns, w + " gap p90");
  SAME(e.kernels, f.kernels, w + " kernels");
  SAME(e.copies, f.copies, w + " copies");
  SAME(e.memsets, f.memsets, w + " memsets");
  SAME(e.kernel_median_ns, f.kernel_median_ns, w + " kernel median");
}

void check(const std::string& label, const trace& t, const analysis_options& o) {
  INFO("trace: ", label);
  const auto r = analyze(t, o);
  same_tables(t, o, r, label);
  const auto window = reference::analysis_window(t, o);
  same_activity(r.overall, reference::overall_activity(t, window), label + " overall activity");
  const auto per_range = reference::range_activity(t, o);
  same_rows(r.per_range, per_range.per_range, label + " per range", [](const auto& e, const auto& f, const std::string& w) {
    SAME(e.range, f.range, w + " range");
    SAME(e.instances, f.instances, w + " instances");
    SAME(e.kernels, f.kernels, w + " kernels");
    SAME(e.kernels_per_instance, f.kernels_per_instance, w + " kernels per instance");
    same_activity(e.activity, f.activity, w + " " + f.range);
  });
  same_rows(r.step_details, per_range.steps, label + " steps", [](const auto& e, const auto& f, const std::string& w) {
    SAME(e.range, f.range, w + " range");
    SAME(e.name, f.name, w + " name");
    SAME(e.kernels, f.kernels, w + " kernels");
    same_activity(e.activity, f.activity, w + " " + f.name);
  });
  const auto steps = reference::steps(t, o);
  SAME(r.steps, steps.steps, label + " steps");
  SAME(r.kernels_per_step, steps.kernels_per_step, label + " kernels per step");
  const auto unranged = reference::unranged(t, o);
  SAME(static_cast<int>(r.unranged.credit), static_cast<int>(unranged.credit), label + " unranged rule");
  SAME(r.unranged.kernels, unranged.kernels, label + " unranged kernels");
  SAME(r.unranged.gpu_ns, unranged.gpu_ns, label + " unranged GPU time");
  same_rows(r.unranged.threads, unranged.threads, label + " unranged threads", [](const auto& e, const auto& f, const std::string& w) {
    SAME(e.thread, f.thread, w + " thread");
    SAME(e.os_id, f.os_id, w + " TID");
    SAME(e.name, f.name, w + " name");
    SAME(e.kernels, f.kernels, w + " kernels");
    SAME(e.gpu_ns, f.gpu_ns, w + " GPU time");
  });
}

// The option sets every trace is read with: the defaults, and every other choice at once.
std::vector<std::pair<std::string, analysis_options>> option_sets() {
  analysis_options other;
  other.kernel_names = name_form::base;
  other.start_end = start_end_rule::opening_thread;
  other.step_range = "layer";
  analysis_options mangled;
  mangled.kernel_names = name_form::mangled;
  analysis_options process;
  process.attribute = attribution_rule::process;
  return {{"defaults", {}}, {"base names, opening thread, step 'layer'", other}, {"mangled names", mangled}, {"process rule", process}};
}

} // namespace

TEST_CASE("reference: the fixed traces' tables, activity and unranged kernels equal their definitions") {
  std::vector<std::pair<std::string, trace>> traces;
  traces.emplace_back("synthetic 3000", synthetic::make_trace(3000));
  traces.emplace_back("per operator 3000", synthetic::per_operator(3000));
  traces.emplace_back("launch bound", scenario::launch_bound());
  traces.emplace_back("gpu bound", scenario::gpu_bound());
  traces.emplace_back("sync bound", scenario::sync_bound());
  traces.emplace_back("copy bound", scenario::copy_bound());
  traces.emplace_back("host bound", scenario::host_bound());
  traces.emplace_back("outlier step", scenario::outlier_step());
  traces.emplace_back("empty", trace{});
  for (const auto& [name, t] : traces)
    for (const auto& [what, o] : option_sets()) check(name + ", " + what, t, o);
  // The synthetic trace has rows in every table: the comparison above compared something.
  const auto& t = traces.front().second;
  CHECK(!reference::cuda_gpu_kern_sum(t, name_form::demangled).empty());
  CHECK(!reference::cuda_gpu_mem_time_sum(t).empty());
  CHECK(!reference::nvtx_sum(t).empty());
  CHECK(!reference::nvtx_kern_sum(t, name_form::demangled, start_end_rule::nsys).empty());
  CHECK(!reference::nvtx_gpu_proj_sum(t, start_end_rule::nsys).empty());
  CHECK(reference::overall_activity(t, reference::analysis_window(t, {})).gap_count > 0);
  CHECK(!reference::range_activity(t, {}).steps.empty());
}

TEST_CASE("reference: random traces of every kind equal their definitions") {
  NVSCOPE_SEEDED_RNG(std::mt19937_64, rng);
  const auto sets = option_sets();
  for (int i = 0; i < 24; ++i) {
    const auto seed = rng();
    const int threads = 1 + i % 5, events = 40 + static_cast<int>(rng() % 700);
    const auto t = synthetic::random_trace(seed, threads, events);
    const auto& [what, o] = sets[static_cast<std::size_t>(i) % sets.size()];
    check("random " + std::to_string(i) + " (trace seed " + std::to_string(seed) + ", " + std::to_string(threads) + " threads, " +
              std::to_string(events) + " events), " + what,
          t, o);
  }
}

TEST_CASE("reference: ranges of one name nested under themselves, many kernel names under one range") {
  NVSCOPE_SEEDED_RNG(std::mt19937_64, rng);
  const auto sets = option_sets();
  for (int round = 0; round < 12; ++round) {
    const auto t = synthetic::nested_names_trace(rng, round % 2 == 1);
    const auto& [what, o] = sets[static_cast<std::size_t>(round) % sets.size()];
    check("nested names " + std::to_string(round) + (round % 2 ? " (wide)" : "") + ", " + what, t, o);
  }
}

TEST_CASE("reference: a capture window, an explicit window and one outside the GPU's work") {
  auto t = synthetic::random_trace(7, 2, 400);
  const auto whole = reference::analysis_window(t, {});
  REQUIRE(whole.end > whole.begin);
  t.capture_windows = {{whole.begin + (whole.end - whole.begin) / 4, 0}};
  check("capture window open to the end", t, {});
  t.capture_windows = {{whole.begin + 10, whole.begin + 5000}, {whole.end - 9000, whole.end - 10}};
  check("two capture windows", t, {});
  analysis_options o;
  o.window = {whole.begin + 1000, whole.begin + 2000};
  check("explicit window", t, o);
  o.window = {whole.end + 10, whole.end + 20};
  check("window past the GPU's work", t, o);
}

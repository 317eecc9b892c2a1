// The attribution rules (analysis_options::attribute) and the kernels outside every range
// (analysis_report::unranged) on a trace shaped like a PyTorch training step: the main thread
// opens `step_1`, `forward` and `backward`; autograd's thread launches the backward kernels and
// opens no range; a data loader thread opens a range of its own for a while. The expected
// figures are counted by hand from the trace below; reference_test holds the same figures equal
// to reference::unranged and the tables under both rules on random traces.
#include <nvscope/analysis.hpp>
#include <nvscope/analyze/analyze.hpp>
#include <nvscope/analyze/reference/diagnosis.hpp>
#include <nvscope/export.hpp>

#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

using namespace nvscope;

namespace {

struct pytorch_step {
  trace t;
  string_id fwd = 0, bwd = 0;
};

// Main thread (TID 100): step_1 [0, 1000] holds forward [10, 400] and backward [410, 990].
// Autograd (TID 200, named pt_autograd_0): launches at 420, 500, 600 and 1500, no range.
// Loader (TID 300): range `load` [550, 650]. Forward's two kernels launch on the main thread.
pytorch_step make_step() {
  pytorch_step s;
  trace& t = s.t;
  t.threads = {{100, 0}, {200, t.strings.intern("pt_autograd_0")}, {300, 0}};
  const auto range = [&](const char* name, timestamp_ns start, timestamp_ns end, std::uint32_t thread) {
    range_record r;
    r.name = t.strings.intern(name), r.start = start, r.end = end, r.thread = thread;
    t.ranges.push_back(r);
  };
  range("step_1", 0, 1000, 0);
  range("forward", 10, 400, 0);
  range("backward", 410, 990, 0);
  range("load", 550, 650, 2);
  s.fwd = t.strings.intern("fwd_gemm");
  s.bwd = t.strings.intern("bwd_gemm");
  t.kernel_configs.intern(kernel_config{});
  std::uint32_t correlation = 1;
  const auto kernel = [&](string_id name, timestamp_ns launch, std::uint32_t thread, timestamp_ns duration) {
    t.launches.push_back({launch, correlation, thread});
    kernel_record k;
    k.name = name, k.start = launch + 5, k.end = launch + 5 + duration, k.correlation = correlation++;
    t.kernels.push_back(k);
  };
  kernel(s.fwd, 20, 0, 40);
  kernel(s.fwd, 30, 0, 40);
  kernel(s.bwd, 420, 1, 50);
  kernel(s.bwd, 500, 1, 60);
  kernel(s.bwd, 600, 1, 70);  // two other threads have a range open: credited to neither
  kernel(s.bwd, 1500, 1, 80); // no range open anywhere
  t.begin = 0, t.finish = 2000;
  return s;
}

const range_kernel_row* row_of(const analysis_report& r, const std::string& range, const std::string& kernel) {
  for (const auto& row : r.range_kernels)
    if (row.range == range && row.kernel == kernel) return &row;
  return nullptr;
}

} // namespace

TEST_CASE("thread rule (nsys's): autograd's kernels lie outside every range, and the summary says so") {
  const auto s = make_step();
  const auto r = analyze(s.t);
  CHECK(r.unranged.credit == attribution_rule::thread);
  CHECK(r.unranged.kernels == 4);
  CHECK(r.unranged.gpu_ns == 50 + 60 + 70 + 80);
  REQUIRE(r.unranged.threads.size() == 1);
  CHECK(r.unranged.threads[0].os_id == 200);
  CHECK(r.unranged.threads[0].name == "pt_autograd_0");
  CHECK(row_of(r, ":backward", "bwd_gemm") == nullptr);
  REQUIRE(row_of(r, ":forward", "fwd_gemm") != nullptr);
  CHECK(row_of(r, ":forward", "fwd_gemm")->time.count == 2);
  const auto line = unranged_line(r);
  CHECK(line.find("outside every range: 4 kernels, 0.000 ms of GPU time (76.5% of kernel time)") == 0); // 260 of 340 ns
  CHECK(line.find("TID 200 (pt_autograd_0): 4 kernels") != std::string::npos);
  CHECK(line.find("--attribute=process") != std::string::npos);
  CHECK(to_screen(r, s.t).find("Outside every range: 4 kernels") != std::string::npos);
  CHECK(to_text(r).find("outside every range: 4 kernels") != std::string::npos);
  CHECK(to_json(r).find("\"unranged\": {\"rule\": \"thread\", \"kernels\": 4, \"gpu_ns\": 260") != std::string::npos);
}

TEST_CASE("process rule: the backward range holds what autograd launched while only the main thread had a range open") {
  const auto s = make_step();
  analysis_options o;
  o.attribute = attribution_rule::process;
  const auto r = analyze(s.t, o);
  const auto* bwd = row_of(r, ":backward", "bwd_gemm");
  REQUIRE(bwd != nullptr);
  CHECK(bwd->time.count == 2); // launched at 420 and 500; 600 had the loader's range open too
  CHECK(bwd->time.total == 50 + 60);
  CHECK(bwd->tid == 100);
  REQUIRE(row_of(r, ":step_1", "bwd_gemm") != nullptr);
  CHECK(row_of(r, ":step_1", "bwd_gemm")->time.count == 2);
  CHECK(row_of(r, ":load", "bwd_gemm") == nullptr);
  CHECK(r.unranged.credit == attribution_rule::process);
  CHECK(r.unranged.kernels == 2);
  CHECK(r.unranged.gpu_ns == 70 + 80);
  CHECK(unranged_line(r).find("--attribute=process") == std::string::npos);
  // The exports read the same credit: the folded stacks put bwd_gemm under backward (steps folded as step_N).
  const auto x = index_trace(s.t, o.start_end, o.attribute);
  CHECK(x.links.kernel_owner[2] == 2);
  CHECK(x.links.kernel_owner[3] == 2);
  CHECK(x.links.kernel_owner[4] == attribution::none);
  CHECK(attribute(s.t, attribution_rule::process).kernel_owner[3] == 2);
  CHECK(attribute(s.t).kernel_owner[3] == attribution::none);
  CHECK(to_folded(s.t, {}, x.links).find("step_N;backward;bwd_gemm") != std::string::npos);
}

TEST_CASE("analyze refuses an index made under another attribution rule") {
  const auto s = make_step();
  analysis_options o;
  o.attribute = attribution_rule::process;
  const auto x = index_trace(s.t);
  CHECK_THROWS_AS(analyze(s.t, x, o), std::invalid_argument);
  CHECK(analyze(s.t, index_trace(s.t, o.start_end, o.attribute), o).unranged.kernels == 2);
}

namespace {
// The GPU time per push/pop range and per step that the diagnosis samples (what `nvscope diff`
// compares) read the credited owners: engine and reference, set by set.
void same_gpu_samples(const std::vector<sample_set>& e, const std::vector<sample_set>& f, const std::string& what) {
  REQUIRE_MESSAGE(e.size() == f.size(), what << ": sets, engine " << e.size() << ", reference " << f.size());
  for (std::size_t i = 0; i < e.size(); ++i) {
    CHECK_MESSAGE(e[i].name == f[i].name, what << " set " << i);
    CHECK_MESSAGE(e[i].count == f[i].count, what << " " << f[i].name << " count");
    CHECK_MESSAGE(e[i].ns == f[i].ns, what << " " << f[i].name << " samples");
  }
}
} // namespace

TEST_CASE("process rule: the diagnosis' GPU time per range follows the credit, as reference::diagnose defines it") {
  const auto s = make_step();
  for (const auto rule : {attribution_rule::thread, attribution_rule::process}) {
    analysis_options o;
    o.attribute = rule;
    const auto engine = analyze(s.t, o).diagnosis.samples;
    diagnosis_options d = diagnosis_options_for(s.t, o);
    CHECK(d.attribute == rule);
    const auto reference = reference::diagnose(s.t, d).samples;
    const std::string what = rule == attribution_rule::process ? "process" : "thread";
    same_gpu_samples(engine.ranges_gpu, reference.ranges_gpu, what + " ranges_gpu");
    same_gpu_samples(engine.steps_gpu, reference.steps_gpu, what + " steps_gpu");
    same_gpu_samples(diagnose(s.t, attribute(s.t, rule), d).samples.ranges_gpu, reference.ranges_gpu, what + " diagnose()");
    // backward's GPU work: none under nsys's rule, the two credited kernels under `process`.
    std::uint64_t backward = 0;
    for (const auto& set : reference.ranges_gpu)
      if (set.name == "backward")
        for (const auto ns : set.ns) backward += ns;
    CHECK(backward == (rule == attribution_rule::process ? 50u + 60u : 0u));
  }
}

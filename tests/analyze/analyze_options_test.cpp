// Issue 9's analysis items: the step pattern (defaults and a custom regular expression,
// shared with folded-stack stripping), the default analysis window, kernel name forms, the
// text tables' capped name column, step ranges as one family with per-step figures, and the
// start/end rule's reading of where a range ended.
#include <doctest/doctest.h>
#include <nvscope/analysis.hpp>
#include <nvscope/analyze/analyze.hpp> // the engine's passes, called alone
#include <nvscope/export/folded.hpp>
#include <nvscope/export/table.hpp>

#include <string>

namespace {

struct small_trace {
  nvscope::trace t;
  std::uint32_t corr = 1;
  small_trace() { t.threads.push_back({100, 0}); }
  std::uint32_t range(const std::string& name, std::uint64_t s, std::uint64_t e) {
    nvscope::range_record r;
    r.name = t.strings.intern(name);
    r.start = s;
    r.end = e;
    t.ranges.push_back(r);
    return static_cast<std::uint32_t>(t.ranges.size() - 1);
  }
  void kernel(const std::string& name, std::uint64_t launch, std::uint64_t s, std::uint64_t e) {
    t.launches.push_back({launch, corr, 0});
    nvscope::kernel_record k;
    k.name = t.strings.intern(name);
    k.start = s;
    k.end = e;
    k.correlation = corr++;
    t.kernels.push_back(k);
  }
};

} // namespace

TEST_CASE("default step names: the common spellings, and not their look-alikes") {
  for (const char* yes : {"step_7", "step 7", "Step#3", "iteration 12", "Train step 4", "step7", "STEP-2", "step", "iter_5", "eval_step_9",
                          "ProfilerStep#5", "TrainStep12", "evalIteration 3"})
    CHECK_MESSAGE(nvscope::is_step_name(yes), yes);
  for (const char* no : {"stepper", "steps", "footstep 3", "layer_3", "step_", "step_x1", "forward", "", "ProfilerSteps#5", "PROFILERSTEP#5",
                         "Footstep3"})
    CHECK_MESSAGE(!nvscope::is_step_name(no), no);
}

TEST_CASE("a step pattern (regular expression) drives steps, families and folded stripping alike") {
  small_trace s;
  for (int i = 0; i < 3; ++i) {
    const std::uint64_t base = 1000 * static_cast<std::uint64_t>(i);
    s.range("Epoch 1 batch " + std::to_string(i), base, base + 900);
    s.kernel("k", base + 10, base + 100, base + 200);
    s.kernel("k", base + 20, base + 300, base + 400);
  }
  nvscope::analysis_options o;
  CHECK(nvscope::analyze(s.t, o).steps == 0); // not a default spelling
  o.step_pattern = "epoch \\d+ batch \\d+";
  const auto r = nvscope::analyze(s.t, o);
  CHECK(r.steps == 3);
  CHECK(r.kernels_per_step == 2.0);
  REQUIRE(r.per_range.size() == 1); // one family, not three one-instance rows
  CHECK(r.per_range[0].range == "Epoch N batch N");
  CHECK(r.per_range[0].instances == 3);
  REQUIRE(r.step_details.size() == 3);
  CHECK(r.step_details[1].name == "Epoch 1 batch 1");
  CHECK(r.step_details[1].kernels == 2);
  CHECK(r.step_details[1].activity.busy_ns == 200);
  nvscope::folded_options f;
  f.step_pattern = o.step_pattern;
  f.strip_step_numbers = false;
  f.include_steps = false;
  CHECK(nvscope::to_folded(s.t, f) == "k 600\n"); // the step level left out: recognised as steps
  o.step_pattern = "epoch (";                     // not a regular expression
  const auto bad = nvscope::analyze(s.t, o);
  CHECK(bad.steps == 0);
  REQUIRE(nvscope::warning_lines(bad).size() == 1);
  CHECK(nvscope::warning_lines(bad)[0].find("step pattern is not a valid regular expression") != std::string::npos);
}

TEST_CASE("step ranges form one family in the per-range metrics; per-step figures stay") {
  small_trace s;
  for (int i = 0; i < 4; ++i) {
    const std::uint64_t base = 1000 * static_cast<std::uint64_t>(i);
    s.range("step_" + std::to_string(29 - i), base, base + 900);
    s.kernel("k", base + 10, base + 100, base + 100 + 50 * static_cast<std::uint64_t>(i + 1));
  }
  const auto r = nvscope::analyze(s.t);
  REQUIRE(r.per_range.size() == 1);
  CHECK(r.per_range[0].range == "step_N");
  CHECK(r.per_range[0].instances == 4);
  CHECK(r.per_range[0].kernels == 4);
  REQUIRE(r.step_details.size() == 4);
  CHECK(r.step_details[0].name == "step_29"); // time order
  CHECK(r.step_details[3].activity.kernel_ns == 200);
}

TEST_CASE("default window: the capture window, else first to last GPU activity; options override") {
  small_trace s;
  s.t.begin = 0;
  s.t.finish = 100000; // collection ran much longer than the GPU work
  s.kernel("k", 10, 1000, 2000);
  s.kernel("k", 20, 3000, 4000);
  auto r = nvscope::analyze(s.t);
  CHECK(r.overall.window_begin == 1000);
  CHECK(r.overall.window_end == 4000);
  CHECK(r.overall.gpu_busy_percent == doctest::Approx(100.0 * 2000 / 3000));
  s.t.capture_windows.push_back({500, 2500});
  s.t.capture_windows.push_back({2800, 0}); // unclosed: ends at finish
  r = nvscope::analyze(s.t);
  CHECK(r.overall.window_begin == 500);
  CHECK(r.overall.window_end == 100000);
  nvscope::analysis_options o;
  o.window = {1000, 3000};
  r = nvscope::analyze(s.t, o);
  CHECK(r.overall.window_ns == 2000);
  CHECK(r.overall.busy_ns == 1000);
}

TEST_CASE("kernel name forms group and spell the kernel tables") {
  small_trace s;
  const auto a = s.t.strings.intern("void axpy<float>(float*, int)");
  const auto b = s.t.strings.intern("void axpy<double>(double*, int)");
  s.t.kernel_names[a] = {s.t.strings.intern("axpy"), s.t.strings.intern("_Z4axpyIfEvPT_i")};
  s.t.kernel_names[b] = {s.t.strings.intern("axpy"), s.t.strings.intern("_Z4axpyIdEvPT_i")};
  s.range("outer", 0, 100);
  s.kernel("void axpy<float>(float*, int)", 10, 100, 200);
  s.kernel("void axpy<double>(double*, int)", 20, 300, 350);
  CHECK(nvscope::analyze(s.t).kernels.size() == 2);
  nvscope::analysis_options o;
  o.kernel_names = nvscope::name_form::base;
  auto r = nvscope::analyze(s.t, o);
  REQUIRE(r.kernels.size() == 1);
  CHECK(r.kernels[0].name == "axpy");
  CHECK(r.kernels[0].time.count == 2);
  REQUIRE(r.range_kernels.size() == 1);
  CHECK(r.range_kernels[0].kernel == "axpy");
  o.kernel_names = nvscope::name_form::mangled;
  r = nvscope::analyze(s.t, o);
  REQUIRE(r.kernels.size() == 2);
  CHECK(r.kernels[0].name == "_Z4axpyIfEvPT_i");
}

TEST_CASE("text tables cap long names with a visible cut; CSV keeps them whole") {
  small_trace s;
  const std::string longname = "void at::native::vectorized_elementwise_kernel<" + std::string(3000, 'x') + ">()";
  s.kernel(longname, 10, 100, 200);
  s.kernel("gemm", 20, 300, 350);
  const auto r = nvscope::analyze(s.t);
  const auto text = nvscope::to_text(r, nvscope::report::cuda_gpu_kern_sum);
  CHECK(text.find(longname) == std::string::npos);
  CHECK(text.find("void at::native::vectorized_elementwise_kernel<xxx") != std::string::npos);
  std::size_t longest = 0;
  for (std::size_t pos = 0, nl; (nl = text.find('\n', pos)) != std::string::npos; pos = nl + 1) longest = std::max(longest, nl - pos);
  CHECK(longest < 250);
  CHECK(text.find("...") != std::string::npos);
  CHECK(nvscope::to_csv(r, nvscope::report::cuda_gpu_kern_sum).find(longname) != std::string::npos);
  nvscope::text_options whole;
  whole.max_name_width = 0;
  CHECK(nvscope::to_text(r, nvscope::report::cuda_gpu_kern_sum, whole).find(longname) != std::string::npos);
  // a cut counts display columns and never splits a UTF-8 character: 2-byte characters of one
  // column each, 3-byte characters of two columns each (CJK), stray bytes of one
  const std::string e = "\xc3\xa9", han = "\xe5\xad\x97";
  CHECK(nvscope::detail::cut_name(std::string(20, 'a') + e + e + e, 24) == std::string(20, 'a') + e + e + e);
  CHECK(nvscope::detail::cut_name(std::string(20, 'a') + e + e + e + e + e + e, 24) == std::string(20, 'a') + e + "...");
  CHECK(nvscope::detail::cut_name("aaaa" + han + han + han + han, 9) == "aaaa" + han + "...");
  CHECK(nvscope::detail::cut_name("aaaa" + han + han + han + han, 10) == "aaaa" + han + "...");
  CHECK(nvscope::detail::cut_name(std::string(10, '\xff'), 6) == "\xff\xff\xff...");
}

TEST_CASE("start/end rule: a range ended on another thread takes no launches (nsys), unless asked") {
  small_trace s;
  s.t.threads.push_back({200, 0});
  nvscope::range_record se;
  se.name = s.t.strings.intern("load");
  se.start = 0;
  se.end = 1000;
  se.is_push_pop = false;
  se.end_thread = 1; // opened on thread 0, ended on thread 1
  s.t.ranges.push_back(se);
  se.name = s.t.strings.intern("same");
  se.end_thread = nvscope::range_record::same_thread;
  s.t.ranges.push_back(se);
  s.kernel("k", 500, 2000, 2100); // launched on thread 0 inside both
  auto r = nvscope::analyze(s.t);
  REQUIRE(r.range_kernels.size() == 1);
  CHECK(r.range_kernels[0].range == ":same");
  REQUIRE(r.projections.size() == 1);
  CHECK(r.projections[0].range == ":same");
  CHECK(r.ranges.size() == 2); // nvtx_sum keeps both: host time does not depend on the rule
  nvscope::analysis_options o;
  o.start_end = nvscope::start_end_rule::opening_thread;
  r = nvscope::analyze(s.t, o);
  CHECK(r.range_kernels.size() == 2);
  CHECK(r.projections.size() == 2);
}

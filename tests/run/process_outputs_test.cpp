// The end of a profiled process (tools/nvscope/process_outputs.cpp) as `nvscope run` reaches
// it, without a GPU: the options parsed from a command line, handed on as NVSCOPE_RUN_*
// variables and read back as the injection library reads them, then the files written and
// the text printed for a PyTorch-shaped trace of 30,000 kernels. By default one screen and
// STEM.txt with every table; --summary=full the tables on stderr; --summary=none the files line.
#include "process_outputs.hpp"
#include "run_options.hpp"
#include "file_text.hpp"
#include "../analyze/synthetic_trace.hpp"

#include <nvscope/export/recipes.hpp>

#include <doctest/doctest.h>

#include <cstdlib>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

using namespace nvscope::tool;

namespace {

std::string temp_folder() {
  const char* tmp = std::getenv("TMPDIR");
  std::string p = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/nvscope-end-test-XXXXXX";
  REQUIRE(::mkdtemp(p.data()) != nullptr);
  return p;
}

// The options of `nvscope run ARGS -- prog` as the injected process sees them: parsed by the
// tool, passed through the environment, parsed again.
run_parse options_in_process(std::vector<std::string> a) {
  a.insert(a.begin(), {"nvscope", "run"});
  a.insert(a.end(), {"--", "prog"});
  std::vector<char*> argv;
  for (auto& s : a) argv.push_back(s.data());
  const run_parse tool = parse_run(static_cast<int>(argv.size()), argv.data(), 2);
  if (!tool.error.empty()) return tool;
  const auto env = child_environment(tool.given);
  for (const auto& kv : env) ::setenv(kv.first.c_str(), kv.second.c_str(), 1);
  run_parse injected = parse_run_env();
  for (const auto& kv : env) ::unsetenv(kv.first.c_str());
  return injected;
}

std::size_t line_count(const std::string& s) {
  std::size_t n = 0;
  for (const char c : s) n += c == '\n';
  return n;
}

struct profiled {
  nvscope::trace t = synthetic::per_operator(30000);
  nvscope::analysis_report r;
  nvscope::attribution a;
  profiled() {
    nvscope::kernel_record& k = t.kernels.front();
    k.name = t.strings.intern("void at::native::" + std::string(300, 'x') + "_kernel<float>(int)");
    k.end = k.start + 50000000; // the top kernel by far
    r = nvscope::analyze(t);
    a = nvscope::attribute(t);
  }
};

profiled& sample() {
  static profiled p;
  return p;
}

process_end finish_with(const std::vector<std::string>& args) {
  const run_parse p = options_in_process(args);
  REQUIRE(p.error.empty());
  return end_process(p.options, sample().t, sample().r, sample().a, "4243", "exit", false);
}

void remove_all(const std::string& dir, const std::vector<nvscope::screen_file>& files) {
  for (const auto& f : files) ::unlink(f.path.c_str());
  CHECK(::rmdir(dir.c_str()) == 0); // nothing else was written
}

} // namespace

TEST_CASE("end of a process, by default: one screen on stderr, every table in STEM.txt") {
  const std::string dir = temp_folder();
  const process_end e = finish_with({"--output-dir=" + dir, "--name=p"});
  CHECK(e.errors.empty());
  REQUIRE(e.files.size() == 3);
  CHECK(e.files[0].path == dir + "/p.txt");
  CHECK(e.files[1].path == dir + "/p.json");
  CHECK(e.files[2].path == dir + "/p.trace.json");
  const std::string txt = nvscope_test::file_text(dir + "/p.txt");
  struct stat st {};
  REQUIRE(::stat((dir + "/p.txt").c_str(), &st) == 0);
  CHECK(e.files[0].bytes == static_cast<std::uint64_t>(st.st_size));
  CHECK(txt == nvscope::to_text(sample().r, sample().t)); // the full tables and the whole diagnosis
  CHECK(txt.find(" ** NVTX GPU Projection Summary (nvtx_gpu_proj_sum):") != std::string::npos);
  CHECK(line_count(txt) > 100);
  // the screen: short, the verdict, the top kernel cut visibly, where the rest is, the files
  CHECK(line_count(e.summary) <= 40);
  CHECK(e.summary.rfind("nvscope: run: process 4243 (exit):\n", 0) == 0);
  CHECK(e.summary.find("\nVerdict: " + nvscope::verdict_line(sample().r.diagnosis.verdict) + "\n") != std::string::npos);
  CHECK(e.summary.find("void at::native::xxxxxxxxxxxxxxxxxxxx") != std::string::npos);
  CHECK(e.summary.find(std::string(300, 'x')) == std::string::npos);
  CHECK(e.summary.find("every row in " + dir + "/p.txt") != std::string::npos);
  CHECK(e.summary.find("\nSteps: ") != std::string::npos);
  CHECK(e.summary.find("Files: " + dir + "/p.txt (") != std::string::npos);
  CHECK(e.summary.find(" ** CUDA GPU Kernel Summary") == std::string::npos);
  CHECK(e.summary.find('\x1b') == std::string::npos);
  CHECK(e.files_line.empty()); // the screen lists the files
  remove_all(dir, e.files);
}

TEST_CASE("end of a process: --summary=full prints every table, --summary=none only the files line") {
  for (const char* full : {"full", "stderr"}) {
    CAPTURE(full);
    const std::string dir = temp_folder();
    const process_end e = finish_with({"--output-dir=" + dir, "--name=p", std::string("--summary=") + full});
    CHECK(e.summary == "nvscope: run: process 4243 (exit):\n" + nvscope::to_text(sample().r, sample().t));
    REQUIRE(e.files.size() == 3);
    CHECK(e.files_line == "nvscope: run: process 4243 wrote " + nvscope::file_list(e.files));
    CHECK(e.files_line.find(dir + "/p.txt (") != std::string::npos);
    remove_all(dir, e.files);
  }
  for (const char* none : {"none", "file"}) {
    CAPTURE(none);
    const std::string dir = temp_folder();
    const process_end e = finish_with({"--output-dir=" + dir, "--name=p", std::string("--summary=") + none});
    CHECK(e.summary.empty());
    REQUIRE(e.files.size() == 3);
    CHECK(e.files_line == "nvscope: run: process 4243 wrote " + nvscope::file_list(e.files));
    remove_all(dir, e.files);
  }
  // without the summary among the outputs: no STEM.txt, nothing but the files line
  const std::string dir = temp_folder();
  const process_end e = finish_with({"--output-dir=" + dir, "--name=p", "--outputs=json"});
  CHECK(e.summary.empty());
  REQUIRE(e.files.size() == 1);
  CHECK(e.files_line == "nvscope: run: process 4243 wrote " + dir + "/p.json (" + nvscope::size_text(e.files[0].bytes) + ")");
  remove_all(dir, e.files);
}

TEST_CASE("--summary and --color: values, errors, the environment twin") {
  CHECK(options_in_process({}).options.summary_shows == summary_view::screen);
  CHECK(options_in_process({"--summary=short"}).options.summary_shows == summary_view::screen);
  CHECK(options_in_process({"--summary", "none"}).options.summary_shows == summary_view::none);
  CHECK(options_in_process({"--summary=frob"}).error == "nvscope: run: bad --summary='frob': want short, full or none");
  CHECK(options_in_process({}).options.color == color_choice::automatic);
  CHECK(options_in_process({"--color=always"}).options.color == color_choice::always);
  CHECK(options_in_process({"--color=never"}).options.color == color_choice::never);
  CHECK(options_in_process({"--color=yes"}).error == "nvscope: run: bad --color='yes': want auto, always or never");
  ::setenv("NVSCOPE_RUN_SUMMARY", "full", 1);
  CHECK(parse_run_env().options.summary_shows == summary_view::full);
  ::unsetenv("NVSCOPE_RUN_SUMMARY");
  ::setenv("NVSCOPE_RUN_COLOR", "never", 1);
  CHECK(parse_run_env().options.color == color_choice::never);
  ::unsetenv("NVSCOPE_RUN_COLOR");
  // colour reaches the screen when the process decides for it
  const std::string dir = temp_folder();
  const run_parse p = options_in_process({"--output-dir=" + dir, "--name=p", "--outputs=summary"});
  const process_end e = end_process(p.options, sample().t, sample().r, sample().a, "1", "exit", true);
  CHECK(e.summary.find("\x1b[1mVerdict:\x1b[0m") != std::string::npos);
  remove_all(dir, e.files);
}

TEST_CASE("--reports: STEM.NAME.csv per report with nsys's header, all as STEM.reports.txt and .json (issue 48)") {
  const std::string dir = temp_folder();
  const process_end e = finish_with({"--output-dir=" + dir, "--name=p", "--outputs=none", "--reports=cuda_gpu_sum,nvtx_pushpop_sum"});
  CHECK(e.errors.empty());
  REQUIRE(e.files.size() == 4);
  CHECK(e.files[0].path == dir + "/p.cuda_gpu_sum.csv");
  CHECK(e.files[1].path == dir + "/p.nvtx_pushpop_sum.csv");
  CHECK(e.files[2].path == dir + "/p.reports.txt");
  CHECK(e.files[3].path == dir + "/p.reports.json");
  CHECK(nvscope_test::file_text(dir + "/p.cuda_gpu_sum.csv").rfind("Time (%),Total Time (ns),Instances,", 0) == 0);
  CHECK(nvscope_test::file_text(dir + "/p.reports.txt").find(" ** NVTX Push/Pop Range Summary (nvtx_pushpop_sum):") != std::string::npos);
  CHECK(nvscope_test::file_text(dir + "/p.reports.json").rfind("{\n\"cuda_gpu_sum\": [", 0) == 0);
  remove_all(dir, e.files);
}

TEST_CASE("--recipes: STEM.NAME.csv per recipe with the recipe's columns, its options applied (issue 48)") {
  const std::string dir = temp_folder();
  const process_end e = finish_with({"--output-dir=" + dir, "--name=p", "--outputs=none", "--recipes=gpu_gaps:gap=0,cuda_api_sync"});
  CHECK(e.errors.empty());
  REQUIRE(e.files.size() == 2);
  CHECK(e.files[0].path == dir + "/p.gpu_gaps.csv");
  CHECK(e.files[1].path == dir + "/p.cuda_api_sync.csv");
  nvscope::recipe_params p;
  p.gap_ms = 0;
  CHECK(nvscope_test::file_text(dir + "/p.gpu_gaps.csv") == nvscope::recipe_csv(sample().t, nvscope::recipe::gpu_gaps, p));
  CHECK(nvscope_test::file_text(dir + "/p.cuda_api_sync.csv").rfind("Duration,Start,PID,TID,API Name,Rank\n", 0) == 0);
  remove_all(dir, e.files);
}

TEST_CASE("--outputs=flame,steps,histograms: nvscope's own SVG pictures beside the other files") {
  const std::string dir = temp_folder();
  const process_end e = finish_with({"--output-dir=" + dir, "--name=p", "--outputs=flame,steps,histograms"});
  CHECK(e.errors.empty());
  REQUIRE(e.files.size() == 3);
  CHECK(e.files[0].path == dir + "/p.flame.svg");
  CHECK(e.files[1].path == dir + "/p.steps.svg");
  CHECK(e.files[2].path == dir + "/p.kernels.svg");
  // the flame graph is drawn from the folded stacks of the same run
  CHECK(nvscope_test::file_text(dir + "/p.flame.svg") == nvscope::to_flame_svg(nvscope::to_folded(sample().t)));
  CHECK(nvscope_test::file_text(dir + "/p.steps.svg") == nvscope::to_steps_svg(sample().r, sample().t));
  CHECK(nvscope_test::file_text(dir + "/p.kernels.svg").find("id=\"nvscope-histograms\"") != std::string::npos);
  remove_all(dir, e.files);
  const run_parse all = options_in_process({"--outputs=all"});
  CHECK((all.options.outputs.flame && all.options.outputs.steps && all.options.outputs.histograms));
  const run_parse plain = options_in_process({});
  CHECK_FALSE((plain.options.outputs.flame || plain.options.outputs.steps || plain.options.outputs.histograms));
}

TEST_CASE("--outputs=json: STEM.json carries the run's running totals, every sketch whole, for nvscope merge") {
  const std::string dir = temp_folder();
  const run_parse p = options_in_process({"--output-dir=" + dir, "--name=r0", "--outputs=json", "--summary=none"});
  REQUIRE(p.error.empty());
  // without the run's totals: those of the trace, folded with the step rule
  process_end e = end_process(p.options, sample().t, sample().r, sample().a, "1", "exit", false);
  REQUIRE(e.errors.empty());
  std::string j = nvscope_test::file_text(dir + "/r0.json");
  CHECK(j.find("\"totals\": {\"quantile_relative_error\": 0.01,") != std::string::npos);
  CHECK(j.find("\"run\": {\"kernels\": " + std::to_string(sample().t.kernels.size()) + ",") != std::string::npos);
  CHECK(j.find("\"buckets\": [") != std::string::npos);
  // the run's totals as nvscope run hands them over (what the collector folded, and the rest)
  nvscope::totals run;
  run.kernels["folded_elsewhere"].add(1234);
  run.run.kernels = 7;
  e = end_process(p.options, sample().t, sample().r, sample().a, "1", "exit", false, &run);
  j = nvscope_test::file_text(dir + "/r0.json");
  CHECK(j.find("{\"name\": \"folded_elsewhere\", \"sketch\": {\"count\": 1, \"sum_ns\": 1234, \"min_ns\": 1234, \"max_ns\": 1234,") != std::string::npos);
  CHECK(j.find("\"run\": {\"kernels\": 7,") != std::string::npos);
  remove_all(dir, e.files);
}

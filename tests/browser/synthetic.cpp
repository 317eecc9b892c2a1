// Writes the synthetic trace the browser check opens: two steps of known GPU work under
// known NVTX ranges, as a Chrome trace and as folded stacks, and nvscope's own pictures of it.
//   browser_synthetic <folder>   ->  <folder>/synthetic.json, <folder>/synthetic.folded,
//                                    <folder>/synthetic.flame.svg, .steps.svg, .kernels.svg,
//                                    <folder>/synthetic_long.steps.svg (10,000 steps, grouped)
// Each step: forward launches gemm (4000 ns) and softmax (2000 ns), backward launches gemm
// (1000 ns) and gemm_grad (2000 ns); the browser check reads the totals over both steps
// (step_N 18000 ns, forward 12000, backward 6000, gemm 10000 in two places) from the page.
#define NVSCOPE_IMPLEMENTATION // this program's one file with the analysis definitions (docs/analysis.md, "Building")
#include <nvscope/export.hpp>
#include <nvscope/trace.hpp>

#include <cstdio>
#include <fstream>
#include <string>

namespace {

struct builder {
  nvscope::trace t;
  std::uint32_t correlation = 1;

  void range(const char* name, std::uint64_t start, std::uint64_t end) {
    nvscope::range_record r;
    r.name = t.strings.intern(name);
    r.start = start;
    r.end = end;
    t.ranges.push_back(r);
  }
  void kernel(const char* name, std::uint64_t launch, std::uint64_t start, std::uint64_t end) {
    t.launches.push_back({launch, correlation, 0});
    nvscope::kernel_record k;
    k.name = t.strings.intern(name);
    k.start = start;
    k.end = end;
    k.correlation = correlation++;
    k.stream = 7;
    t.kernels.push_back(k);
  }
  void step(const char* name, std::uint64_t at) {
    range(name, at, at + 20000);
    range("forward", at + 100, at + 5000);
    kernel("gemm", at + 200, at + 1000, at + 5000);
    kernel("softmax", at + 300, at + 5000, at + 7000);
    range("backward", at + 5000, at + 9000);
    kernel("gemm", at + 5100, at + 8000, at + 9000);
    kernel("gemm_grad", at + 5200, at + 9000, at + 11000);
  }
};

bool save(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
  return static_cast<bool>(f);
}

} // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: browser_synthetic <folder>\n");
    return 2;
  }
  builder b;
  b.t.process_id = 4242;
  b.t.threads.push_back({4242, b.t.strings.intern("main")});
  b.t.begin = 0;
  b.step("step_1", 1000);
  b.step("step_2", 30000);
  b.t.finish = 60000;
  const std::string dir = argv[1];
  const std::string folded = nvscope::to_folded(b.t);
  const auto report = nvscope::analyze(b.t);
  if (!save(dir + "/synthetic.json", nvscope::to_chrome_trace(b.t)) || !save(dir + "/synthetic.folded", folded) ||
      !save(dir + "/synthetic.flame.svg", nvscope::to_flame_svg(folded)) ||
      !save(dir + "/synthetic.steps.svg", nvscope::to_steps_svg(report, b.t)) ||
      !save(dir + "/synthetic.kernels.svg", nvscope::to_kernel_histograms_svg(b.t))) {
    std::fprintf(stderr, "browser_synthetic: cannot write into %s\n", dir.c_str());
    return 1;
  }
  // A long run, 10,000 steps: its steps picture groups them (34 a bar, 295 bars) and says so.
  builder run;
  run.t.threads.push_back({4242, run.t.strings.intern("main")});
  for (int i = 0; i < 10000; ++i) run.step(("step_" + std::to_string(i + 1)).c_str(), 1000 + 30000ull * static_cast<std::uint64_t>(i));
  if (!save(dir + "/synthetic_long.steps.svg", nvscope::to_steps_svg(nvscope::analyze(run.t), run.t))) {
    std::fprintf(stderr, "browser_synthetic: cannot write into %s\n", dir.c_str());
    return 1;
  }
  std::printf("wrote %s/synthetic.json, .folded, .flame.svg, .steps.svg, .kernels.svg and synthetic_long.steps.svg\n", dir.c_str());
  return 0;
}

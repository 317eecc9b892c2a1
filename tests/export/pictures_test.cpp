// nvscope's own pictures (export/flame_svg.hpp, export/charts_svg.hpp) read back as text: the
// frames, bars and plots they hold. The browser test (tests/browser, check_svg.mjs) opens them.
#include <doctest/doctest.h>
#include "test_seed.hpp"
#include <nvscope/analyze/reference/step_groups.hpp>
#include <nvscope/analyze/step_groups.hpp>
#include <nvscope/export/charts_svg.hpp>
#include <nvscope/export/flame_svg.hpp>

#include <map>
#include <random>
#include <regex>
#include <string>
#include <vector>

namespace {

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// name -> (offset, width) of each frame of a flame graph.
std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> frames(const std::string& svg) {
  std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> out;
  const std::regex frame(R"re(<g class="frame" data-x="(\d+)" data-w="(\d+)" data-depth="\d+" data-name="([^"]*)")re");
  for (std::sregex_iterator it(svg.begin(), svg.end(), frame), end; it != end; ++it)
    out[(*it)[3]] = {std::stoull((*it)[1]), std::stoull((*it)[2])};
  return out;
}

} // namespace

TEST_CASE("flame graph: a frame per stack prefix, its width the weight below it, siblings in name order") {
  const std::string svg = nvscope::to_flame_svg("a;c 30\nd 60\na;b 10\nnot a line\n");
  const auto f = frames(svg);
  REQUIRE(f.size() == 5);
  CHECK(f.at("all") == std::pair<std::uint64_t, std::uint64_t>{0, 100});
  CHECK(f.at("a") == std::pair<std::uint64_t, std::uint64_t>{0, 40});
  CHECK(f.at("b") == std::pair<std::uint64_t, std::uint64_t>{0, 10});
  CHECK(f.at("c") == std::pair<std::uint64_t, std::uint64_t>{10, 30});
  CHECK(f.at("d") == std::pair<std::uint64_t, std::uint64_t>{40, 60});
  CHECK(svg.find("<script") != std::string::npos);
  CHECK(count(svg, "<![CDATA[") == 1);
  CHECK(count(svg, "]]>") == 1); // the script never closes its CDATA section early
}

TEST_CASE("flame graph: names escaped for XML, bytes that are not UTF-8 replaced; frames too narrow left out") {
  const std::string svg = nvscope::to_flame_svg("op<float&, \"x\">\xff;caf\xc3\xa9 50000000\ntiny 1\nbig 100000000\n");
  CHECK(svg.find("op&lt;float&amp;, &quot;x&quot;&gt;?") != std::string::npos);
  CHECK(svg.find("caf\xc3\xa9") != std::string::npos);
  CHECK(svg.find('\xff') == std::string::npos);
  const auto f = frames(svg);
  CHECK(f.count("big") == 1);
  CHECK(f.count("tiny") == 0); // 1 ns of 100 ms: narrower than a tenth of a pixel
  CHECK(nvscope::to_flame_svg("").find("no GPU time recorded") != std::string::npos);
}

TEST_CASE("GPU busy over time: overlapping work counted once, each bin's share of its stretch") {
  nvscope::trace t;
  const auto kernel = [&](std::uint64_t s, std::uint64_t e) {
    nvscope::kernel_record k;
    k.start = s, k.end = e;
    t.kernels.push_back(k);
  };
  kernel(0, 50);
  kernel(25, 100);   // overlaps the first
  kernel(300, 350);
  kernel(500, 400);  // ends before it starts: left out
  nvscope::memset_record m;
  m.start = 380, m.end = 400;
  t.memsets.push_back(m);
  const auto busy = nvscope::detail::gpu_busy_union(t);
  REQUIRE(busy.size() == 3);
  CHECK(busy[0] == std::pair<std::uint64_t, std::uint64_t>{0, 100});
  const auto bins = nvscope::detail::busy_bins(busy, 0, 400, 4);
  REQUIRE(bins.size() == 4);
  CHECK(bins[0] == doctest::Approx(1.0));
  CHECK(bins[1] == doctest::Approx(0.0));
  CHECK(bins[2] == doctest::Approx(0.0));
  CHECK(bins[3] == doctest::Approx(0.7)); // 300-350 and 380-400 of 300-400
  // Random work: the bins add up to the union's length.
  NVSCOPE_SEEDED_RNG(std::mt19937, rng);
  nvscope::trace r;
  for (int i = 0; i < 200; ++i) {
    nvscope::kernel_record k;
    k.start = rng() % 100000, k.end = k.start + 1 + rng() % 3000;
    r.kernels.push_back(k);
  }
  const auto u = nvscope::detail::gpu_busy_union(r);
  std::uint64_t covered = 0;
  for (const auto& [s, e] : u) covered += e - s;
  const auto b = nvscope::detail::busy_bins(u, u.front().first, u.back().second, 37);
  double sum = 0;
  for (double x : b) sum += x * static_cast<double>(u.back().second - u.front().first) / 37.0;
  CHECK(sum == doctest::Approx(static_cast<double>(covered)).epsilon(1e-9));
}

TEST_CASE("steps picture: two bars a step, outliers past the fence marked, the utilisation line") {
  nvscope::analysis_report r;
  const std::uint64_t durations[] = {1000, 1100, 5000};
  for (std::uint64_t d : durations) {
    nvscope::step_metrics s;
    s.name = "step_N";
    s.activity.window_ns = d;
    s.activity.busy_ns = d / 2;
    r.step_details.push_back(s);
  }
  r.diagnosis.steps.fence_ns = 2000;
  r.diagnosis.steps.median_ns = 1100;
  nvscope::trace t;
  nvscope::kernel_record k;
  k.start = 10, k.end = 20;
  t.kernels.push_back(k);
  const std::string svg = nvscope::to_steps_svg(r, t);
  CHECK(count(svg, "<rect class=\"bar\"") == 6);
  CHECK(count(svg, "class=\"outlier\"") == 1);
  CHECK(count(svg, ", outlier</title>") == 2); // the step's two bars say so
  CHECK(count(svg, "class=\"utilisation\"") == 1);
  CHECK(count(svg, "<g class=\"plot\"") == 2);
  CHECK(nvscope::to_steps_svg({}, {}).find("no step ranges") != std::string::npos);
}

namespace {

// `n` steps of random windows (a few far above the rest), busy a random part of each.
std::vector<nvscope::step_metrics> random_steps(std::size_t n, std::mt19937& rng) {
  std::vector<nvscope::step_metrics> steps(n);
  for (auto& s : steps) {
    s.name = "step_N";
    s.activity.window_ns = 1000 + rng() % 500 + (rng() % 200 == 0 ? 20000 : 0);
    s.activity.busy_ns = s.activity.window_ns * (rng() % 101) / 100;
  }
  return steps;
}

} // namespace

TEST_CASE("step groups: equal to the plain definition for any count of steps and bars") {
  NVSCOPE_SEEDED_RNG(std::mt19937, rng);
  for (const std::size_t n : {0, 1, 2, 7, 299, 300, 301, 1000, 10007}) {
    const auto steps = random_steps(n, rng);
    for (const std::size_t bars : {0, 1, 3, 300, 5000}) {
      CAPTURE(n);
      CAPTURE(bars);
      const double fence = 2000;
      const auto got = nvscope::group_steps(steps, fence, bars);
      const auto want = nvscope::reference::step_groups(steps, fence, bars);
      REQUIRE(got.size() == want.size());
      CHECK(got.size() <= (bars == 0 ? n : std::min(n, bars)));
      std::size_t covered = 0;
      for (std::size_t i = 0; i < got.size(); ++i) {
        CHECK(got[i].first == want[i].first);
        CHECK(got[i].count == want[i].count);
        CHECK(got[i].min_ns == want[i].min_ns);
        CHECK(got[i].median_ns == want[i].median_ns);
        CHECK(got[i].max_ns == want[i].max_ns);
        CHECK(got[i].busy_median_ns == want[i].busy_median_ns);
        CHECK(got[i].outliers == want[i].outliers);
        covered += got[i].count;
      }
      CHECK(covered == n);
    }
  }
}

TEST_CASE("steps picture: a run of 10,000 steps is drawn in at most max_step_bars groups, and says so") {
  NVSCOPE_SEEDED_RNG(std::mt19937, rng);
  nvscope::analysis_report r;
  r.step_details = random_steps(10000, rng);
  r.diagnosis.steps.fence_ns = 5000;
  r.diagnosis.steps.median_ns = 1250;
  std::uint64_t outliers = 0;
  for (const auto& s : r.step_details) outliers += s.activity.window_ns > 5000;
  REQUIRE(outliers > 0);
  const std::string svg = nvscope::to_steps_svg(r, {});
  const nvscope::chart_options o;
  const std::size_t per = nvscope::steps_per_group(10000, o.max_step_bars), groups = (10000 + per - 1) / per;
  CHECK(per == 34);
  CHECK(groups <= o.max_step_bars);
  CHECK(count(svg, "<rect class=\"bar\"") == static_cast<int>(2 * groups));
  CHECK(count(svg, "<line class=\"whisker\"") == static_cast<int>(groups));
  CHECK(svg.find("Time per step, grouped: " + std::to_string(groups) + " bars of 34 consecutive steps") != std::string::npos);
  CHECK(svg.find("10000 steps: median") != std::string::npos);
  CHECK(svg.find(">steps 9997-10000 (4 steps): median") != std::string::npos); // the last group, shorter
  CHECK(svg.size() < 300000); // a bar a step would be about 20,000 rectangles
  // every group holding an outlier is red and marked, and its tooltip counts them
  const auto g = nvscope::group_steps(r.step_details, 5000, o.max_step_bars);
  int marked = 0;
  std::uint64_t counted = 0;
  for (const auto& x : g) marked += x.outliers > 0, counted += x.outliers;
  CHECK(counted == outliers);
  CHECK(count(svg, "class=\"outlier\"") == marked);
  CHECK(count(svg, " past the fence</title>") == 2 * marked);
  // asked for a bar a step: one, and no grouping said
  nvscope::chart_options every;
  every.max_step_bars = 0;
  const std::string full = nvscope::to_steps_svg(r, {}, every);
  CHECK(count(full, "<rect class=\"bar\"") == 20000);
  CHECK(full.find("grouped") == std::string::npos);
}

TEST_CASE("kernel histograms: the top kernels by GPU time, each run in one bin") {
  nvscope::trace t;
  const char* names[] = {"small", "large", "middle"};
  const std::uint64_t each[] = {10, 1000, 100};
  for (int n = 0; n < 3; ++n)
    for (int i = 0; i < 5; ++i) {
      nvscope::kernel_record k;
      k.name = t.strings.intern(names[n]);
      k.start = 10000u * static_cast<std::uint64_t>(i), k.end = k.start + each[n] * static_cast<std::uint64_t>(i + 1);
      t.kernels.push_back(k);
    }
  const auto top = nvscope::detail::top_kernel_durations(t, 2);
  REQUIRE(top.size() == 2);
  CHECK(t.strings[top[0].first] == "large");
  CHECK(t.strings[top[1].first] == "middle");
  nvscope::chart_options o;
  o.top_kernels = 2;
  o.duration_bins = 4;
  const std::string svg = nvscope::to_kernel_histograms_svg(t, o);
  CHECK(count(svg, "<g class=\"plot\"") == 2);
  const std::regex runs(R"re(<title>(\d+) runs of)re");
  int total = 0;
  for (std::sregex_iterator it(svg.begin(), svg.end(), runs), end; it != end; ++it) total += std::stoi((*it)[1]);
  CHECK(total == 10);
  CHECK(svg.find("small") == std::string::npos);
}

// The summary that fits one screen (export/screen.hpp): at most 40 lines of at most 120
// display columns on a PyTorch-shaped trace of 30,000 kernels with long templated names,
// naming the verdict, the top kernel and the steps; each check shown to fail on a text that
// breaks it. The colour rule (NO_COLOR, terminal, forced).
#include "sample_trace.hpp"
#include "../analyze/synthetic_trace.hpp"
#include "../diagnose/scenarios.hpp"

#include <doctest/doctest.h>
#include <nvscope/analysis.hpp>
#include <nvscope/export/screen.hpp>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>
#include <unistd.h>

namespace {

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  for (std::size_t pos = 0, nl; pos < s.size(); pos = nl + 1) {
    nl = s.find('\n', pos);
    if (nl == std::string::npos) nl = s.size();
    out.push_back(s.substr(pos, nl - pos));
  }
  return out;
}

// Display columns counted here, apart from the code under test: one a code point, two for
// the CJK ideographs (U+4E00..U+9FFF, lead bytes 0xE4..0xE9) the tests use.
std::size_t columns(const std::string& line) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const auto c = static_cast<unsigned char>(line[i]);
    if ((c & 0xC0) == 0x80) continue;
    n += c >= 0xE4 && c <= 0xE9 ? 2 : 1;
  }
  return n;
}

struct expected {
  std::string verdict;    // the verdict's line
  std::string top_kernel; // the kernel with the most GPU time, whole
  std::string steps;      // "Steps: N," or empty: no step line wanted
};

// What is wrong with `screen`, one entry a broken rule; empty when it is a good screen.
std::vector<std::string> problems(const std::string& screen, const expected& e) {
  std::vector<std::string> p;
  const auto lines = lines_of(screen);
  if (lines.size() > 40) p.push_back("more than 40 lines: " + std::to_string(lines.size()));
  bool verdict = false, kernel = false, steps = false;
  for (const auto& l : lines) {
    if (columns(l) > 120) p.push_back("a line of " + std::to_string(columns(l)) + " columns");
    for (const char ch : l)
      if (static_cast<unsigned char>(ch) < 0x20) p.push_back("a control character");
    verdict = verdict || l == "Verdict: " + e.verdict;
    kernel = kernel || l.find(e.top_kernel.substr(0, 40)) != std::string::npos;
    steps = steps || (!e.steps.empty() && l.rfind(e.steps, 0) == 0);
  }
  if (!verdict) p.push_back("no verdict");
  if (!kernel) p.push_back("no top kernel");
  if (!e.steps.empty() && !steps) p.push_back("no step line");
  return p;
}

std::string long_name(int i, std::size_t length) {
  std::string s = "void at::native::kernel_" + std::to_string(i) +
                  "_vectorized<4, at::native::BinaryFunctor<float, float, float, "
                  "at::native::binary_internal::MulFunctor<float> >, at::detail::Array<char*, 3> >(int)";
  while (s.size() < length) s.insert(s.size() - 1, ", at::native::memory::LoadWithoutCast");
  return s;
}

// PyTorch's shape (tests/analyze/synthetic_trace.hpp) with the kernels renamed to long
// templated names, kernel 0's `first_length` bytes long, and losses of three kinds.
nvscope::trace pytorch_shaped(std::size_t first_length) {
  nvscope::trace t = synthetic::per_operator(30000);
  std::map<nvscope::string_id, nvscope::string_id> renamed;
  for (auto& k : t.kernels) {
    auto it = renamed.find(k.name);
    if (it == renamed.end()) {
      const int i = static_cast<int>(renamed.size());
      it = renamed.emplace(k.name, t.strings.intern(long_name(i, i == 0 ? first_length : 180))).first;
    }
    k.name = it->second;
  }
  t.lost.dropped_records = 17;
  t.lost.launches_lost = 2;
  t.lost.unclosed_ranges = 1;
  return t;
}

expected expected_of(const nvscope::trace& t, const nvscope::analysis_report& r) {
  std::map<nvscope::string_id, std::uint64_t> time;
  for (const auto& k : t.kernels) time[k.name] += k.end - k.start;
  nvscope::string_id top = 0;
  for (const auto& [name, ns] : time)
    if (top == 0 || ns > time[top]) top = name;
  std::size_t steps = 0;
  for (const auto& x : t.ranges) steps += std::string(t.strings[x.name]).rfind("step_", 0) == 0;
  return {nvscope::verdict_line(r.diagnosis.verdict), std::string(t.strings[top]),
          steps ? "Steps: " + std::to_string(steps) + "," : std::string()};
}

} // namespace

TEST_CASE("one screen: a PyTorch-shaped trace of 30,000 kernels in 40 lines of 120 columns") {
  for (const std::size_t first : {180, 400}) {
    CAPTURE(first);
    const auto t = pytorch_shaped(first);
    REQUIRE(t.kernels.size() >= 30000);
    const auto r = nvscope::analyze(t);
    const expected e = expected_of(t, r);
    REQUIRE(!e.steps.empty());
    nvscope::screen_options o;
    o.title = "nvscope: run: process 4243 (exit):";
    o.full_text = "out/nvscope_4243.txt";
    o.files = {{"out/nvscope_4243.txt", 812345}, {"out/nvscope_4243.json", 2500000}, {"out/nvscope_4243.trace.json", 9100000000}};
    const std::string screen = nvscope::to_screen(r, t, o);
    CHECK(problems(screen, e).empty());
    for (const auto& p : problems(screen, e)) MESSAGE(p);
    CHECK(screen.find("Files: out/nvscope_4243.txt (812.3 KB), out/nvscope_4243.json (2.5 MB), out/nvscope_4243.trace.json (9.1 GB)") != std::string::npos);
    CHECK(screen.find("warning: 17 records dropped by CUPTI") != std::string::npos);
    CHECK(screen.find("every row in out/nvscope_4243.txt") != std::string::npos);
    CHECK(screen.find("...") != std::string::npos); // the long names are cut visibly
    // what it left out is in the full text: the full tables hold the top kernel whole
    CHECK(nvscope::to_text(r, t).find(e.top_kernel.substr(0, 100)) != std::string::npos);
  }
}

TEST_CASE("one screen: each check fails on a text that breaks it") {
  const auto t = pytorch_shaped(400);
  const auto r = nvscope::analyze(t);
  const expected e = expected_of(t, r);
  // the full tables: too many lines, too wide
  const auto full = problems(nvscope::to_text(r, t), e);
  CHECK(std::find(full.begin(), full.end(), "more than 40 lines: " + std::to_string(lines_of(nvscope::to_text(r, t)).size())) != full.end());
  bool wide = false;
  for (const auto& p : full) wide = wide || p.rfind("a line of ", 0) == 0;
  CHECK(wide);
  // no top kernels, no verdict, no steps: each missed
  nvscope::screen_options none;
  none.top_kernels = 0;
  const std::string no_kernels = nvscope::to_screen(r, t, none);
  CHECK(problems(no_kernels, e) == std::vector<std::string>{"no top kernel"});
  std::string no_verdict;
  for (const auto& l : lines_of(nvscope::to_screen(r, t)))
    if (l.rfind("Verdict:", 0) != 0) no_verdict += l + "\n";
  CHECK(problems(no_verdict, e) == std::vector<std::string>{"no verdict"});
  expected other_steps = e;
  other_steps.steps = "Steps: 7,";
  CHECK(problems(nvscope::to_screen(r, t), other_steps) == std::vector<std::string>{"no step line"});
  // wider columns: the 400-byte name passes 120 columns
  nvscope::screen_options wider;
  wider.max_columns = 600;
  bool too_wide = false;
  for (const auto& p : problems(nvscope::to_screen(r, t, wider), e)) too_wide = too_wide || p.rfind("a line of ", 0) == 0;
  CHECK(too_wide);
}

TEST_CASE("one screen: limits, losses beyond the few shown, names with control and wide characters") {
  auto t = sample_trace();
  t.ranges[1].name = t.strings.intern("layer\x01\n12"); // a range that launched GPU work
  const std::string han = "\xe5\xad\x97"; // one CJK ideograph: two columns
  std::string wide_name;
  for (int i = 0; i < 100; ++i) wide_name += han;
  t.kernels[0].name = t.kernels[1].name = t.strings.intern(wide_name); // the top kernel
  t.lost.incomplete_records = 1;
  t.lost.unclosed_ranges = 2;
  t.lost.buffer_errors = 3;
  t.lost.late_buffers = 4;
  const auto r = nvscope::analyze(t);
  REQUIRE(r.losses.size() == 5);
  nvscope::screen_options o;
  o.full_text = "x.txt";
  const std::string screen = nvscope::to_screen(r, t, o);
  const auto lines = lines_of(screen);
  for (const auto& l : lines) {
    CHECK(columns(l) <= 120);
    CHECK(l.find('\n') == std::string::npos);
  }
  CHECK(screen.find(han + han) != std::string::npos);
  CHECK(screen.find("  layer??12\n") != std::string::npos); // its control characters shown as '?'
  // three losses shown: two, then the count of the rest and where they are
  std::size_t warnings = 0;
  for (const auto& l : lines) warnings += l.rfind("warning: ", 0) == 0;
  CHECK(warnings == 3);
  CHECK(screen.find("warning: 3 more kinds of loss; every one in x.txt") != std::string::npos);
  // a short screen: the body loses its last lines and says so; losses and files stay
  o.max_lines = 8;
  o.files = {{"x.txt", 10}};
  const auto short_lines = lines_of(nvscope::to_screen(r, t, o));
  REQUIRE(short_lines.size() == 8);
  CHECK(short_lines[3].find("lines left out; all in x.txt") != std::string::npos);
  CHECK(short_lines.back() == "Files: x.txt (10 B)");
  o.max_columns = 30;
  for (const auto& l : lines_of(nvscope::to_screen(r, t, o))) CHECK(columns(l) <= 30);
}

TEST_CASE("one screen: steps that lost records are listed, left out of the step figures, with the records lost") {
  auto t = scenario::outlier_step();
  for (const auto& r : t.ranges)
    if (std::string(t.strings[r.name]) == "step_13" || std::string(t.strings[r.name]) == "step_4")
      t.lossy_steps.push_back(nvscope::time_window{r.start, r.end});
  t.lost.dropped_records = 7;
  const std::string screen = nvscope::to_screen(nvscope::analyze(t), t, nvscope::screen_options{});
  const auto whole_trace = scenario::outlier_step();
  const std::string whole = nvscope::to_screen(nvscope::analyze(whole_trace), whole_trace, nvscope::screen_options{});
  INFO(screen);
  const auto steps_shown = [](const std::string& text) {
    const auto at = text.find("\nSteps: ");
    return at == std::string::npos ? -1 : std::atoi(text.c_str() + at + 8);
  };
  CHECK(steps_shown(whole) > 2);
  CHECK(steps_shown(screen) == steps_shown(whole) - 2); // step_4 and step_13 not counted
  CHECK(screen.find("Steps left out for losses: 2 (step_4, step_13); lost: 7 records dropped, 0 launches, 0 buffer errors\n") !=
        std::string::npos);
  CHECK(whole.find("Steps left out for losses") == std::string::npos);
}

TEST_CASE("colour: on a terminal only, never with NO_COLOR or TERM=dumb, forced by always; emphasis only") {
  using nvscope::color_when;
  CHECK(nvscope::use_color(color_when::automatic, true, nullptr, "xterm"));
  CHECK(!nvscope::use_color(color_when::automatic, false, nullptr, "xterm"));    // not a terminal
  CHECK(!nvscope::use_color(color_when::automatic, true, "1", "xterm"));         // NO_COLOR set
  CHECK(!nvscope::use_color(color_when::automatic, true, "no", nullptr));        // any value
  CHECK(nvscope::use_color(color_when::automatic, true, "", "xterm"));           // empty: as unset
  CHECK(!nvscope::use_color(color_when::automatic, true, nullptr, "dumb"));
  CHECK(nvscope::use_color(color_when::always, false, "1", "dumb"));             // forced
  CHECK(!nvscope::use_color(color_when::never, true, nullptr, "xterm"));
  // a pipe is not a terminal
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  std::FILE* w = ::fdopen(fds[1], "w");
  REQUIRE(w != nullptr);
  CHECK(!nvscope::use_color(color_when::automatic, w));
  CHECK(nvscope::use_color(color_when::always, w));
  std::fclose(w);
  ::close(fds[0]);
  // coloured, the text reads the same once the escapes are taken out
  const auto t = sample_trace();
  const auto r = nvscope::analyze(t);
  nvscope::screen_options o;
  o.title = "title";
  const std::string plain = nvscope::to_screen(r, t, o);
  o.color = true;
  const std::string colored = nvscope::to_screen(r, t, o);
  CHECK(plain.find('\x1b') == std::string::npos);
  CHECK(colored.find("\x1b[1mVerdict:\x1b[0m ") != std::string::npos);
  std::string stripped;
  for (std::size_t i = 0; i < colored.size(); ++i) {
    if (colored[i] == '\x1b') {
      i = colored.find('m', i);
      continue;
    }
    stripped += colored[i];
  }
  CHECK(stripped == plain);
}

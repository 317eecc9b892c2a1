// The analysis window of nvscope run on synthetic traces, and the session's end-of-run lines.
#include "session.hpp"
#include "window.hpp"

#include <doctest/doctest.h>
#include <nvscope/capture/schedule.hpp>
#include <nvscope/analyze/step_names.hpp>
#include <nvscope/export/screen.hpp>
#include "test_seed.hpp"

#include <new>
#include <random>
#include <stdexcept>
#include <string>

using namespace nvscope;
using namespace nvscope::tool;

namespace {

// Six step ranges of 100 ns from t=1000, each with one kernel launched 10 ns in and running
// 50 ns later; a "compute" range nested in each step.
trace six_steps(const char* step_name = "step") {
  trace t;
  t.begin = 900;
  t.finish = 2000;
  const auto name = t.strings.intern(step_name);
  const auto inner = t.strings.intern("compute");
  const auto kernel = t.strings.intern("k");
  for (std::uint32_t i = 0; i < 6; ++i) {
    const timestamp_ns s = 1000 + 100 * i;
    range_record step;
    step.start = s;
    step.end = s + 100;
    step.name = name;
    t.ranges.push_back(step);
    range_record c;
    c.start = s + 5;
    c.end = s + 60;
    c.name = inner;
    t.ranges.push_back(c);
    kernel_record k;
    k.start = s + 60;
    k.end = s + 110; // runs past the step's end
    k.name = kernel;
    k.correlation = i + 1;
    t.kernels.push_back(k);
    t.launches.push_back(launch_record{s + 10, i + 1, 0});
  }
  return t;
}

run_options steps(std::uint64_t skip, std::uint64_t warmup, std::uint64_t active, std::uint64_t repeat) {
  run_options o;
  o.range = capture_range::steps;
  o.skip = skip;
  o.warmup = warmup;
  o.active = active;
  o.repeat = repeat;
  return o;
}

} // namespace

TEST_CASE("--steps' glob and the analysis' step pattern made of it take the same names (issue 46)") {
  CHECK(glob_regex("train_step*") == "train_step[\\s\\S]*");
  CHECK(glob_regex("a.b?c+(d)") == "a\\.b[\\s\\S]c\\+\\(d\\)");
  NVSCOPE_SEEDED_RNG(std::mt19937_64, rng);
  const std::string alphabet = "sStep_.*?+()[]{}|^$\\ #1-9\n\xc3\xa9";
  auto word = [&](std::size_t most) {
    std::string w;
    for (std::size_t n = rng() % most; n > 0; --n) w.push_back(alphabet[rng() % alphabet.size()]);
    return w;
  };
  int hits = 0;
  for (int i = 0; i < 4000; ++i) {
    const auto glob = alphabet[rng() % alphabet.size()] + word(6), name = word(8); // an empty --steps is the default rule, not a glob
    nvscope::analysis_options o;
    o.step_pattern = glob_regex(glob);
    const bool window = glob_match(glob, name), analysis = nvscope::step_matcher(o)(name);
    CAPTURE(glob);
    CAPTURE(name);
    CHECK(window == analysis);
    CHECK_FALSE(nvscope::step_matcher(o).error());
    hits += window;
  }
  CHECK(hits > 20); // the draws matched some names, not only none
}

TEST_CASE("glob_match") {
  CHECK(glob_match("step*", "step_12"));
  CHECK(glob_match("*train*", "my_train_step"));
  CHECK(glob_match("st?p", "stop"));
  CHECK_FALSE(glob_match("step", "step_1"));
  CHECK_FALSE(glob_match("step?", "step"));
  CHECK(glob_match("*", ""));
  CHECK(glob_match("Train_Step*", "train_step_3")); // any case, as the step rule
  CHECK(glob_match("*", "*x"));                       // a '*' in the name is matched by the pattern's '*'
  CHECK(glob_match("*-", "*)*|9-"));
}

TEST_CASE("whole run: one window, the collection's span") {
  const auto c = choose_windows(six_steps(), run_options{});
  CHECK(c.whole);
  REQUIRE(c.windows.size() == 1);
  CHECK(c.windows[0].begin == 900);
  CHECK(c.windows[0].end == 2000);
}

TEST_CASE("steps: skip 1, warm up 1, record 2: steps 2 and 3 as one window") {
  const auto t = six_steps();
  const auto c = choose_windows(t, steps(1, 1, 2, 1));
  CHECK_FALSE(c.whole);
  REQUIRE(c.windows.size() == 1);
  CHECK(c.windows[0].begin == 1200);
  CHECK(c.windows[0].end == 1400);
  const trace r = restrict_to(t, c.windows);
  CHECK(r.kernels.size() == 2); // by launch time, though each runs past its step
  CHECK(r.ranges.size() == 4);
  CHECK(r.begin == 1200);
  CHECK(r.finish == 1400);
}

TEST_CASE("steps: active 1 repeat 3 gives three windows; a pattern picks the names") {
  const auto t = six_steps("train_step");
  auto o = steps(0, 1, 1, 3);
  o.steps = "train_*";
  const auto c = choose_windows(t, o);
  REQUIRE(c.windows.size() == 3);
  CHECK(c.windows[0].begin == 1100);
  CHECK(c.windows[1].begin == 1300);
  CHECK(c.windows[2].begin == 1500);
  o.steps = "step";
  const auto none = choose_windows(t, o);
  CHECK(none.windows.empty());
  CHECK(none.note.find("0 step ranges") != std::string::npos);
}

// A bounded collection keeps the raw records of the window's steps and of the last and slowest
// few only; the schedule's window comes from the steps as the collector numbered them, not from
// the kept ranges (counted again from 0, they would be numbered anew: steps 2 and 3 kept with the
// last two, 4 and 5, are ranges 0 to 3, which skip 1, warm-up 1 reads as steps 2 and 3 of the
// four: the wrong ones).
TEST_CASE("steps of a bounded collection: the window from the numbered steps, not the kept ranges") {
  auto t = six_steps();
  // keep steps 2 to 5's ranges only (each step range and its nested range: entries 4 to 11)
  t.ranges.erase(t.ranges.begin(), t.ranges.begin() + 4);
  const auto o = steps(1, 1, 2, 1); // records steps 2 and 3
  numbered_steps log;
  for (std::uint64_t n = 0; n < 6; ++n) {
    ++log.seen;
    if (schedule_of(o).phase_of(n) == capture_phase::recording) log.recorded.push_back({n, 1000 + 100 * n, 1100 + 100 * n});
  }
  REQUIRE(log.recorded.size() == 2);
  const auto c = choose_windows(t, o, &log);
  REQUIRE(c.windows.size() == 1);
  CHECK(c.windows[0].begin == 1200);
  CHECK(c.windows[0].end == 1400);
  const auto recounted = choose_windows(t, o); // what counting the kept ranges again gives
  REQUIRE(recounted.windows.size() == 1);
  CHECK(recounted.windows[0].begin == 1400);
  // two cycles (active 1, repeat 2): not joined though their numbers follow; none recorded: the note
  const auto two = steps(0, 0, 1, 2);
  numbered_steps pair{{{0, 1000, 1090}, {1, 1100, 1190}}, 6}; // joined, they would be one window over the gap
  CHECK(choose_windows(t, two, &pair).windows.size() == 2);
  numbered_steps none{{}, 6};
  const auto empty = choose_windows(t, o, &none);
  CHECK(empty.windows.empty());
  CHECK(empty.note.find("6 step ranges") != std::string::npos);
}

TEST_CASE("steps: a match nested in another match is not a step of its own") {
  auto t = six_steps();
  range_record nested = t.ranges[0];
  nested.start += 1;
  nested.end -= 1;
  t.ranges.push_back(nested);
  const auto c = choose_windows(t, steps(1, 0, 1, 1));
  REQUIRE(c.windows.size() == 1);
  CHECK(c.windows[0].begin == 1100);
}

TEST_CASE("nvtx: the first range of the name, optionally in a domain") {
  auto t = six_steps();
  range_record late;
  late.start = 1450;
  late.end = 1460;
  late.name = t.strings.intern("phase");
  late.domain = t.strings.intern("lib");
  t.ranges.push_back(late);
  range_record early = late;
  early.start = 1050;
  early.end = 1250;
  early.domain = 0;
  t.ranges.push_back(early);
  run_options o;
  o.range = capture_range::nvtx;
  o.nvtx_capture = "phase";
  auto c = choose_windows(t, o);
  REQUIRE(c.windows.size() == 1);
  CHECK(c.windows[0].begin == 1050);
  o.nvtx_capture = "phase@lib";
  c = choose_windows(t, o);
  REQUIRE(c.windows.size() == 1);
  CHECK(c.windows[0].begin == 1450);
  o.nvtx_capture = "absent";
  c = choose_windows(t, o);
  CHECK(c.windows.empty());
  CHECK(c.note == "no NVTX range 'absent' was opened");
}

TEST_CASE("cudaProfilerApi: the trace's capture windows; none said in the note") {
  auto t = six_steps();
  run_options o;
  o.range = capture_range::cuda_profiler_api;
  auto c = choose_windows(t, o);
  CHECK(c.windows.empty());
  CHECK(c.note.find("cudaProfilerStart") != std::string::npos);
  t.capture_windows.push_back(time_window{1300, 1500});
  c = choose_windows(t, o);
  REQUIRE(c.windows.size() == 1);
  CHECK(restrict_to(t, c.windows).kernels.size() == 2);
}

TEST_CASE("delay and duration clip the chosen range") {
  const auto t = six_steps();
  run_options o;
  o.delay_s = 300e-9;   // from begin (900) + 300 = 1200
  o.duration_s = 150e-9; // to 1350
  const auto c = choose_windows(t, o);
  CHECK_FALSE(c.whole);
  REQUIRE(c.windows.size() == 1);
  CHECK(c.windows[0].begin == 1200);
  CHECK(c.windows[0].end == 1350);
  CHECK(restrict_to(t, c.windows).kernels.size() == 2); // launched at 1210 and 1310
}

TEST_CASE("delay and duration past 2^64 ns: no undefined conversion, the window saturates (issue 45)") {
  const auto t = six_steps();
  run_options o;
  o.delay_s = 1e12; // begins after any trace: nothing selected (g++ had selected everything)
  auto c = choose_windows(t, o);
  CHECK(c.windows.empty());
  CHECK_FALSE(c.note.empty());
  o = run_options{};
  o.duration_s = 2e10; // lasts past any trace: the whole run (g++ had selected nothing)
  c = choose_windows(t, o);
  REQUIRE(c.windows.size() == 1);
  CHECK(c.windows[0].begin == 900);
  CHECK(c.windows[0].end == 2000);
  o.delay_s = 1e300;
  CHECK(choose_windows(t, o).windows.empty());
}

TEST_CASE("the largest schedule count the options accept selects steps (issue 45)") {
  const auto t = six_steps();
  run_options o;
  o.range = capture_range::steps;
  o.active = max_schedule_count;
  o.repeat = max_schedule_count;
  const auto c = choose_windows(t, o);
  REQUIRE(c.windows.size() == 1);
  CHECK(c.windows[0].begin == 1000);
  CHECK(c.windows[0].end == 1600);
}

TEST_CASE("restrict_to keeps ranges and marks by their start, and sets the bounds") {
  trace t;
  t.begin = 0;
  t.finish = 1000;
  range_record outer;
  outer.start = 10;
  outer.end = 900;
  range_record inner = outer;
  inner.start = 200;
  inner.end = 300;
  range_record mark = outer;
  mark.start = 250;
  mark.end = 250;
  mark.is_mark = true;
  t.ranges = {outer, inner, mark};
  const trace r = restrict_to(t, {time_window{150, 500}});
  REQUIRE(r.ranges.size() == 2);
  CHECK(r.ranges[0].start == 200);
  CHECK(r.ranges[1].is_mark);
  CHECK(r.begin == 150);
  CHECK(r.finish == 500);
  CHECK(restrict_to(t, {time_window{0, 5}, time_window{900, 950}}).ranges.empty());
}

TEST_CASE("session lines: nothing used CUDA; a process ended before writing; all written") {
  std::vector<process_notes> none;
  auto lines = session_summary(none);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0] == "nvscope: run: no process of the program used CUDA; no profile written");
  process_notes lost;
  lost.pid = 42;
  lost.kinds = {"started"};
  lost.details = {""};
  process_notes ok;
  ok.pid = 43;
  ok.kinds = {"started", "written"};
  ok.details = {"", "a.json"};
  lines = session_summary({lost, ok});
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].find("process 42 ended without writing its profile") != std::string::npos);
  CHECK(session_summary({ok}).empty());
  process_notes refused;
  refused.pid = 44;
  refused.kinds = {"unprofiled"};
  refused.details = {"no CUDA device"};
  lines = session_summary({refused});
  REQUIRE(lines.size() == 1);
  CHECK(lines[0] == "nvscope: run: no process was profiled; no profile written");
  // A launcher (torchrun's agent) loads CUDA and records nothing: silent beside a written
  // profile, named when no process wrote one.
  process_notes launcher;
  launcher.pid = 45;
  launcher.kinds = {"started", "empty"};
  launcher.details = {"", ""};
  CHECK(session_summary({launcher, ok}).empty());
  lines = session_summary({launcher});
  REQUIRE(lines.size() == 1);
  CHECK(lines[0] == "nvscope: run: no process launched GPU work or opened an NVTX range; no profile written");
}

TEST_CASE("restrict_to keeps what is not a record: strings, threads, name spellings, losses") {
  trace t;
  t.begin = 0;
  t.finish = 1000;
  t.kernel_name_spelling = name_spelling::itanium;
  t.lost.dropped_records = 3;
  t.threads.push_back({42, t.strings.intern("main")});
  kernel_record k;
  k.start = 100;
  k.end = 200;
  k.name = t.strings.intern("k");
  t.kernels.push_back(k);
  const trace r = restrict_to(t, {time_window{150, 500}});
  CHECK(r.kernels.empty()); // started (no launch known) before the window
  CHECK(r.kernel_name_spelling == name_spelling::itanium);
  CHECK(r.lost.dropped_records == 3);
  REQUIRE(r.threads.size() == 1);
  CHECK(r.strings[r.threads[0].name] == "main");
}

TEST_CASE("the files line of a process escapes each name as error lines do (issue 45)") {
  CHECK(nvscope::file_list({{"out/a.json", 10}, {"out/a.trace.json", 20}}) ==
        "out/a.json (" + nvscope::size_text(10) + "), out/a.trace.json (" + nvscope::size_text(20) + ")");
  // A %q{VAR} value holding a newline or a terminal escape: one line, each byte shown.
  const auto line = nvscope::file_list({{"out/x\nnvscope: run: fake\x1b[31m.json", 10}});
  CHECK(line.rfind("out/x\\x0anvscope: run: fake\\x1b[31m.json (", 0) == 0);
  CHECK(line.find('\n') == std::string::npos);
  CHECK(line.find('\x1b') == std::string::npos);
}

TEST_CASE("a process' end contains every exception and says in one line what was not written (issue 45)") {
  char line[512];
  CHECK_FALSE(contain_failure([] {}, 42, line));
  CHECK(contain_failure([] { throw std::length_error("cannot create std::vector larger than max_size()"); }, 42, line));
  CHECK(std::string(line) == "nvscope: run: process 42: its profile was not written (cannot create std::vector larger "
                             "than max_size()); the program's own exit is unchanged");
  CHECK(contain_failure([] { throw std::bad_alloc(); }, 7, line));
  CHECK(std::string(line) == "nvscope: run: process 7: its profile was not written (out of memory); the program's own "
                             "exit is unchanged");
  CHECK(contain_failure([] { throw 3; }, 7, line));
  CHECK(std::string(line).find("(an exception that is not a std::exception)") != std::string::npos);
  CHECK(contain_failure([] { throw std::runtime_error("two\nlines"); }, 7, line));
  CHECK(std::string(line).find("(two?lines)") != std::string::npos);
}

namespace {

// Three cudaProfilerStart/Stop pairs, the last left open at the end of the run (t.finish 2000).
trace three_profiler_windows() {
  auto t = six_steps();
  t.capture_windows = {time_window{1300, 1400}, time_window{1000, 1100}, time_window{1500, 0}};
  return t;
}

std::vector<std::pair<timestamp_ns, timestamp_ns>> bounds(const window_choice& c) {
  std::vector<std::pair<timestamp_ns, timestamp_ns>> out;
  for (const auto& w : c.windows) out.emplace_back(w.begin, w.end);
  return out;
}

using spans = std::vector<std::pair<timestamp_ns, timestamp_ns>>;

} // namespace

TEST_CASE("--capture-range-end on cudaProfilerApi: stop and stop-shutdown the first pair, repeat[:N] each, none to the end (issue 48)") {
  const auto t = three_profiler_windows();
  run_options o;
  o.range = capture_range::cuda_profiler_api;
  CHECK(bounds(choose_windows(t, o)) == spans{{1000, 1100}}); // nsys's default, stop-shutdown
  o.capture_end = range_end::stop;
  CHECK(bounds(choose_windows(t, o)) == spans{{1000, 1100}});
  o.capture_end = range_end::repeat;
  CHECK(bounds(choose_windows(t, o)) == spans{{1000, 1100}, {1300, 1400}, {1500, 2000}});
  o.capture_end_count = 2;
  CHECK(bounds(choose_windows(t, o)) == spans{{1000, 1100}, {1300, 1400}});
  o.capture_end_count = 5;
  CHECK(choose_windows(t, o).windows.size() == 3);
  o.capture_end = range_end::none;
  CHECK(bounds(choose_windows(t, o)) == spans{{1000, 2000}});
  o.capture_end = range_end::repeat;
  o.capture_end_count = 2;
  o.delay_s = 350e-9; // from 1250: the windows' part after it
  CHECK(bounds(choose_windows(t, o)) == spans{{1300, 1400}});
}

TEST_CASE("--capture-range-end on an NVTX range: each range of the name a window, nested ones inside their outer one (issue 48)") {
  auto t = six_steps(); // step ranges at 1000, 1100, ..., 1500, each 100 ns
  range_record nested;
  nested.start = 1020;
  nested.end = 1030;
  nested.name = t.strings.intern("step");
  t.ranges.push_back(nested);
  run_options o;
  o.range = capture_range::nvtx;
  o.nvtx_capture = "step";
  CHECK(bounds(choose_windows(t, o)) == spans{{1000, 1100}});
  o.capture_end = range_end::repeat;
  o.capture_end_count = 3;
  const auto c = choose_windows(t, o);
  CHECK(bounds(c) == spans{{1000, 1300}}); // three touching ranges, merged into one window
  CHECK(restrict_to(t, c.windows).kernels.size() == 3);
  o.capture_end_count = 0;
  CHECK(bounds(choose_windows(t, o)) == spans{{1000, 1600}});
  o.capture_end = range_end::none;
  CHECK(bounds(choose_windows(t, o)) == spans{{1000, 2000}});
}

TEST_CASE("--nvtx-capture as nsys: RANGE in the default domain only, RANGE@DOMAIN, RANGE@* in any (issue 48)") {
  auto t = six_steps();
  range_record in_lib;
  in_lib.start = 950;
  in_lib.end = 960;
  in_lib.name = t.strings.intern("phase");
  in_lib.domain = t.strings.intern("lib");
  t.ranges.push_back(in_lib);
  range_record plain = in_lib;
  plain.start = 1450;
  plain.end = 1470;
  plain.domain = 0;
  t.ranges.push_back(plain);
  run_options o;
  o.range = capture_range::nvtx;
  o.nvtx_capture = "phase";
  CHECK(bounds(choose_windows(t, o)) == spans{{1450, 1470}});
  o.nvtx_capture = "phase@lib";
  CHECK(bounds(choose_windows(t, o)) == spans{{950, 960}});
  o.nvtx_capture = "phase@*";
  CHECK(bounds(choose_windows(t, o)) == spans{{950, 960}});
  o.capture_end = range_end::repeat;
  CHECK(bounds(choose_windows(t, o)) == spans{{950, 960}, {1450, 1470}});
  o.nvtx_capture = "phase@other";
  CHECK(choose_windows(t, o).windows.empty());
}

// What a schedule and the NVTX capture backend send to NVTX, seen through the recording
// NVTX tool: step_N and warmup ranges properly nested, and the registered-string capture
// range opened before the first recorded step's range and closed after the last one's.
#include <doctest/doctest.h>

#include "recorder_client.hpp"

#include <nvscope/capture/nvtx_range.hpp>
#include <nvscope/capture/schedule.hpp>

#include <string>
#include <vector>

namespace {
// "push:step_0" / "pop" / "start:capture@nvscope(registered)" / "end" lines, in order.
std::vector<std::string> summary(const std::vector<nvscope_test::event>& events) {
  std::vector<std::string> out;
  for (const auto& e : nvscope_test::annotations(events)) {
    if (e.kind == "push") out.push_back("push:" + e.msg() + (e.domain().empty() ? "" : "@" + e.domain()));
    else if (e.kind == "pop") out.push_back("pop");
    else if (e.kind == "start")
      out.push_back("start:" + e.msg() + "@" + e.domain() + "(" + e.get("msgtype") + ")");
    else if (e.kind == "end") out.push_back("end");
    else out.push_back(e.kind);
  }
  return out;
}
} // namespace

TEST_CASE("step and warmup ranges, and the NVTX capture range around recorded steps") {
  auto& rec = nvscope_test::recorder::instance();
  REQUIRE_MESSAGE(rec.attached(), rec.why_not());
  nvscope::nvtx_capture_backend nvtx_capture;   // capture@nvscope
  CHECK(nvtx_capture.nsys_capture_argument() == "capture@nvscope");
  nvscope::add_capture_backend(nvtx_capture);
  rec.clear();
  {
    // 0 skipped, 1 waiting, 2-3 warm-up, 4-5 recorded; then cycle 2: 6 waiting, 7-8 warm-up, 9-10 recorded.
    nvscope::capture_schedule s(
        nvscope::schedule_options{}.skip_first(1).wait(1).warmup(2).active(2).repeat(2));
    for (int i = 0; i < 12; ++i) {
      auto step = s.step_scope();
      nvtxRangePushA("forward");   // the program's own range, nested in the step
      nvtxRangePop();
    }
  }
  nvscope::remove_capture_backend(nvtx_capture);
  const std::vector<std::string> step = {"push:forward", "pop", "pop"};
  std::vector<std::string> want;
  auto add_step = [&](int i) {
    want.push_back("push:step_" + std::to_string(i));
    want.insert(want.end(), step.begin(), step.end());
  };
  for (int cycle = 0; cycle < 2; ++cycle) {
    const int base = 1 + cycle * 5;
    if (cycle == 0) add_step(0);
    add_step(base);                  // wait
    want.push_back("push:warmup");
    add_step(base + 1);
    add_step(base + 2);
    want.push_back("pop");          // warmup
    want.push_back("start:capture@nvscope(registered)");
    add_step(base + 3);
    add_step(base + 4);
    want.push_back("end");
  }
  add_step(11);                      // finished: still a step range, never recorded
  CHECK(summary(rec.events()) == want);
}

TEST_CASE("step_ranges(false): no NVTX from the schedule") {
  auto& rec = nvscope_test::recorder::instance();
  REQUIRE_MESSAGE(rec.attached(), rec.why_not());
  rec.clear();
  {
    nvscope::capture_schedule s(nvscope::schedule_options{}.warmup(1).active(1).step_ranges(false));
    for (int i = 0; i < 3; ++i) s.step();
  }
  CHECK(nvscope_test::annotations(rec.events()).empty());
}

TEST_CASE("annotation's run-time switch also silences the schedule's step ranges") {
  auto& rec = nvscope_test::recorder::instance();
  REQUIRE_MESSAGE(rec.attached(), rec.why_not());
  rec.clear();
  nvscope::set_enabled(false);
  {
    nvscope::capture_schedule s(nvscope::schedule_options{}.warmup(1).active(1));
    for (int i = 0; i < 3; ++i) s.step();
  }
  CHECK(nvscope_test::annotations(rec.events()).empty());
  nvscope::set_enabled(true);
  rec.clear();
  {
    nvscope::capture_schedule s(nvscope::schedule_options{}.warmup(1).active(1));
    for (int i = 0; i < 2; ++i) s.step();
  }
  CHECK(summary(rec.events()) ==
        std::vector<std::string>{"push:warmup", "push:step_0", "pop", "pop", "push:step_1", "pop"});
}

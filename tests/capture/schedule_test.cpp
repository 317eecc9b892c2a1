// The step schedule against an independent expansion of every shape, with a recording
// backend: which steps are recorded, how many capture ranges, and that nothing stays open.
#include <doctest/doctest.h>
#include "test_seed.hpp"

#include <nvscope/capture/schedule.hpp>

#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using nvscope::capture_phase;

// The reference: spell the schedule out step by step ('S'kip, 'W'ait, 'U' warm-up,
// 'A'ctive, 'F'inished), cycle by cycle, independently of phase_of's arithmetic.
std::vector<char> expand(std::uint64_t skip, std::uint64_t wait, std::uint64_t warmup,
                         std::uint64_t active, std::uint64_t repeat, std::size_t steps) {
  std::vector<char> v;
  for (std::uint64_t i = 0; i < skip && v.size() < steps; ++i) v.push_back('S');
  for (std::uint64_t c = 0; (repeat == 0 || c < repeat) && v.size() < steps; ++c) {
    for (std::uint64_t i = 0; i < wait; ++i) v.push_back('W');
    for (std::uint64_t i = 0; i < warmup; ++i) v.push_back('U');
    for (std::uint64_t i = 0; i < active; ++i) v.push_back('A');
  }
  while (v.size() < steps) v.push_back('F');
  v.resize(steps);
  return v;
}

char letter(capture_phase p) {
  switch (p) {
    case capture_phase::skipped: return 'S';
    case capture_phase::waiting: return 'W';
    case capture_phase::warming_up: return 'U';
    case capture_phase::recording: return 'A';
    case capture_phase::finished: return 'F';
  }
  return '?';
}

// Capture ranges expected when `steps` steps run: one per cycle that reaches an active step.
std::size_t expected_ranges(const std::vector<char>& v, std::uint64_t wait, std::uint64_t warmup,
                            std::uint64_t active) {
  std::size_t ranges = 0;
  const std::size_t cycle = static_cast<std::size_t>(wait + warmup + active);
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (v[i] != 'A') continue;
    // First active step of a cycle: previous step is not active, or is the previous cycle's last.
    if (i == 0 || v[i - 1] != 'A') { ++ranges; continue; }
    std::size_t first_skip = 0;
    while (first_skip < v.size() && v[first_skip] == 'S') ++first_skip;
    if ((i - first_skip) % cycle == wait + warmup) ++ranges;
  }
  return ranges;
}

struct fixture {
  nvscope::recording_capture_backend fake;
  fixture() { nvscope::add_capture_backend(fake); }
  ~fixture() { nvscope::remove_capture_backend(fake); }
};

} // namespace

TEST_CASE_FIXTURE(fixture, "every shape: phases, recorded steps, capture ranges, nothing left open") {
  const std::uint64_t skips[] = {0, 1, 3};
  const std::uint64_t waits[] = {0, 2};
  const std::uint64_t warmups[] = {0, 1, 2};
  const std::uint64_t actives[] = {1, 3};
  const std::uint64_t repeats[] = {0, 1, 2, 3};
  NVSCOPE_SEEDED_RNG(std::mt19937, rng);
  int shapes = 0;
  for (auto skip : skips)
    for (auto wait : waits)
      for (auto warmup : warmups)
        for (auto active : actives)
          for (auto repeat : repeats)
            for (int style = 0; style < 2; ++style) {
              const std::size_t steps = 1 + rng() % 40;
              CAPTURE(skip); CAPTURE(wait); CAPTURE(warmup); CAPTURE(active); CAPTURE(repeat);
              CAPTURE(style); CAPTURE(steps);
              ++shapes;
              const auto want = expand(skip, wait, warmup, active, repeat, steps);
              fake.clear();
              const auto opts = nvscope::schedule_options{}.skip_first(skip).wait(wait)
                                    .warmup(warmup).active(active).repeat(repeat);
              std::string got;
              std::size_t recorded = 0;
              {
                nvscope::capture_schedule s(opts);
                for (std::size_t i = 0; i < steps; ++i) {
                  if (style == 0) {
                    auto st = s.step_scope();
                    got += letter(st.phase());
                    CHECK(st.index() == i);
                    CHECK(fake.active() == st.recording());
                    CHECK(nvscope::capture_depth() == (st.recording() ? 1u : 0u));
                    recorded += st.recording();
                  } else {
                    s.step();
                    got += letter(s.phase());
                    CHECK(s.step_index() == i);
                    CHECK(fake.active() == s.recording());
                    recorded += s.recording();
                  }
                  CHECK(letter(opts.phase_of(i)) == want[i]);
                }
                CHECK(s.recorded_steps() == recorded);
              }
              CHECK(got == std::string(want.begin(), want.end()));
              CHECK_FALSE(fake.active());
              CHECK(nvscope::capture_depth() == 0);
              CHECK(fake.starts() == fake.stops());
              CHECK(fake.double_starts() == 0);
              CHECK(fake.stray_stops() == 0);
              CHECK(fake.starts() == expected_ranges(want, wait, warmup, active));
            }
  CHECK(shapes == 3 * 2 * 3 * 2 * 4 * 2);
}

TEST_CASE_FIXTURE(fixture, "adjacent cycles are separate capture ranges") {
  nvscope::capture_schedule s(nvscope::schedule_options{}.active(2).repeat(3));
  for (int i = 0; i < 10; ++i) s.step();
  s.finish();
  CHECK(fake.starts() == 3);
  CHECK(s.capture_ranges() == 3);
  CHECK(s.recorded_steps() == 6);
}

TEST_CASE_FIXTURE(fixture, "repeat=0 records forever") {
  nvscope::capture_schedule s(nvscope::schedule_options{}.skip_first(1).wait(1).active(1).repeat(0));
  const int steps = 1001;
  for (int i = 0; i < steps; ++i) s.step();
  CHECK_FALSE(s.done());
  s.finish();
  CHECK(s.recorded_steps() == 500);
  CHECK(fake.starts() == 500);
  CHECK(fake.stops() == 500);
  CHECK(s.done());
}

TEST_CASE_FIXTURE(fixture, "a schedule destroyed mid-capture closes it") {
  for (int cut = 0; cut < 8; ++cut) {
    CAPTURE(cut);
    fake.clear();
    {
      nvscope::capture_schedule s(nvscope::schedule_options{}.skip_first(2).active(4));
      for (int i = 0; i <= cut; ++i) s.step();
      CHECK(fake.active() == (cut >= 2 && cut < 6));
    }
    CHECK_FALSE(fake.active());
    CHECK(fake.starts() == fake.stops());
    CHECK(fake.starts() == (cut >= 2 ? 1u : 0u));
  }
}

TEST_CASE_FIXTURE(fixture, "an exception inside a recorded step scope closes capture") {
  nvscope::capture_schedule s(nvscope::schedule_options{}.active(5));
  auto body = [&] {
    auto st = s.step_scope();
    REQUIRE(st.recording());
    throw std::runtime_error("step failed");
  };
  CHECK_THROWS_AS(body(), std::runtime_error);
  // The step ended; capture stays on for the next active step of the cycle...
  CHECK_FALSE(s.in_step());
  CHECK(fake.active());
  s.finish();   // ...until the schedule finishes.
  CHECK_FALSE(fake.active());
  s.step();
  CHECK(s.phase() == capture_phase::finished);
  CHECK(fake.starts() == 1);
}

TEST_CASE_FIXTURE(fixture, "a schedule nests inside a guard and a guard inside a step") {
  nvscope::capture_schedule s(nvscope::schedule_options{}.skip_first(1).active(1));
  {
    nvscope::capture_guard outer;     // the whole region captured by hand
    s.step();
    s.step();                        // recorded: nested, no new start
    { nvscope::capture_guard inner; }
    s.finish();
    CHECK(fake.active());
  }
  CHECK(fake.events() == std::vector<std::string>{"start", "stop"});
}

TEST_CASE_FIXTURE(fixture, "bad options: one error, capture off") {
  std::vector<nvscope::capture_error> seen;
  static std::vector<nvscope::capture_error>* sink;
  sink = &seen;
  auto old = nvscope::set_capture_error_handler([](const nvscope::capture_error& e) noexcept { sink->push_back(e); });
  {
    nvscope::capture_schedule s(nvscope::schedule_options{}.active(0));
    for (int i = 0; i < 5; ++i) CHECK(s.step() == capture_phase::finished);
    nvscope::capture_schedule big(nvscope::schedule_options{}.skip_first(nvscope::max_schedule_count + 1));
    CHECK(big.step() == capture_phase::finished);
  }
  nvscope::set_capture_error_handler(old);
  CHECK(fake.starts() == 0);
  REQUIRE(seen.size() == 2);
  CHECK(seen[0].code == nvscope::capture_errc::bad_schedule);
  CHECK(seen[0].message.find("active") != std::string::npos);
  CHECK(seen[1].message.find("skip_first") != std::string::npos);
}

TEST_CASE("recorded_step_count and done") {
  const auto o = nvscope::schedule_options{}.skip_first(3).warmup(2).active(4).repeat(2);
  CHECK(o.recorded_step_count() == 8);
  CHECK(nvscope::schedule_options{}.repeat(0).recorded_step_count() == 0);
  CHECK(o.starts_cycle(3));
  CHECK(o.starts_cycle(9));
  CHECK_FALSE(o.starts_cycle(4));
  CHECK_FALSE(o.starts_cycle(15));   // after the last cycle
}

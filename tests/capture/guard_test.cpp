// Capture guards: nesting, threads, exceptions, errors, listeners, backend changes.
#include <doctest/doctest.h>
#include "test_seed.hpp"

#include <nvscope/capture/guard.hpp>

#include <atomic>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

struct capture_errors {
  static std::vector<nvscope::capture_error>& seen() {
    static std::vector<nvscope::capture_error> v;
    return v;
  }
  static void handler(const nvscope::capture_error& e) noexcept { seen().push_back(e); }
};

// Each test case gets its own backend registered and errors captured.
struct fixture {
  nvscope::recording_capture_backend fake;
  nvscope::capture_error_handler old;
  fixture() {
    capture_errors::seen().clear();
    old = nvscope::set_capture_error_handler(&capture_errors::handler);
    nvscope::add_capture_backend(fake);
  }
  ~fixture() {
    nvscope::remove_capture_backend(fake);
    nvscope::set_capture_error_handler(old);
  }
};

struct counting_listener : nvscope::capture_listener {
  std::atomic<int> started{0}, stopped{0};
  void capture_started() noexcept override { ++started; }
  void capture_stopped() noexcept override { ++stopped; }
};

} // namespace

TEST_CASE_FIXTURE(fixture, "only the outermost guard reaches the backend") {
  REQUIRE(nvscope::capture_depth() == 0);
  {
    nvscope::capture_guard outer;
    CHECK(fake.active());
    CHECK(nvscope::capture_depth() == 1);
    {
      nvscope::capture_guard inner;
      nvscope::capture_guard inner2;
      CHECK(nvscope::capture_depth() == 3);
      CHECK(fake.starts() == 1);
    }
    CHECK(fake.active());
    CHECK(fake.stops() == 0);
  }
  CHECK_FALSE(fake.active());
  CHECK(fake.events() == std::vector<std::string>{"start", "stop"});
  CHECK(nvscope::capture_depth() == 0);
  CHECK(capture_errors::seen().empty());
}

TEST_CASE_FIXTURE(fixture, "sequential guards give one start/stop pair each") {
  const auto before = nvscope::capture_count();
  for (int i = 0; i < 5; ++i) {
    nvscope::capture_guard g;
  }
  CHECK(fake.starts() == 5);
  CHECK(fake.stops() == 5);
  CHECK(nvscope::capture_count() - before == 5);
}

TEST_CASE_FIXTURE(fixture, "an exception unwinds the guards and stops capture") {
  auto work = [] {
    nvscope::capture_guard g;
    nvscope::capture_guard nested;
    throw std::runtime_error("boom");
  };
  CHECK_THROWS_AS(work(), std::runtime_error);
  CHECK_FALSE(fake.active());
  CHECK(fake.starts() == 1);
  CHECK(fake.stops() == 1);
  CHECK(nvscope::capture_depth() == 0);
}

TEST_CASE_FIXTURE(fixture, "a failing backend gives one error, and capture goes on") {
  fake.fail_next_start(42, "simulated failure");
  nvscope::recording_capture_backend second("second");
  nvscope::add_capture_backend(second);
  {
    nvscope::capture_guard g;
    REQUIRE(static_cast<bool>(g.error()));
    CHECK(g.error().code == nvscope::capture_errc::backend_failed);
    CHECK(g.error().native == 42);
    CHECK(g.error().message.find("simulated failure") != std::string::npos);
    CHECK(g.error().message.find('\n') == std::string::npos);
    CHECK(second.active());          // the other backend was still started
    nvscope::capture_guard nested;   // no new error for a nested guard
    CHECK_FALSE(static_cast<bool>(nested.error()));
  }
  // The failed backend is not stopped (it never started); the other one is.
  CHECK(fake.stray_stops() == 0);
  CHECK(second.stops() == 1);
  REQUIRE(capture_errors::seen().size() == 1);
  CHECK(nvscope::last_capture_error().native == 42);
  nvscope::remove_capture_backend(second);
  // The next capture works again.
  { nvscope::capture_guard g; CHECK_FALSE(static_cast<bool>(g.error())); CHECK(fake.active()); }
}

TEST_CASE_FIXTURE(fixture, "a throwing backend is caught and reported") {
  fake.throw_next_start();
  {
    nvscope::capture_guard g;
    CHECK(g.error().code == nvscope::capture_errc::backend_threw);
    CHECK(g.error().message.find("simulated throw") != std::string::npos);
  }
  CHECK(nvscope::capture_depth() == 0);
  CHECK(capture_errors::seen().size() == 1);
}

TEST_CASE_FIXTURE(fixture, "unique_capture moves and resets") {
  nvscope::unique_capture a = nvscope::unique_capture::start();
  CHECK(a.holds());
  nvscope::unique_capture b = std::move(a);
  CHECK_FALSE(a.holds());
  CHECK(b.holds());
  CHECK(nvscope::capture_depth() == 1);
  nvscope::unique_capture c;
  c = std::move(b);
  CHECK(nvscope::capture_depth() == 1);
  c.reset();
  c.reset();
  CHECK(nvscope::capture_depth() == 0);
  CHECK(fake.events() == std::vector<std::string>{"start", "stop"});
}

TEST_CASE_FIXTURE(fixture, "listeners are told after the start and before the stop") {
  struct ordered : nvscope::capture_listener {
    nvscope::recording_capture_backend* fake;
    bool active_at_start = false, active_at_stop = false;
    void capture_started() noexcept override { active_at_start = fake->active(); }
    void capture_stopped() noexcept override { active_at_stop = fake->active(); }
  } l;
  l.fake = &fake;
  nvscope::add_capture_listener(l);
  { nvscope::capture_guard g; CHECK(nvscope::capture_active()); }
  nvscope::remove_capture_listener(l);
  CHECK(l.active_at_start);
  CHECK(l.active_at_stop);
  CHECK_FALSE(nvscope::capture_active());
}

TEST_CASE_FIXTURE(fixture, "a backend added during capture is started, removed one stopped") {
  nvscope::capture_guard g;
  nvscope::recording_capture_backend late("late");
  nvscope::add_capture_backend(late);
  CHECK(late.active());
  nvscope::remove_capture_backend(late);
  CHECK_FALSE(late.active());
  CHECK(late.events() == std::vector<std::string>{"start", "stop"});
}

TEST_CASE_FIXTURE(fixture, "a stop without a start is reported, not fatal") {
  nvscope::detail::capture_release();
  REQUIRE(capture_errors::seen().size() == 1);
  CHECK(capture_errors::seen()[0].code == nvscope::capture_errc::not_started);
  CHECK(nvscope::capture_depth() == 0);
  CHECK(fake.stops() == 0);
}

TEST_CASE_FIXTURE(fixture, "guards nest across threads: one start, one stop, always balanced") {
  counting_listener listener;
  nvscope::add_capture_listener(listener);
  const int threads = 8;
  const int rounds = 2000;
  std::atomic<int> violations{0};
  std::vector<std::thread> pool;
  const auto seed = nvscope_test::fresh_seed(); // thread t draws from seed + t
  CAPTURE(seed);
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      std::mt19937 rng(static_cast<std::mt19937::result_type>(seed + static_cast<std::uint64_t>(t)));
      for (int r = 0; r < rounds; ++r) {
        nvscope::capture_guard g;
        if (!fake.active()) ++violations;       // while any guard lives, capture is on
        if (rng() % 3 == 0) {
          nvscope::capture_guard nested;
          if (!fake.active()) ++violations;
        }
        if (rng() % 5 == 0) {
          try {
            nvscope::capture_guard thrown;
            throw 1;
          } catch (int) {
          }
        }
        if (nvscope::capture_depth() == 0) ++violations;
      }
    });
  }
  for (auto& th : pool) th.join();
  nvscope::remove_capture_listener(listener);
  CHECK(violations.load() == 0);
  CHECK(nvscope::capture_depth() == 0);
  CHECK_FALSE(fake.active());
  CHECK(fake.starts() >= 1);
  CHECK(fake.starts() == fake.stops());
  CHECK(fake.double_starts() == 0);
  CHECK(fake.stray_stops() == 0);
  CHECK(listener.started.load() == static_cast<int>(fake.starts()));
  CHECK(listener.stopped.load() == static_cast<int>(fake.stops()));
  // Strict alternation.
  const auto ev = fake.events();
  for (std::size_t i = 0; i < ev.size(); ++i) CHECK(ev[i] == (i % 2 == 0 ? "start" : "stop"));
  CHECK(capture_errors::seen().empty());
}

TEST_CASE("no backend and no listener: one warning, once") {
  struct silence {
    nvscope::capture_error_handler old = nvscope::set_capture_error_handler(&capture_errors::handler);
    ~silence() { nvscope::set_capture_error_handler(old); }
  } s;
  capture_errors::seen().clear();
  { nvscope::capture_guard g; }
  { nvscope::capture_guard g; }
  CHECK(capture_errors::seen().size() == 1);   // once per process, never for the second guard
  for (const auto& e : capture_errors::seen())
    CHECK(e.message.find("no capture backend") != std::string::npos);
}

// Threads: 16 threads annotating at once keep their own nesting and lose nothing; a
// unique_range may start on one thread and end on another.
#include <doctest/doctest.h>

#include <nvscope/annotate.hpp>

#include "recorder_client.hpp"

#include <atomic>
#include <map>
#include <string>
#include <thread>
#include <vector>

TEST_CASE("16 threads annotate concurrently with independent nesting and no lost event") {
  auto& rec = nvscope_test::recorder::instance();
  REQUIRE_MESSAGE(rec.attached(), rec.why_not());
  rec.clear();
  constexpr int threads = 16, iterations = 200;
  std::atomic<int> ready{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([t, &ready] {
      nvscope::name_current_thread(nvscope::formatted_name("annotator_%d", t));
      ready.fetch_add(1);
      while (ready.load() < threads) std::this_thread::yield();
      for (int i = 0; i < iterations; ++i) {
        NVSCOPE_RANGE("outer");
        NVSCOPE_RANGE_F("t%d_inner_%d", t, i % 4);
        {
          NVSCOPE_FUNC_RANGE();
          nvscope::mark("tick", nvscope::payload{i});
        }
      }
    });
  }
  for (auto& th : pool) th.join();
  CHECK(rec.dropped() == 0);

  std::map<std::uint64_t, std::vector<nvscope_test::event>> per_thread;
  std::map<std::uint64_t, std::string> thread_name;
  for (const auto& e : rec.events()) {
    if (e.kind == "name_thread") thread_name[e.tid()] = e.get("name");
    if (e.kind == "push" || e.kind == "pop" || e.kind == "mark") per_thread[e.tid()].push_back(e);
  }
  REQUIRE(per_thread.size() == static_cast<std::size_t>(threads));
  for (const auto& [tid, evs] : per_thread) {
    const std::string name = thread_name[tid];
    REQUIRE(name.rfind("annotator_", 0) == 0);
    const int t = std::stoi(name.substr(10));
    REQUIRE(evs.size() == static_cast<std::size_t>(iterations) * 7);
    for (int i = 0; i < iterations; ++i) {
      const auto* e = &evs[static_cast<std::size_t>(i) * 7];
      CHECK(e[0].kind == "push");
      CHECK(e[0].msg() == "outer");
      CHECK(e[0].get("depth") == "1");
      CHECK(e[1].msg() == "t" + std::to_string(t) + "_inner_" + std::to_string(i % 4));
      CHECK(e[1].get("depth") == "2");
      CHECK(e[2].kind == "push");
      CHECK(e[2].get("depth") == "3");
      CHECK(e[3].kind == "mark");
      CHECK(e[3].get("payload") == "int32:" + std::to_string(i));
      CHECK(e[4].kind == "pop");
      CHECK(e[4].get("depth") == "3");
      CHECK(e[5].get("depth") == "2");
      CHECK(e[6].get("depth") == "1");
      for (int k = 0; k < 7; ++k) CHECK_FALSE(e[k].has("error"));
    }
  }
}

TEST_CASE("a unique_range starts on one thread and ends on another") {
  auto& rec = nvscope_test::recorder::instance();
  REQUIRE_MESSAGE(rec.attached(), rec.why_not());
  rec.clear();
  nvscope::unique_range r{nvscope::domain::named("async"), "copy", nvscope::colors::orange};
  std::thread t([moved = std::move(r)]() mutable {
    moved.end();
    moved.end();
  });
  t.join();
  CHECK_FALSE(r.active());

  // Racing end() calls end it exactly once.
  nvscope::unique_range shared{"raced"};
  std::vector<std::thread> enders;
  for (int i = 0; i < 4; ++i) enders.emplace_back([&shared] { shared.end(); });
  for (auto& e : enders) e.join();

  const auto a = nvscope_test::annotations(rec.events());
  REQUIRE(a.size() == 4);
  CHECK(a[0].kind == "start");
  CHECK(a[0].domain() == "async");
  CHECK(a[1].kind == "end");
  CHECK(a[1].domain() == "async");
  CHECK(a[1].get("id") == a[0].get("id"));
  CHECK(a[1].tid() != a[0].tid());
  CHECK(a[2].kind == "start");
  CHECK(a[3].kind == "end");
  CHECK(a[3].get("id") == a[2].get("id"));
}

// The annotation layer, asserted event by event through the recording NVTX tool.
#include <doctest/doctest.h>
#include "file_text.hpp"
#include "test_seed.hpp"

#include <nvscope/annotate.hpp>

#include "recorder_client.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

using nvscope_test::event;
using nvscope_test::recorder;

int run_disabled_annotations(int n); // disabled_tu.cpp, built with NVSCOPE_DISABLE

namespace {

struct lib_a {
  static constexpr const char* name = "lib_a";
};
struct lib_b {
  static constexpr const char* name = "lib_b";
};

recorder& rec() {
  auto& r = recorder::instance();
  REQUIRE_MESSAGE(r.attached(), r.why_not());
  return r;
}

template <class F>
std::vector<event> record(F&& f) {
  auto& r = rec();
  r.clear();
  f();
  return r.events();
}

std::vector<event> only(const std::vector<event>& all, const std::string& kind) {
  std::vector<event> out;
  for (const auto& e : all)
    if (e.kind == kind) out.push_back(e);
  return out;
}

std::string hex(nvscope::color c) {
  char b[16];
  std::snprintf(b, sizeof(b), "%08x", c.argb);
  return b;
}

std::mt19937_64& rng() {
  static auto g = nvscope_test::announced_engine<std::mt19937_64>();
  return g;
}

std::string random_name(const char* prefix) {
  return std::string(prefix) + std::to_string(rng()() % 1000000007ull);
}

} // namespace

TEST_CASE("nested literal ranges push and pop in order, registered once per call site") {
  auto ev = record([] {
    for (int i = 0; i < 2; ++i) {
      NVSCOPE_RANGE("outer");
      {
        NVSCOPE_RANGE("inner");
      }
    }
  });
  const auto regs = only(ev, "register");
  REQUIRE(regs.size() == 2); // once per call site, not per iteration
  CHECK(regs[0].msg() == "outer");
  CHECK(regs[1].msg() == "inner");
  const auto a = nvscope_test::annotations(ev);
  REQUIRE(a.size() == 8);
  for (int i = 0; i < 2; ++i) {
    const event* e = &a[static_cast<std::size_t>(i) * 4];
    CHECK(e[0].kind == "push");
    CHECK(e[0].msg() == "outer");
    CHECK(e[0].get("msgtype") == "registered");
    CHECK(e[0].get("depth") == "1");
    CHECK(e[1].kind == "push");
    CHECK(e[1].msg() == "inner");
    CHECK(e[1].get("depth") == "2");
    CHECK(e[2].kind == "pop");
    CHECK(e[2].get("depth") == "2");
    CHECK(e[3].kind == "pop");
    CHECK(e[3].get("depth") == "1");
    for (int k = 0; k < 4; ++k) {
      CHECK(e[k].domain() == "");
      CHECK_FALSE(e[k].has("error"));
    }
  }
}

TEST_CASE("domains are separate: tag types, run-time names, and the default domain") {
  auto ev = record([] {
    NVSCOPE_RANGE_IN(lib_a, "work");
    NVSCOPE_RANGE_IN(lib_b, "work");
    nvscope::scoped_range same_as_a{nvscope::domain::named("lib_a"), "runtime_work"};
    NVSCOPE_RANGE("work");
  });
  const auto creates = only(ev, "domain_create");
  std::map<std::string, int> created;
  for (const auto& c : creates) ++created[c.domain()];
  CHECK(created["lib_a"] == 1); // the tag and the run-time name share one domain
  CHECK(created["lib_b"] == 1);
  const auto regs = only(ev, "register");
  std::map<std::string, int> reg_per_domain;
  for (const auto& r : regs) ++reg_per_domain[r.domain() + "/" + r.msg()];
  CHECK(reg_per_domain["lib_a/work"] == 1);
  CHECK(reg_per_domain["lib_b/work"] == 1);
  CHECK(reg_per_domain["lib_a/runtime_work"] == 1);
  CHECK(reg_per_domain["/work"] == 1);
  const auto pushes = only(ev, "push");
  REQUIRE(pushes.size() == 4);
  CHECK(pushes[0].domain() == "lib_a");
  CHECK(pushes[1].domain() == "lib_b");
  CHECK(pushes[2].domain() == "lib_a");
  CHECK(pushes[2].msg() == "runtime_work");
  CHECK(pushes[3].domain() == "");
  CHECK(pushes[0].get("depth") == "1"); // nesting is per domain
  CHECK(pushes[1].get("depth") == "1");
  CHECK(pushes[2].get("depth") == "2"); // inside lib_a's "work"
  CHECK(pushes[3].get("depth") == "1");
  for (const auto& p : pushes) CHECK_FALSE(p.has("error")); // strings registered in their own domain
  const auto pops = only(ev, "pop");
  REQUIRE(pops.size() == 4);
  CHECK(pops[0].domain() == "");
  CHECK(pops[1].domain() == "lib_a");
  CHECK(pops[2].domain() == "lib_b");
  CHECK(pops[3].domain() == "lib_a");
  CHECK(nvscope::domain::named("lib_a") == nvscope::domain::of<lib_a>());
  CHECK(nvscope::domain::named("lib_a") != nvscope::domain::of<lib_b>());
  CHECK(nvscope::domain::named(nullptr).is_default());
  CHECK(nvscope::domain::named("").is_default());
  CHECK(std::string(nvscope::domain::of<lib_b>().name()) == "lib_b");
}

TEST_CASE("colours: explicit ARGB/RGB/palette, automatic from the name, configurable") {
  const std::string auto_name = random_name("auto_");
  const auto r = static_cast<std::uint8_t>(rng()()), g = static_cast<std::uint8_t>(rng()()),
             b = static_cast<std::uint8_t>(rng()()), al = static_cast<std::uint8_t>(rng()());
  auto ev = record([&] {
    nvscope::scoped_range a{auto_name};
    NVSCOPE_RANGE("rgb", nvscope::color::rgb(r, g, b));
    nvscope::scoped_range c{"argb", nvscope::color::from_argb(al, r, g, b)};
    NVSCOPE_RANGE("palette", nvscope::colors::purple);
    NVSCOPE_RANGE("literal_auto_colour");
  });
  const auto p = only(ev, "push");
  REQUIRE(p.size() == 5);
  CHECK(p[0].get("color") == hex(nvscope::color_for(auto_name)));
  CHECK(p[1].get("color") == hex(nvscope::color{0xFF000000u | (std::uint32_t{r} << 16) | (std::uint32_t{g} << 8) | b}));
  CHECK(p[2].get("color") == hex(nvscope::color{(std::uint32_t{al} << 24) | (std::uint32_t{r} << 16) | (std::uint32_t{g} << 8) | b}));
  CHECK(p[3].get("color") == hex(nvscope::colors::purple));
  CHECK(p[4].get("color") == hex(nvscope::color_for("literal_auto_colour")));

  // The automatic colour is one of the palette's and depends only on the name's bytes.
  bool in_palette = false;
  for (auto c : nvscope::colors::palette) in_palette = in_palette || c == nvscope::color_for(auto_name);
  CHECK(in_palette);
  CHECK(nvscope::color_for(auto_name) == nvscope::color_for(std::string(auto_name)));

  nvscope::set_auto_colors(nvscope::auto_colors::off);
  auto off = record([&] { nvscope::scoped_range x{auto_name + "_off"}; });
  nvscope::set_auto_colors(nvscope::auto_colors::spectrum);
  auto spec = record([&] { nvscope::scoped_range x{auto_name + "_spec"}; });
  nvscope::set_auto_colors(nvscope::auto_colors::palette);
  REQUIRE(only(off, "push").size() == 1);
  CHECK_FALSE(only(off, "push")[0].has("color"));
  REQUIRE(only(spec, "push").size() == 1);
  CHECK(only(spec, "push")[0].get("color") == hex(nvscope::color_for(auto_name + "_spec", nvscope::auto_colors::spectrum)));
}

TEST_CASE("automatic colours are the same in two other processes") {
  std::vector<std::string> names;
  for (int i = 0; i < 8; ++i) names.push_back(random_name("proc_name_"));
  std::string args;
  for (const auto& n : names) args += " " + n;
  std::map<std::string, std::string> seen[2];
  for (int run = 0; run < 2; ++run) {
    const std::string log = (std::filesystem::temp_directory_path() /
                             ("nvscope_color_probe_" + std::to_string(::getpid()) + "_" + std::to_string(run) + ".log"))
                                .string();
    std::remove(log.c_str());
    const std::string cmd = std::string("NVSCOPE_RECORDER_LOG=") + log + " " + NVSCOPE_COLOR_PROBE + args;
    REQUIRE(std::system(cmd.c_str()) == 0);
    for (const auto& e : nvscope_test::parse_log(nvscope_test::file_text(log)))
      if (e.kind == "push") seen[run][e.msg()] = e.get("color");
    std::remove(log.c_str());
  }
  for (const auto& n : names) {
    REQUIRE(seen[0].count(n) == 1);
    CHECK(seen[0][n] == seen[1][n]);
    CHECK(seen[0][n] == hex(nvscope::color_for(n))); // and the same as in this process
  }
  CHECK(seen[0]["probe_literal"] == hex(nvscope::color_for("probe_literal")));
}

TEST_CASE("categories: ids on ranges and marks, names per domain") {
  const auto id = static_cast<std::uint32_t>(1 + rng()() % 1000);
  auto ev = record([&] {
    nvscope::name_category(nvscope::category{id}, "io");
    nvscope::domain::of<lib_a>().name_category(id + 1, "compute");
    nvscope::name_category<lib_b>(nvscope::category{id + 2}, "comm");
    NVSCOPE_RANGE("with_category", nvscope::category{id});
    nvscope::mark("mark_category", nvscope::category{id + 1});
  });
  const auto names = only(ev, "name_category");
  REQUIRE(names.size() == 3);
  CHECK(names[0].domain() == "");
  CHECK(names[0].get("category") == std::to_string(id));
  CHECK(names[0].get("name") == "io");
  CHECK(names[1].domain() == "lib_a");
  CHECK(names[1].get("category") == std::to_string(id + 1));
  CHECK(names[2].domain() == "lib_b");
  CHECK(names[2].get("name") == "comm");
  REQUIRE(only(ev, "push").size() == 1);
  CHECK(only(ev, "push")[0].get("category") == std::to_string(id));
  REQUIRE(only(ev, "mark").size() == 1);
  CHECK(only(ev, "mark")[0].get("category") == std::to_string(id + 1));
}

TEST_CASE("payloads of all six types carry their values") {
  const auto i32 = static_cast<std::int32_t>(rng()());
  const auto i64 = static_cast<std::int64_t>(rng()());
  const auto u32 = static_cast<std::uint32_t>(rng()());
  const auto u64 = static_cast<std::uint64_t>(rng()());
  const float f = std::uniform_real_distribution<float>(-1e6f, 1e6f)(rng());
  const double d = std::uniform_real_distribution<double>(-1e12, 1e12)(rng());
  auto ev = record([&] {
    NVSCOPE_RANGE("p_i32", nvscope::payload{i32});
    NVSCOPE_RANGE("p_i64", i64);
    nvscope::scoped_range a{"p_u32", nvscope::payload{u32}};
    nvscope::unique_range b{"p_u64", nvscope::payload{u64}};
    nvscope::mark("p_f", f);
    nvscope::mark("p_d", nvscope::payload{d}, nvscope::colors::red);
  });
  std::map<std::string, std::string> got;
  for (const auto& e : ev)
    if (e.kind == "push" || e.kind == "start" || e.kind == "mark") got[e.msg()] = e.get("payload");
  CHECK(got["p_i32"] == "int32:" + std::to_string(i32));
  CHECK(got["p_i64"] == "int64:" + std::to_string(i64));
  CHECK(got["p_u32"] == "uint32:" + std::to_string(u32));
  CHECK(got["p_u64"] == "uint64:" + std::to_string(u64));
  REQUIRE(got["p_f"].rfind("float:", 0) == 0);
  CHECK(std::strtof(got["p_f"].c_str() + 6, nullptr) == f);
  REQUIRE(got["p_d"].rfind("double:", 0) == 0);
  CHECK(std::strtod(got["p_d"].c_str() + 7, nullptr) == d);
}

TEST_CASE("run-time names are registered once per distinct name; past the cap they go plain") {
  const std::string n1 = random_name("dyn_"), n2 = random_name("dyn_");
  auto ev = record([&] {
    for (int i = 0; i < 3; ++i) {
      nvscope::scoped_range a{n1};
      nvscope::scoped_range b{std::string_view(n2)};
      nvscope::mark(n1.c_str());
    }
  });
  const auto regs = only(ev, "register");
  REQUIRE(regs.size() == 2);
  CHECK(regs[0].msg() == n1);
  CHECK(regs[1].msg() == n2);
  for (const auto& e : nvscope_test::annotations(ev))
    if (e.kind != "pop") CHECK(e.get("msgtype") == "registered");

  // A fresh domain takes max_registered_names_per_domain names, then sends them plain.
  nvscope::domain cap = nvscope::domain::named(random_name("cap_domain_"));
  const std::size_t limit = nvscope::detail::max_registered_names_per_domain;
  auto all = record([&] {
    for (std::size_t i = 0; i <= limit; ++i) nvscope::mark(cap, "n" + std::to_string(i));
  });
  const auto marks = only(all, "mark");
  REQUIRE(marks.size() == limit + 1);
  CHECK(only(all, "register").size() == limit);
  CHECK(marks[limit - 1].get("msgtype") == "registered");
  CHECK(marks[limit].get("msgtype") == "ascii");
  CHECK(marks[limit].msg() == "n" + std::to_string(limit)); // shown, not lost
}

TEST_CASE("formatted names: no repeat registration, truncation with a marker, UTF-8 kept whole") {
  auto ev = record([] {
    for (int rep = 0; rep < 2; ++rep)
      for (int layer = 0; layer < 3; ++layer) {
        NVSCOPE_RANGE_F("layer_%d", layer);
      }
  });
  const auto regs = only(ev, "register");
  REQUIRE(regs.size() == 3);
  const auto pushes = only(ev, "push");
  REQUIRE(pushes.size() == 6);
  for (int i = 0; i < 6; ++i) CHECK(pushes[static_cast<std::size_t>(i)].msg() == "layer_" + std::to_string(i % 3));

  const std::string long_part(400, 'x');
  const std::string accents = [] { std::string s; for (int i = 0; i < 200; ++i) s += "\xC3\xA9"; return s; }();
  auto tr = record([&] {
    NVSCOPE_RANGE_F("long_%s", long_part.c_str());
    NVSCOPE_RANGE_F_IN(lib_a, "%s", accents.c_str());
    nvscope::formatted_name n("%s", long_part.c_str());
    CHECK(n.truncated());
    CHECK(n.size() == nvscope::max_name_length);
  });
  const auto tp = only(tr, "push");
  REQUIRE(tp.size() == 2);
  const std::string m0 = tp[0].msg(), m1 = tp[1].msg();
  CHECK(m0.size() == nvscope::max_name_length);
  CHECK(m0 == ("long_" + long_part).substr(0, nvscope::max_name_length - 3) + "...");
  CHECK(tp[1].domain() == "lib_a");
  CHECK(m1.size() <= nvscope::max_name_length);
  CHECK(m1.size() >= nvscope::max_name_length - 4);
  CHECK(m1.substr(m1.size() - 3) == "...");
  CHECK(nvscope::detail::name_is_clean(m1.data(), m1.size())); // cut between characters
  CHECK(accents.compare(0, m1.size() - 3, m1, 0, m1.size() - 3) == 0);
}

TEST_CASE("misuse is defined: null, empty, invalid UTF-8, over-long, bad format") {
  auto ev = record([] {
    nvscope::scoped_range a{static_cast<const char*>(nullptr)};
    nvscope::scoped_range b{""};
    nvscope::scoped_range c{"ok\xFF\xFE" "bad\xC3"};
    nvscope::scoped_range d{std::string_view("nul\0inside", 10)};
    nvscope::mark(std::string(1000, 'y'));
    nvscope::unique_range e{static_cast<const char*>(nullptr)};
    nvscope::name_current_thread(nullptr);
  });
  const auto p = only(ev, "push");
  REQUIRE(p.size() == 4);
  CHECK(p[0].msg() == "(null)");
  CHECK(p[1].msg() == "(unnamed)");
  CHECK(p[2].msg() == "ok??bad?");
  CHECK(p[3].msg() == "nul?inside");
  const auto m = only(ev, "mark");
  REQUIRE(m.size() == 1);
  CHECK(m[0].msg() == std::string(nvscope::max_name_length - 3, 'y') + "...");
  REQUIRE(only(ev, "start").size() == 1);
  CHECK(only(ev, "start")[0].msg() == "(null)");
  REQUIRE(only(ev, "name_thread").size() == 1);
  CHECK(only(ev, "name_thread")[0].get("name") == "(null)");
  for (const auto& e : ev) CHECK_FALSE(e.has("error"));
}

TEST_CASE("marks carry names, domains and options; threads get names") {
  const std::string label = random_name("worker_");
  auto ev = record([&] {
    NVSCOPE_MARK("mark_literal");
    NVSCOPE_MARK_IN(lib_b, "mark_in_b", nvscope::payload{3u});
    nvscope::mark(nvscope::domain::named("lib_a"), "mark_in_a");
    nvscope::name_current_thread(label);
  });
  const auto m = only(ev, "mark");
  REQUIRE(m.size() == 3);
  CHECK(m[0].msg() == "mark_literal");
  CHECK(m[0].domain() == "");
  CHECK(m[0].get("color") == hex(nvscope::color_for("mark_literal")));
  CHECK(m[1].domain() == "lib_b");
  CHECK(m[1].get("payload") == "uint32:3");
  CHECK(m[2].domain() == "lib_a");
  const auto t = only(ev, "name_thread");
  REQUIRE(t.size() == 1);
  CHECK(t[0].get("name") == label);
  CHECK(t[0].get("thread") == std::to_string(nvscope::current_os_thread_id()));
  CHECK(t[0].get("tid") == t[0].get("thread"));
}

namespace {
void throws_through_ranges(int depth) {
  NVSCOPE_RANGE_F("throw_depth_%d", depth);
  nvscope::unique_range u{"throw_unique"};
  if (depth == 0) throw std::runtime_error("boom");
  throws_through_ranges(depth - 1);
}
} // namespace

TEST_CASE("exceptions unwinding through ranges close every one of them") {
  auto ev = record([] {
    NVSCOPE_RANGE("catcher");
    CHECK_THROWS_AS(throws_through_ranges(3), std::runtime_error);
    NVSCOPE_RANGE("after");
  });
  const auto a = nvscope_test::annotations(ev);
  int depth = 0, starts = 0, ends = 0;
  for (const auto& e : a) {
    if (e.kind == "push") CHECK(std::stoi(e.get("depth")) == ++depth);
    if (e.kind == "pop") CHECK(std::stoi(e.get("depth")) == depth--);
    starts += e.kind == "start";
    ends += e.kind == "end";
    CHECK_FALSE(e.has("error"));
  }
  CHECK(depth == 0);
  CHECK(starts == 4);
  CHECK(ends == 4);
  CHECK(only(ev, "push").size() == 6);
  CHECK(only(ev, "push")[5].msg() == "after");
  CHECK(only(ev, "push")[5].get("depth") == "2");
}

TEST_CASE("unique_range: end is idempotent, the destructor ends, moved-from ends nothing") {
  auto ev = record([] {
    nvscope::unique_range a{"u_a"};
    CHECK(a.active());
    a.end();
    a.end();
    CHECK_FALSE(a.active());
    {
      nvscope::unique_range never_ended{"u_b", nvscope::colors::cyan};
    }
    nvscope::unique_range c{nvscope::domain::of<lib_a>(), "u_c"};
    nvscope::unique_range d = std::move(c);
    CHECK_FALSE(c.active());
    CHECK(d.active());
    nvscope::unique_range e{"u_e"};
    d = std::move(e); // ends u_c first
    d.end();
    nvscope::unique_range empty;
    empty.end();
  });
  const auto a = nvscope_test::annotations(ev);
  std::vector<std::string> seq;
  std::map<std::string, std::string> id_of;
  for (const auto& e : a) {
    if (e.kind == "start") {
      id_of[e.get("id")] = e.msg();
      seq.push_back("start " + e.msg());
    } else if (e.kind == "end") {
      seq.push_back("end " + id_of[e.get("id")]);
    }
  }
  const std::vector<std::string> expected = {"start u_a", "end u_a", "start u_b", "end u_b", "start u_c",
                                             "start u_e", "end u_c", "end u_e"};
  CHECK(seq == expected);
}

TEST_CASE("the run-time switch: nothing reaches NVTX while disabled; open ranges still close") {
  const std::string n = random_name("rt_");
  std::vector<event> ev = record([&] {
    NVSCOPE_RANGE("open_while_enabled");
    nvscope::set_enabled(false);
    CHECK_FALSE(nvscope::enabled());
    NVSCOPE_RANGE("rt_never_registered_site");
    NVSCOPE_FUNC_RANGE();
    NVSCOPE_RANGE_F("rt_%s", n.c_str());
    nvscope::scoped_range r{n};
    nvscope::unique_range u{n};
    nvscope::mark(n);
    nvscope::name_current_thread(n);
    nvscope::name_category(nvscope::category{9}, n);
    nvscope::set_enabled(true);
  });
  const auto a = nvscope_test::annotations(ev);
  REQUIRE(a.size() == 2);
  CHECK(a[0].kind == "push");
  CHECK(a[0].msg() == "open_while_enabled");
  CHECK(a[1].kind == "pop");
  for (const auto& e : ev) {
    if (e.kind == "register") CHECK(e.msg() == "open_while_enabled");
    CHECK(e.kind != "name_thread");
    CHECK(e.kind != "name_category");
  }
  // And back on: the site skipped while disabled registers now.
  auto on = record([] {
    for (int i = 0; i < 1; ++i) {
      NVSCOPE_RANGE("rt_after");
    }
  });
  CHECK(only(on, "push").size() == 1);
}

TEST_CASE("the compile-time switch: a TU built with NVSCOPE_DISABLE emits nothing") {
  int result = 0;
  auto ev = record([&] { result = run_disabled_annotations(5); });
  CHECK(result == 5); // enabled() is false there, whatever set_enabled says
  CHECK(ev.empty());
  CHECK(nvscope::compiled_in());
}

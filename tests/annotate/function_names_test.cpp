// NVSCOPE_FUNC_RANGE names: free functions, members, overloads, lambdas, templates.
#include <doctest/doctest.h>

#include <nvscope/annotate.hpp>

#include "recorder_client.hpp"

#include <set>
#include <string>
#include <vector>

namespace {
std::string fname(const char* pretty, int line = 7) {
  char out[nvscope::max_name_length + 1];
  const std::size_t n = nvscope::detail::function_name(pretty, line, out);
  return std::string(out, n);
}
} // namespace

TEST_CASE("function_name turns compiler signatures into readable names") {
  CHECK(fname("void free_fn()") == "free_fn()");
  CHECK(fname("int ns::widget::area() const") == "ns::widget::area() const");
  CHECK(fname("static void ns::widget::make(int)") == "ns::widget::make(int)");
  CHECK(fname("ns::widget::widget(int)") == "ns::widget::widget(int)");
  CHECK(fname("T ns::twice(T) [with T = float]") == "ns::twice(T)");
  CHECK(fname("std::vector<int, std::allocator<int> > ns::make(std::size_t)") == "ns::make(std::size_t)");
  CHECK(fname("void ns::box<T>::put(const T&) [with T = std::pair<int, int>]") == "ns::box<T>::put(const T&)");
  CHECK(fname("bool ns::operator<(const ns::a&, const ns::a&)") == "ns::operator<(const ns::a&, const ns::a&)");
  CHECK(fname("void ns::f::operator()(int) const") == "ns::f::operator()(int) const");
  CHECK(fname("ns::f::operator bool() const") == "ns::f::operator bool() const");
  CHECK(fname("std::ostream& operator<<(std::ostream&, const ns::a&)") == "operator<<(std::ostream&, const ns::a&)");
  CHECK(fname("train(int)::<lambda(float)>", 42) == "train(int)::<lambda(float)> [line 42]");
  CHECK(fname("auto train(int)::(anonymous class)::operator()(float) const", 9) ==
        "train(int)::(anonymous class)::operator()(float) const [line 9]");
  CHECK(fname("void _GLOBAL__N__b33a2428_11_annotate_cu_main::forward(model&)") == "{anonymous}::forward(model&)");
  CHECK(fname("void {anonymous}::run()") == "{anonymous}::run()");
  CHECK(fname(nullptr) == "(unknown function)");
  const std::string huge = "void " + std::string(600, 'n') + "()";
  const std::string h = fname(huge.c_str());
  CHECK(h.size() == nvscope::max_name_length);
  CHECK(h.substr(h.size() - 3) == "...");
}

namespace fnames {
void free_fn() { NVSCOPE_FUNC_RANGE(); }
void overloaded(int) { NVSCOPE_FUNC_RANGE(); }
void overloaded(double) { NVSCOPE_FUNC_RANGE(); }
struct widget {
  int area() const {
    NVSCOPE_FUNC_RANGE();
    return 1;
  }
};
template <class T>
T twice(T v) {
  NVSCOPE_FUNC_RANGE();
  return v + v;
}
void lambdas() {
  auto a = [] { NVSCOPE_FUNC_RANGE(); };
  auto b = [] { NVSCOPE_FUNC_RANGE(); };
  a();
  b();
}
} // namespace fnames

TEST_CASE("NVSCOPE_FUNC_RANGE names functions readably, once per call site") {
  auto& rec = nvscope_test::recorder::instance();
  REQUIRE_MESSAGE(rec.attached(), rec.why_not());
  rec.clear();
  for (int i = 0; i < 2; ++i) {
    fnames::free_fn();
    fnames::overloaded(1);
    fnames::overloaded(1.0);
    (void)fnames::widget{}.area();
    (void)fnames::twice(1);
    (void)fnames::twice(1.5f);
    fnames::lambdas();
  }
  std::vector<std::string> regs, pushes;
  for (const auto& e : rec.events()) {
    if (e.kind == "register") regs.push_back(e.msg());
    if (e.kind == "push") pushes.push_back(e.msg());
  }
  REQUIRE(pushes.size() == 16);
  // Once per distinct name, not per call (the two instantiations of twice share a name).
  REQUIRE(regs.size() == std::set<std::string>(pushes.begin(), pushes.end()).size());
  REQUIRE(std::set<std::string>(regs.begin(), regs.end()).size() == regs.size());
  for (std::size_t i = 0; i < 8; ++i) CHECK(pushes[i] == pushes[i + 8]);
  CHECK(pushes[1] != pushes[2]); // overloads differ
  CHECK(pushes[6] != pushes[7]); // two lambdas of one function differ
#if defined(__GNUC__) && !defined(__clang__)
  CHECK(pushes[0] == "fnames::free_fn()");
  CHECK(pushes[1] == "fnames::overloaded(int)");
  CHECK(pushes[2] == "fnames::overloaded(double)");
  CHECK(pushes[3] == "fnames::widget::area() const");
  CHECK(pushes[4] == "fnames::twice(T)"); // template arguments trimmed
  CHECK(pushes[5] == "fnames::twice(T)");
  CHECK(pushes[6].rfind("fnames::lambdas()::<lambda()> [line ", 0) == 0);
  CHECK(pushes[7].rfind("fnames::lambdas()::<lambda()> [line ", 0) == 0);
#endif
}

namespace {
struct solver {
  static constexpr const char* name = "solver";
};
} // namespace

TEST_CASE("NVSCOPE_FUNC_RANGE_IN and options") {
  auto& rec = nvscope_test::recorder::instance();
  REQUIRE_MESSAGE(rec.attached(), rec.why_not());
  rec.clear();
  {
    NVSCOPE_FUNC_RANGE_IN(solver, nvscope::colors::green, nvscope::payload{2});
  }
  const auto a = nvscope_test::annotations(rec.events());
  REQUIRE(a.size() == 2);
  CHECK(a[0].domain() == "solver");
  CHECK(a[0].get("payload") == "int32:2");
  CHECK(a[0].get("color") == "ff2fa84f");
  CHECK(a[0].msg().find("NVSCOPE_FUNC_RANGE_IN and options") == std::string::npos); // not the test's title
  CHECK_FALSE(a[0].msg().empty());
}

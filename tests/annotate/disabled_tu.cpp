// Every annotation macro and type, used in one TU. annotate_test builds it with
// NVSCOPE_DISABLE and checks that nothing reaches NVTX; annotate_*_tu_nvtx_symbols check
// its object file with nm (built with and without the switch).
#include <nvscope/annotate.hpp>

#include <utility>

namespace {
struct probe_domain {
  static constexpr const char* name = "probe_domain";
};
} // namespace

int run_disabled_annotations(int n) {
  int sum = 0;
  nvscope::name_current_thread("disabled_thread");
  nvscope::name_category(nvscope::category{1}, "cat");
  nvscope::domain d = nvscope::domain::named("disabled_domain");
  d.name_category(2, "cat2");
  NVSCOPE_FUNC_RANGE();
  NVSCOPE_FUNC_RANGE_IN(probe_domain, nvscope::colors::red);
  for (int i = 0; i < n; ++i) {
    NVSCOPE_RANGE("disabled_literal");
    NVSCOPE_RANGE("disabled_options", nvscope::colors::blue, nvscope::category{1}, nvscope::payload{i});
    NVSCOPE_RANGE_IN(probe_domain, "disabled_in_domain", 2.5);
    NVSCOPE_RANGE_F("disabled_%d", i);
    NVSCOPE_RANGE_F_IN(probe_domain, "disabled_in_%d", i);
    NVSCOPE_MARK("disabled_mark", i);
    NVSCOPE_MARK_IN(probe_domain, "disabled_mark_in");
    nvscope::scoped_range r{"disabled_runtime"};
    nvscope::scoped_range r2{d, "disabled_runtime_in", nvscope::colors::green};
    nvscope::unique_range u{"disabled_unique", nvscope::payload{1.5f}};
    nvscope::unique_range moved = std::move(u);
    moved.end();
    nvscope::mark("disabled_fn_mark", std::uint64_t{7});
    nvscope::mark_in<probe_domain>("disabled_fn_mark_in");
    nvscope::set_enabled(true); // no effect when compiled out
    sum += nvscope::enabled() ? 1000 : 1;
  }
  return sum;
}

// libFuzzer target: `nvscope diff`'s reader of saved summaries, then its comparison and its
// three outputs, on arbitrary bytes. The input is two summaries separated by a NUL byte (no
// NUL: the input against itself). The reader never crashes, says why when it refuses, and
// what it accepts is well formed; two accepted summaries that share a group compare, and the
// text table stays one row a group (no control byte but the line ends), the CSV has its
// header, the JSON parses back.

#include "diff_command.hpp"

#include <nvscope/analyze/diagnose/compare.hpp>
#include <nvscope/export/diagnosis_json.hpp>
#include <nvscope/export/diagnosis_text.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>

namespace {

[[noreturn]] void broken(const char* what) {
  std::fprintf(stderr, "diff property broken: %s\n", what);
  std::abort();
}

void check_read(const nvscope::run_samples& s) {
  for (const auto* sets : {&s.kernels, &s.ranges, &s.steps, &s.ranges_gpu, &s.steps_gpu})
    for (const auto& set : *sets)
      if (!std::is_sorted(set.ns.begin(), set.ns.end()) || set.count < set.ns.size()) broken("a set unsorted or miscounted");
}

bool shares_a_group(const nvscope::run_samples& a, const nvscope::run_samples& b) {
  std::set<std::string> names;
  for (const auto* sets : {&a.kernels, &a.ranges, &a.steps, &a.ranges_gpu, &a.steps_gpu})
    for (const auto& set : *sets) names.insert(set.name);
  for (const auto* sets : {&b.kernels, &b.ranges, &b.steps, &b.ranges_gpu, &b.steps_gpu})
    for (const auto& set : *sets)
      if (names.count(set.name)) return true;
  return false;
}

void check_outputs(const nvscope::run_samples& a, const nvscope::run_samples& b) {
  nvscope::compare_options o;
  o.resamples = 100; // the fewest the command accepts: the outputs, not the statistics, are fuzzed
  const auto c = nvscope::compare_runs(a, b, o);
  const std::string text = nvscope::comparison_text(c, o);
  for (const char ch : text)
    if ((static_cast<unsigned char>(ch) < 0x20 && ch != '\n') || ch == 0x7f) broken("a control byte in the text table");
  if (static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')) != c.rows.size() + 3)
    broken("the text table is not one line a group");
  if (nvscope::comparison_csv(c).rfind("Group,Name,", 0) != 0) broken("the CSV lost its header");
  if (nlohmann::json::parse(nvscope::comparison_json(c, o), nullptr, false).is_discarded()) broken("the JSON does not parse");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::size_t nul = input.find('\0');
  const std::string_view first = input.substr(0, nul);
  const std::string_view second = nul == std::string_view::npos ? first : input.substr(nul + 1);
  nvscope::run_samples s[2];
  bool ok[2];
  const std::string_view texts[2] = {first, second};
  for (int k = 0; k < 2; ++k) {
    std::string error;
    ok[k] = nvscope::tool::read_samples(texts[k], s[k], error);
    if (!ok[k] && error.empty()) broken("a refusal without a reason");
    if (ok[k]) check_read(s[k]);
  }
  if (ok[0] && ok[1] && shares_a_group(s[0], s[1])) check_outputs(s[0], s[1]);
  return 0;
}

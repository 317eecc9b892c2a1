// What 20 M records a second asks of analyze (issue 13's target), on this machine: the
// primitives its passes are made of, each timed alone on the synthetic trace at 2 M kernels
// (tests/analyze/synthetic_trace.hpp, ~4.1 M records), next to analyze's passes and the whole.
// Everything warm (its buffers reused, best and median of several calls in one process): the
// figures bound the passes' own work, not this VM's price of fresh pages (scale_bench's).
//
//   floor_bench [metrics.json]   its figures as one JSON object to the file, or stdout; a line
//                                a figure to stderr
//
// A primitive is the least a pass's output asks for: the kernel summary's statistics need the
// durations grouped by name (one counting sort), a median needs a selection over a column, the
// launch statistics need each kernel's launch found by correlation and read. 20 M records a
// second at 2 M kernels is ~205 ms for all of it.
#define NVSCOPE_IMPLEMENTATION // this program's one file with the analysis definitions (docs/analysis.md, "Building")
#include "synthetic_trace.hpp"

#include <nvscope/analysis.hpp>
#include <nvscope/export/output_path.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <numeric>
#include <string>
#include <vector>

namespace {

using namespace nvscope;

volatile std::uint64_t keep_result; // what each timed call made, so that it is made

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

struct figure {
  double best_ms, median_ms;
};

template <class F>
figure timed(int calls, F&& f) {
  std::vector<double> ms;
  for (int i = 0; i < calls; ++i) {
    const double start = now();
    keep_result = f();
    ms.push_back(1e3 * (now() - start));
  }
  std::sort(ms.begin(), ms.end());
  return {ms.front(), ms[ms.size() / 2]};
}

std::string json;

void report(const char* kind, const char* name, figure f) {
  std::fprintf(stderr, "%-9s %-46s best %7.2f ms  median %7.2f ms\n", kind, name, f.best_ms, f.median_ms);
  char entry[160];
  std::snprintf(entry, sizeof entry, "%s\"%s_%s_ms\": [%.2f, %.2f]", json.size() > 1 ? ", " : "", kind, name, f.best_ms, f.median_ms);
  json += entry;
}

void primitives(const trace& t) {
  const std::size_t n = t.kernels.size();
  constexpr int calls = 9;
  report("primitive", "read_kernel_records", timed(calls, [&] {
    std::uint64_t s = 0;
    for (const auto& k : t.kernels) s += k.end - k.start;
    return s;
  }));
  report("primitive", "read_launch_records", timed(calls, [&] {
    std::uint64_t s = 0;
    for (const auto& l : t.launches) s += l.time;
    return s;
  }));
  std::vector<std::uint64_t> column(n);
  report("primitive", "write_duration_column", timed(calls, [&] {
    for (std::size_t i = 0; i < n; ++i) column[i] = t.kernels[i].end - t.kernels[i].start;
    return column[n / 2];
  }));
  report("primitive", "read_duration_column", timed(calls, [&] { return std::accumulate(column.begin(), column.end(), std::uint64_t{0}); }));
  std::uint32_t most = 0;
  for (const auto& l : t.launches) most = std::max(most, l.correlation);
  std::vector<std::uint32_t> by_correlation(std::size_t{most} + 1, no_index), launch_of(n, no_index);
  report("primitive", "correlation_table", timed(calls, [&] {
    for (std::uint32_t i = 0; i < t.launches.size(); ++i) by_correlation[t.launches[i].correlation] = i;
    return by_correlation[most / 2];
  }));
  report("primitive", "kernel_to_launch", timed(calls, [&] {
    for (std::size_t i = 0; i < n; ++i) launch_of[i] = t.kernels[i].correlation <= most ? by_correlation[t.kernels[i].correlation] : no_index;
    return launch_of[n / 3];
  }));
  report("primitive", "launch_delay_through_launch_of", timed(calls, [&] {
    std::uint64_t s = 0;
    for (std::size_t i = 0; i < n; ++i)
      if (launch_of[i] != no_index) s += t.kernels[i].start - t.launches[launch_of[i]].time;
    return s;
  }));
  std::vector<std::uint64_t> copy(n);
  report("primitive", "median_of_column", timed(calls, [&] {
    copy = column;
    std::nth_element(copy.begin(), copy.begin() + static_cast<std::ptrdiff_t>(n / 2), copy.end());
    return copy[n / 2];
  }));
  const std::size_t names = t.strings.size();
  std::vector<std::uint32_t> offset(names + 1), cursor;
  std::vector<std::uint64_t> grouped(n);
  report("primitive", "durations_grouped_by_name", timed(calls, [&] {
    std::fill(offset.begin(), offset.end(), 0);
    for (const auto& k : t.kernels) ++offset[k.name + 1];
    std::partial_sum(offset.begin(), offset.end(), offset.begin());
    cursor = offset;
    for (const auto& k : t.kernels) grouped[cursor[k.name]++] = k.end - k.start;
    return grouped[n / 2];
  }));
  report("primitive", "each_name_group_sorted", timed(3, [&] {
    copy = grouped;
    for (std::size_t g = 0; g < names; ++g) std::sort(copy.begin() + offset[g], copy.begin() + offset[g + 1]);
    return copy[n / 2];
  }));
}

void passes(const trace& t) {
  constexpr int calls = 5;
  const analysis_options o;
  const auto x = index_trace(t, o.start_end);
  const auto window = analysis_window(t, o);
  report("pass", "index_trace", timed(calls, [&] { return index_trace(t, o.start_end).group_first.size(); }));
  report("pass", "kernel_summary", timed(calls, [&] { return kernel_summary(t, x, o.kernel_names).size(); }));
  report("pass", "projection", timed(calls, [&] { return gpu_projection_summary(t, x, project_ranges(t, x)).size(); }));
  const auto projection = project_ranges(t, x);
  report("pass", "range_kernel_summary", timed(calls, [&] { return range_kernel_summary(t, x, o.kernel_names).size(); }));
  report("pass", "overall_activity", timed(calls, [&] { return overall_activity(t, window).kernels; }));
  report("pass", "range_activity", timed(calls, [&] { return range_activity(t, x, projection, o).per_range.size(); }));
  report("pass", "steps_and_losses", timed(calls, [&] { return step_figures(t, x, o).steps + losses_of(t, x, o).size(); }));
  report("pass", "diagnose", timed(calls, [&] { return diagnose(t, x.links, diagnosis_options_for(t, o)).verdict.findings.size(); }));
  report("whole", "analyze", timed(calls, [&] { return analyze(t, x, o).kernels.size(); }));
}

} // namespace

int main(int argc, char** argv) {
  if (argc > 2 || (argc == 2 && (argv[1][0] == '-' || argv[1][0] == '\0'))) {
    std::fprintf(stderr, "usage: floor_bench [metrics.json]  (the metrics go to stdout without a file)\n");
    return 2;
  }
  const auto t = synthetic::make_trace(2000000);
  const detail::scratch_scope reuse; // analyze's large arrays keep their pages from call to call
  char head[160];
  std::snprintf(head, sizeof head, "{\"records\": %llu, \"kernels\": %zu", static_cast<unsigned long long>(synthetic::records(t)),
                t.kernels.size());
  json = head;
  primitives(t);
  passes(t);
  json += "}\n";
  if (argc == 1) return std::fputs(json.c_str(), stdout) < 0 ? 1 : 0;
  const auto w = nvscope::write_file(argv[1], json); // a failed write says so and keeps the old file
  if (!w) std::fprintf(stderr, "%s\n", w.error.c_str());
  return w ? 0 : 1;
}

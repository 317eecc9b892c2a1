// Scale of analysis and exports (issue 13): synthetic traces of 1, 2, 4 and 8 million kernels
// with ranges of every kind (tests/analyze/synthetic_trace.hpp), each size in a child process
// of its own, 5 runs of each pass on fresh memory, as a program that analyses once sees them
// (tests/analyze/scale_measure.hpp: CPU time of the measuring thread). Writes the JSON object of bench/results/scale.json's "metrics" to the
// file named by its first argument, or stdout; every run to stderr.
//
//   analyze_records_per_s         records (kernels, copies, memsets, syncs, ranges, launches)
//                                 per CPU second through nvscope::analyze at 2 M kernels, median
//                                 of 5 runs; _slowest/_fastest: the slowest and fastest run
//   analyze_records_per_s_user    the same per CPU second less the kernel's (page faults: this
//                                 VM's price of fresh memory swings several-fold by the hour, so
//                                 this figure compares across days where the first does not)
//   analyze_system_s              the kernel's CPU seconds in analyze at 2 M kernels, median
//   analyze_pass_s_*              the passes one by one at 2 M kernels (one run, fresh memory)
//   chrome_trace_events_per_s     the same records per CPU second through write_chrome_trace to
//                                 /dev/null (median), given the trace's attribution, as nvscope's
//                                 writer calls it: streamed, never whole in memory (figures before
//                                 session 18 made to_chrome_trace's string, ~270 B a record; before
//                                 e9e13aa they indexed the trace here too)
//   folded_records_per_s          the same through to_folded (median), likewise
//   bytes_per_record_peak         peak resident memory of a child / its records (trace, analysis,
//                                 exports' output included), the largest over the sizes
//   worst_doubling_ratio          the largest time(2n) / time(n) over 1-8 M kernels and the three
//                                 passes, medians on fresh memory (page faults included; the
//                                 scaling test bounds the passes' own work on warm memory)
#define NVSCOPE_IMPLEMENTATION // this program's one file with the analysis definitions (docs/analysis.md, "Building")
#include "scale_measure.hpp"

#include <nvscope/export/output_path.hpp>

#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>

namespace {

constexpr int reps = 5;

// analyze's passes one by one (their sum is about analyze's time), at `kernels` kernels.
std::string pass_figures(std::uint64_t kernels) {
  using namespace nvscope;
  const auto t = synthetic::make_trace(kernels);
  const analysis_options o;
  std::string out;
  auto timed = [&](const char* name, auto&& f) {
    const double a = scale::thread_cpu();
    f();
    char line[128];
    std::snprintf(line, sizeof line, "\"analyze_pass_s_%s\": %.3f, ", name, scale::thread_cpu() - a);
    out += line;
  };
  trace_index x;
  range_projection p;
  timed("index_trace", [&] { x = index_trace(t, o.start_end); });
  timed("summaries", [&] { (void)kernel_summary(t, x, o.kernel_names), (void)memop_summary(t), (void)range_summary(t, x); });
  timed("projection", [&] { p = project_ranges(t, x), (void)gpu_projection_summary(t, x, p); });
  timed("range_kernel_summary", [&] { (void)range_kernel_summary(t, x, o.kernel_names); });
  timed("overall_activity", [&] { (void)overall_activity(t, analysis_window(t, o)); });
  timed("range_activity", [&] { (void)range_activity(t, x, p, o); });
  timed("steps_and_losses", [&] { (void)step_figures(t, x, o), (void)losses_of(t, x, o); });
  timed("diagnose", [&] { (void)diagnose(t, x.links, diagnosis_options_for(t, o)); });
  return out;
}

double worst_ratio(const scale::size_result* at, int sizes, double (scale::pass_times::*figure)() const) {
  double worst = 0;
  for (int i = 1; i < sizes; ++i)
    for (auto pass : {&scale::size_result::analyze, &scale::size_result::chrome, &scale::size_result::folded})
      worst = std::max(worst, (at[i].*pass.*figure)() / (at[i - 1].*pass.*figure)());
  return worst;
}

void print_runs(const scale::size_result& s, const char* how) {
  std::fprintf(stderr, "%llu records (%s):", static_cast<unsigned long long>(s.records), how);
  for (auto [name, p] : {std::make_pair("analyze", &s.analyze), std::make_pair("chrome", &s.chrome), std::make_pair("folded", &s.folded)}) {
    std::fprintf(stderr, " %s", name);
    for (int r = 0; r < p->reps; ++r) std::fprintf(stderr, " %.3f s (%.3f system)/%ld faults", p->seconds[r], p->system[r], p->faults[r]);
    std::fprintf(stderr, ";");
  }
  std::fprintf(stderr, " peak %.0f B/record\n", s.peak_bytes_per_record());
}

std::string series(const scale::size_result* at, const scale::pass_times scale::size_result::*pass) {
  std::string s = "[";
  for (int i = 0; i < 4; ++i) {
    char v[32];
    std::snprintf(v, sizeof v, "%s%.3f", i ? ", " : "", (at[i].*pass).median());
    s += v;
  }
  return s + "]";
}

} // namespace

int main(int argc, char** argv) {
  if (argc > 2 || (argc == 2 && (argv[1][0] == '-' || argv[1][0] == '\0'))) {
    std::fprintf(stderr, "usage: scale_bench [metrics.json]  (the metrics go to stdout without a file)\n");
    return argc == 2 && (std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h") ? 0 : 2;
  }
  scale::size_result at[4];
  double peak = 0;
  for (int i = 0; i < 4; ++i) {
    const auto kernels = 1000000ull << i;
    if (!scale::measure(kernels, reps, at[i])) {
      std::fprintf(stderr, "nvscope: scale_bench: the run of %llu kernels failed\n", kernels);
      return 1;
    }
    print_runs(at[i], "fresh memory");
    peak = std::max(peak, at[i].peak_bytes_per_record());
  }
  const auto& m = at[1];
  const double n = static_cast<double>(m.records);
  std::string json = "{" + pass_figures(2000000);
  char buf[2048];
  std::snprintf(buf, sizeof buf,
                "\"analyze_records_per_s\": %.0f, \"analyze_records_per_s_slowest\": %.0f, \"analyze_records_per_s_fastest\": %.0f, "
                "\"analyze_records_per_s_user\": %.0f, \"analyze_system_s\": %.3f, "
                "\"chrome_trace_events_per_s\": %.0f, \"folded_records_per_s\": %.0f, "
                "\"bytes_per_record_peak\": %.0f, \"worst_doubling_ratio\": %.2f, "
                "\"records_at_2m_kernels\": %.0f, ",
                n / m.analyze.median(), n / m.analyze.worst(), n / m.analyze.best(), n / m.analyze.median_user(), m.analyze.median_system(),
                n / m.chrome.median(), n / m.folded.median(), peak,
                worst_ratio(at, 4, &scale::pass_times::median), n);
  json += buf;
  json += "\"analyze_s_at_1_2_4_8m_kernels\": " + series(at, &scale::size_result::analyze) + ", ";
  json += "\"chrome_trace_s_at_1_2_4_8m_kernels\": " + series(at, &scale::size_result::chrome) + ", ";
  json += "\"folded_s_at_1_2_4_8m_kernels\": " + series(at, &scale::size_result::folded) + "}\n";
  if (argc == 1) return std::fputs(json.c_str(), stdout) < 0 ? 1 : 0;
  const auto w = nvscope::write_file(argv[1], json); // a failed write says so and keeps the old file
  if (!w) std::fprintf(stderr, "%s\n", w.error.c_str());
  return w ? 0 : 1;
}

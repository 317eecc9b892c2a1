// Scale of analysis and exports (issue 13): synthetic traces of 1, 2, 4 and 8 million kernels
// with ranges of every kind (tests/analyze/synthetic_trace.hpp), each size in a child process
// of its own, CPU time of that process (one core: the passes are single-threaded). Writes the
// JSON object of bench/results/scale.json to the file named by its first argument, or stdout.
//
//   analyze_records_per_s      records (kernels, copies, memsets, syncs, ranges, launches) per
//                              CPU second through nvscope::analyze, best of 3, at 2 M kernels
//   chrome_trace_events_per_s  the same records per CPU second through to_chrome_trace
//   folded_records_per_s       the same through to_folded
//   bytes_per_record_peak      peak resident memory of a child / its records (trace, analysis,
//                              exports' output included), the largest over the sizes
//   worst_doubling_ratio       the largest time(2n) / time(n) over sizes and the three passes
#include "synthetic_trace.hpp"

#include <nvscope/analysis.hpp>
#include <nvscope/export.hpp>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <string>

namespace {

struct size_result {
  double records = 0, analyze_s = 0, chrome_s = 0, folded_s = 0, rss_bytes = 0;
};

double cpu_now() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

template <class F>
double best_of(int reps, F&& f) {
  double best = 1e30;
  for (int i = 0; i < reps; ++i) {
    const double a = cpu_now();
    f();
    best = std::min(best, cpu_now() - a);
  }
  return best;
}

size_result measure_here(std::uint64_t kernels) {
  const auto t = synthetic::make_trace(kernels);
  size_result s;
  s.records = static_cast<double>(synthetic::records(t));
  std::size_t sink = 0;
  s.analyze_s = best_of(3, [&] { sink += nvscope::analyze(t).kernels.size(); });
  s.folded_s = best_of(3, [&] { sink += nvscope::to_folded(t).size(); });
  s.chrome_s = best_of(1, [&] { sink += nvscope::to_chrome_trace(t).size(); });
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  s.rss_bytes = 1024.0 * static_cast<double>(u.ru_maxrss) + static_cast<double>(sink & 0);
  return s;
}

bool measure(std::uint64_t kernels, size_result& s) {
  int fd[2];
  if (pipe(fd) != 0) return false;
  const pid_t child = fork();
  if (child < 0) return false;
  if (child == 0) {
    close(fd[0]);
    const auto r = measure_here(kernels);
    _exit(write(fd[1], &r, sizeof r) == static_cast<ssize_t>(sizeof r) ? 0 : 1);
  }
  close(fd[1]);
  const auto n = read(fd[0], &s, sizeof s);
  close(fd[0]);
  int status = 0;
  waitpid(child, &status, 0);
  return n == static_cast<ssize_t>(sizeof s) && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

} // namespace

int main(int argc, char** argv) {
  size_result at[4];
  double worst = 0, peak = 0;
  for (int i = 0; i < 4; ++i) {
    if (!measure(1000000ull << i, at[i])) {
      std::fprintf(stderr, "nvscope: scale_bench: the run of %llu kernels failed\n", 1000000ull << i);
      return 1;
    }
    const auto& s = at[i];
    std::fprintf(stderr, "%.0f records: analyze %.3f s, chrome %.3f s, folded %.3f s, peak %.0f B/record\n", s.records, s.analyze_s,
                 s.chrome_s, s.folded_s, s.rss_bytes / s.records);
    peak = std::max(peak, s.rss_bytes / s.records);
    if (i) worst = std::max({worst, s.analyze_s / at[i - 1].analyze_s, s.chrome_s / at[i - 1].chrome_s, s.folded_s / at[i - 1].folded_s});
  }
  const auto& m = at[1];
  char json[1024];
  std::snprintf(json, sizeof json,
                "{\"analyze_records_per_s\": %.0f, \"chrome_trace_events_per_s\": %.0f, \"folded_records_per_s\": %.0f, "
                "\"bytes_per_record_peak\": %.0f, \"worst_doubling_ratio\": %.2f, \"records_at_2m_kernels\": %.0f}\n",
                m.records / m.analyze_s, m.records / m.chrome_s, m.records / m.folded_s, peak, worst, m.records);
  FILE* out = argc > 1 ? std::fopen(argv[1], "w") : stdout;
  if (!out) {
    std::fprintf(stderr, "nvscope: scale_bench: cannot write '%s'\n", argv[1]);
    return 1;
  }
  std::fputs(json, out);
  if (out != stdout) std::fclose(out);
  return 0;
}

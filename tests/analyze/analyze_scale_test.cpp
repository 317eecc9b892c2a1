// Scaling (issue 13): analyze, the Chrome trace and the folded stacks on synthetic traces of
// 1, 2, 4 and 8 million kernels with ranges of every kind (synthetic_trace.hpp). Each size runs
// in a child process of its own, so that its peak memory is its own. Asserts: time per doubling
// <= 2.3 for each of the three, and peak resident memory <= 1200 bytes per record (trace,
// analysis and the Chrome trace text included). Label `scale`: left out of the sanitizer
// presets, where time and memory mean something else. Times are CPU seconds of the child.
#include "synthetic_trace.hpp"

#include <doctest/doctest.h>
#include <nvscope/analysis.hpp>
#include <nvscope/export.hpp>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ctime>
#include <cstdio>
#include <cstdlib>

namespace {

struct size_result {
  std::uint64_t records = 0, kernels = 0, chrome_bytes = 0;
  double analyze_s = 0, chrome_s = 0, folded_s = 0;
  long max_rss_kb = 0;
};

// CPU seconds of this process (the child of one size): other processes on the machine do not count.
double cpu_now() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

template <class F>
double seconds(F&& f) {
  const double a = cpu_now();
  f();
  return cpu_now() - a;
}

size_result measure_here(std::uint64_t kernels) {
  size_result s;
  const auto t = synthetic::make_trace(kernels);
  s.records = synthetic::records(t);
  s.kernels = t.kernels.size();
  std::uint64_t sink = 0;
  s.analyze_s = seconds([&] { sink += nvscope::analyze(t).range_kernels.size(); });
  s.folded_s = seconds([&] { sink += nvscope::to_folded(t).size(); });
  s.chrome_s = seconds([&] { s.chrome_bytes = nvscope::to_chrome_trace(t).size(); });
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  s.max_rss_kb = u.ru_maxrss + static_cast<long>(sink & 0);
  return s;
}

// Runs one size in a child process; its result comes back through a pipe.
size_result measure(std::uint64_t kernels) {
  int fd[2];
  REQUIRE(pipe(fd) == 0);
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    close(fd[0]);
    const auto s = measure_here(kernels);
    const auto n = write(fd[1], &s, sizeof s);
    _exit(n == static_cast<ssize_t>(sizeof s) ? 0 : 1);
  }
  close(fd[1]);
  size_result s;
  const auto n = read(fd[0], &s, sizeof s);
  close(fd[0]);
  int status = 0;
  waitpid(child, &status, 0);
  REQUIRE(n == static_cast<ssize_t>(sizeof s));
  REQUIRE(WIFEXITED(status));
  return s;
}

} // namespace

TEST_CASE("analyze, Chrome trace and folded stacks grow linearly from 1 to 8 million kernels") {
  size_result prev{};
  for (std::uint64_t m = 1; m <= 8; m *= 2) {
    const auto s = measure(m * 1000000);
    const double bytes_per_record = 1024.0 * static_cast<double>(s.max_rss_kb) / static_cast<double>(s.records);
    MESSAGE(s.kernels << " kernels, " << s.records << " records: analyze " << s.analyze_s << " s, chrome " << s.chrome_s
                      << " s, folded " << s.folded_s << " s, peak " << bytes_per_record << " B/record");
    CHECK(bytes_per_record <= 1200.0);
    if (prev.records) {
      const double input = static_cast<double>(s.records) / static_cast<double>(prev.records);
      CHECK(input < 2.1);
      CHECK(s.analyze_s / prev.analyze_s <= 2.3);
      CHECK(s.chrome_s / prev.chrome_s <= 2.3);
      CHECK(s.folded_s / prev.folded_s <= 2.3);
    }
    prev = s;
  }
}

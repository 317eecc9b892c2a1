// Measuring trace sizes for the scaling test (tests/analyze/analyze_scale_test.cpp) and the
// scale benchmark (bench/analyze/scale_bench.cpp): `analyze`, `to_chrome_trace` and
// `to_folded` on synthetic traces (synthetic_trace.hpp), run in a child process. Times are CPU
// seconds of the measuring thread (CLOCK_THREAD_CPUTIME_ID: other processes do not count).
//
// Two ways, because on this project's virtual machine first touching fresh memory costs 10
// times what it costs on bare metal, and varies from 0.5 to 4 s per GiB from one run to the
// next (a plain memset shows it):
//  - `measure`: one size alone, every run on fresh memory, as a program that analyses once
//    sees it; its peak memory is its own. The benchmark's figures.
//  - `measure_warm`: several sizes in one child, interleaved rounds (a neighbour's load falls
//    on every size alike), the allocator told to keep what is freed, and a first round that
//    is not counted: the later rounds measure the passes' own work, not the machine's price
//    of a fresh page. What the scaling test bounds; memory is bounded apart, by peak resident
//    bytes per record, which bounds the page faults too.
#pragma once
#include "synthetic_trace.hpp"

#include <nvscope/analysis.hpp>
#include <nvscope/analyze/analyze.hpp> // the engine's passes, called alone
#include <nvscope/export.hpp>

#include <malloc.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <ctime>
#include <vector>

namespace scale {

inline double thread_cpu() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

inline rusage thread_usage() {
  rusage u{};
  getrusage(RUSAGE_THREAD, &u);
  return u;
}

inline long minor_faults() { return thread_usage().ru_minflt; }

// CPU seconds the kernel spent for the measuring thread (page faults: on this project's virtual
// machine the price of fresh memory, which varies several-fold from hour to hour).
inline double thread_system() {
  const timeval t = thread_usage().ru_stime;
  return static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_usec);
}

// The median of v (the mean of the two middle values of an even count); 0 when empty.
inline double median_of(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const auto n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// One pass's runs: CPU seconds, the kernel's part of them, and minor page faults of each.
constexpr int max_reps = 7;
struct pass_times {
  int reps = 0;
  double seconds[max_reps]{};
  double system[max_reps]{};
  long faults[max_reps]{};

  double best() const { return *std::min_element(seconds, seconds + reps); }
  double worst() const { return *std::max_element(seconds, seconds + reps); }
  double median() const { return median_of(std::vector<double>(seconds, seconds + reps)); }
  double median_system() const { return median_of(std::vector<double>(system, system + reps)); }
  double median_user() const { // the pass's own work, the kernel's time for it left out
    std::vector<double> user(seconds, seconds + reps);
    for (int r = 0; r < reps; ++r) user[r] -= system[r];
    return median_of(user);
  }
};

// Plain data: it crosses a pipe from the child.
struct size_result {
  std::uint64_t kernels = 0, records = 0, checksum = 0; // checksum: the outputs' sizes, so that they are used
  pass_times analyze, chrome, folded;
  long peak_kb = 0;
  double peak_bytes_per_record() const { return 1024.0 * static_cast<double>(peak_kb) / static_cast<double>(records); }
};

// Runs f `tries` times and keeps the fastest as run `i` of p (i < 0: a warm-up, not kept).
template <class F>
void run(pass_times& p, int i, F&& f, int tries = 1) {
  for (int k = 0; k < tries; ++k) {
    const long faults = minor_faults();
    const double system = thread_system(), start = thread_cpu();
    f();
    const double seconds = thread_cpu() - start;
    if (i < 0 || (k > 0 && seconds >= p.seconds[i])) continue;
    p.seconds[i] = seconds;
    p.system[i] = std::min(thread_system() - system, seconds); // microsecond ticks: never above the whole
    p.faults[i] = minor_faults() - faults;
    p.reps = std::max(p.reps, i + 1);
  }
}

// The exports as nvscope's writer runs them (tools/nvscope/inject.cpp): given the trace's
// index, built once for analyze and both exports, and not timed again here: analyze's time
// includes it. Timed inside the folded stacks, the index was four fifths of their time (72 of
// 92 ms at 2 M kernels, warm) and made their doubling a second, noisier reading of the
// index's: 2.2-2.6 from 1 to 2 M kernels on this VM, where their own work read 1.95-2.07 in the
// same runs, the index's steps each about x2.1 (streaming passes whose arrays fall out of the
// last-level cache); one fresh-clone CI failed on it at 2.38 over 21 rounds (session 15).
// `folded_tries`: the folded stacks take a thirtieth of analyze's time; on warm memory three
// tries a run, so that a run right after analyze does not measure only the caches analyze left
// cold.
inline void run_passes(const nvscope::trace& t, const nvscope::attribution& a, int i, size_result& s, int folded_tries) {
  std::uint64_t sink = 0;
  run(s.analyze, i, [&] { sink += nvscope::analyze(t).range_kernels.size(); });
  run(s.folded, i, [&] { sink += nvscope::to_folded(t, {}, a).size(); }, folded_tries);
  run(s.chrome, i, [&] { // streamed as the writer streams it (to /dev/null: no disk's time)
    const auto w = nvscope::write_chrome_trace("/dev/null", t, {}, a);
    if (!w) std::fprintf(stderr, "%s\n", w.error.c_str()), std::_Exit(1); // the child fails: in_child says so
  });
  s.checksum += sink;
}

inline long peak_kb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

// Runs `child(out)` in a child process and reads its `count` results back; false when it failed.
template <class Child>
bool in_child(size_result* out, std::size_t count, Child&& child) {
  int fd[2];
  if (pipe(fd) != 0) return false;
  const pid_t pid = fork();
  if (pid < 0) return false;
  const std::size_t bytes = count * sizeof *out;
  if (pid == 0) {
    close(fd[0]);
    child(out);
    _exit(write(fd[1], out, bytes) == static_cast<ssize_t>(bytes) ? 0 : 1);
  }
  close(fd[1]);
  std::size_t got = 0;
  for (ssize_t n = 1; n > 0 && got < bytes; got += static_cast<std::size_t>(n))
    n = std::max<ssize_t>(read(fd[0], reinterpret_cast<char*>(out) + got, bytes - got), 0);
  close(fd[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return got == bytes && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// A synthetic trace of about so many kernels (synthetic_trace.hpp's shapes).
using trace_maker = nvscope::trace (*)(std::uint64_t kernels);

// One size alone, `reps` runs of each pass on fresh memory.
inline bool measure(std::uint64_t kernels, int reps, size_result& out, trace_maker make = synthetic::make_trace) {
  return in_child(&out, 1, [&](size_result* s) {
    const auto t = make(kernels);
    s->kernels = t.kernels.size();
    s->records = synthetic::records(t);
    const auto a = nvscope::attribute(t);
    for (int i = 0; i < std::min(reps, max_reps); ++i) run_passes(t, a, i, *s, 1);
    s->peak_kb = peak_kb();
  });
}

// Several sizes, a warm-up round and `rounds` counted rounds, memory kept by the allocator.
inline bool measure_warm(const std::uint64_t* kernels, std::size_t sizes, int rounds, size_result* out,
                         trace_maker make = synthetic::make_trace) {
  return in_child(out, sizes, [&](size_result* s) {
    mallopt(M_MMAP_MAX, 0);             // every block from the heap, which
    mallopt(M_TRIM_THRESHOLD, INT_MAX); // keeps what is freed for the next round
    std::vector<nvscope::trace> traces;
    std::vector<nvscope::attribution> links;
    for (std::size_t k = 0; k < sizes; ++k) {
      traces.push_back(make(kernels[k]));
      links.push_back(nvscope::attribute(traces.back()));
      s[k].kernels = traces.back().kernels.size();
      s[k].records = synthetic::records(traces.back());
    }
    for (int i = -1; i < std::min(rounds, max_reps); ++i)
      for (std::size_t k = 0; k < sizes; ++k) run_passes(traces[k], links[k], i, s[k], 3);
    for (std::size_t k = 0; k < sizes; ++k) s[k].peak_kb = peak_kb();
  });
}

} // namespace scale

// The injection library of `nvscope run`: libnvscope_inject.so. The CUDA driver loads it in
// every process that initialises CUDA (CUDA_INJECTION64_PATH, set by the tool) and calls
// InitializeInjection from cuInit; processes that never touch CUDA never load it. It starts
// nvscope's collector with the options the tool passed as NVSCOPE_RUN_* variables and, at the
// end of the process (exit, or SIGINT/SIGTERM when the program left them at their default),
// stops it and writes the summary and the files. Why this mechanism: docs/run.md.

#include "process_outputs.hpp"
#include "run_options.hpp"
#include "session.hpp"
#include "window.hpp"

#include <nvscope/detail/quote.hpp>
#include <nvscope/analysis.hpp>
#include <nvscope/analyze/analyze.hpp> // the engine: the trace indexed once for analyze and the exports
#include <nvscope/collector.hpp>
#include <nvscope/export.hpp>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace nvscope {
inline namespace v1 {
namespace tool {
namespace {

static_assert(kind_bits::kernels == static_cast<std::uint32_t>(activity::kernels) &&
                  kind_bits::nvtx == static_cast<std::uint32_t>(activity::nvtx) &&
                  kind_bits::overhead == static_cast<std::uint32_t>(activity::overhead) &&
                  kind_bits::standard == static_cast<std::uint32_t>(activity::standard),
              "run_options' kind bits are nvscope::activity's");

// Process-wide state, leaked on purpose: exit handlers and signal threads find it alive.
struct injected {
  std::mutex finish_mutex;
  std::atomic<bool> started{false};
  std::atomic<bool> finished{false};
  run_options options;
  collector* c = nullptr;
  int signal_pipe[2] = {-1, -1};
};

injected& state() {
  static auto* s = new injected();
  return *s;
}

void say(const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); }

std::string pid_text() { return std::to_string(static_cast<long long>(::getpid())); }

// Stops the collector and writes everything (finish calls it once per process).
void finish_profile(const char* why) {
  auto& s = state();
  s.c->stop();
  const trace full = s.c->take();
  if (full.kernels.empty() && full.copies.empty() && full.memsets.empty() && full.ranges.empty()) {
    // A process that loaded CUDA but did no GPU work and opened no range (a launcher such as
    // torchrun's agent): nothing to write, and nothing to say beside its children's profiles.
    session_note("empty", "");
    return;
  }
  const window_choice wc = choose_windows(full, s.options);
  const trace t = wc.whole ? trace{} : restrict_to(full, wc.windows);
  const trace& used = wc.whole ? full : t;
  analysis_options ao;
  if (!s.options.steps.empty()) ao.step_pattern = glob_regex(s.options.steps); // the window's steps are the analysis' steps
  if (!wc.whole) ao.window = time_window{used.begin, used.finish};
  if (s.options.attribute_process) ao.attribute = attribution_rule::process;
  const trace_index x = index_trace(used, ao.start_end, ao.attribute); // its links serve the exports, credited as the tables are
  const analysis_report r = analyze(used, x, ao);
  const bool color = use_color(static_cast<color_when>(s.options.color), stderr);
  const process_end w = end_process(s.options, used, r, x.links, pid_text(), why, color);
  std::fputs(w.summary.c_str(), stderr);
  if (!wc.note.empty()) say("nvscope: run: process " + pid_text() + ": the window is empty: " + wc.note);
  for (const auto& e : w.errors) say(e);
  if (!w.files_line.empty()) say(w.files_line);
  session_note(w.errors.empty() ? "written" : "write-failed", path_list(w.files));
}

// finish_profile once per process, from whichever path ends it (atexit, a signal's thread):
// nothing it throws leaves here (from atexit that would be SIGABRT), one line says what was lost.
void finish(const char* why) {
  auto& s = state();
  std::lock_guard<std::mutex> lock(s.finish_mutex);
  if (!s.started.load() || s.finished.exchange(true)) return;
  char line[512];
  if (contain_failure([why] { finish_profile(why); }, static_cast<long long>(::getpid()), line)) {
    std::fprintf(stderr, "%s\n", line);
    contain_failure([] { session_note("write-failed", ""); }, 0, line);
  }
}

void finish_at_exit() { finish("exit"); }

// SIGINT/SIGTERM left at their default by the program: write what was recorded, then die of
// the same signal. The handler only wakes a thread; the thread does the work.
extern "C" void on_stop_signal(int sig) {
  const unsigned char b = static_cast<unsigned char>(sig);
  const int fd = state().signal_pipe[1];
  if (fd >= 0 && ::write(fd, &b, 1) != 1) {
    ::signal(sig, SIG_DFL);
    ::raise(sig);
  }
}

void signal_thread() {
  unsigned char sig = 0;
  while (::read(state().signal_pipe[0], &sig, 1) != 1) {
    if (errno != EINTR) return;
  }
  finish(sig == SIGINT ? "SIGINT" : "SIGTERM");
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

void install_signal_handlers() {
  auto& s = state();
  int wanted[] = {SIGINT, SIGTERM};
  bool any = false;
  for (int sig : wanted) {
    struct sigaction old {};
    if (::sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_DFL && (old.sa_flags & SA_SIGINFO) == 0) any = true;
  }
  if (!any || ::pipe(s.signal_pipe) != 0) return;
  std::thread(signal_thread).detach();
  for (int sig : wanted) {
    struct sigaction old {};
    if (::sigaction(sig, nullptr, &old) != 0 || old.sa_handler != SIG_DFL || (old.sa_flags & SA_SIGINFO) != 0) continue;
    struct sigaction sa {};
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    ::sigaction(sig, &sa, nullptr);
  }
}

collector_options collector_options_of(const run_options& o) {
  collector_options c;
  c.kinds = static_cast<activity>(o.kinds);
  c.buffer_size = o.buffer_size;
  c.buffer_count = o.buffer_count;
  return c;
}

void start_collector() {
  auto& s = state();
  s.c = new collector(collector_options_of(s.options));
  if (!s.c->start()) {
    const std::string why = s.c->errors().empty() ? std::string("unknown reason") : s.c->errors().back();
    say("nvscope: run: process " + pid_text() + " runs unprofiled (" + why + ")");
    session_note("unprofiled", why);
    return;
  }
  s.started.store(true);
  std::atexit(&finish_at_exit); // after the collector's own exit handler: runs before it
  install_signal_handlers();
  session_note("started", "");
}

// The gate: InitializeInjection runs inside cuInit, where the CUDA runtime cannot be called
// (seen on an H100: starting the collector there made the program's cuInit fail). So it only
// subscribes a callback on every driver call; the first call after cuInit, on whichever
// thread makes it, ends the gate's subscription and starts the collector right there, before
// that call runs: nothing the program does on the GPU comes before the collector.
struct gate_state {
  std::once_flag once;
  CUpti_SubscriberHandle subscriber = nullptr;
};

gate_state& gate() {
  static auto* g = new gate_state();
  return *g;
}

void CUPTIAPI on_driver_call(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  if (domain != CUPTI_CB_DOMAIN_DRIVER_API || cbid == CUPTI_DRIVER_TRACE_CBID_cuInit) return;
  if (static_cast<const CUpti_CallbackData*>(data)->callbackSite != CUPTI_API_ENTER) return;
  std::call_once(gate().once, [] {
    detail::cupti().cuptiUnsubscribe(gate().subscriber);
    start_collector();
  });
}

// False (with a line said) when the gate cannot be set: then the process runs unprofiled.
bool open_gate() {
  auto& api = detail::cupti();
  if (!api.loaded) {
    say("nvscope: run: process " + pid_text() + " runs unprofiled (" + api.error + ")");
    session_note("unprofiled", api.error);
    return false;
  }
  auto& g = gate();
  const CUptiResult r = api.cuptiSubscribe(&g.subscriber, &on_driver_call, nullptr);
  if (r != CUPTI_SUCCESS) {
    const std::string why = "cuptiSubscribe failed with CUPTI error " + std::to_string(static_cast<int>(r)) +
                            (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED ? " (another profiler holds CUPTI)" : "");
    say("nvscope: run: process " + pid_text() + " runs unprofiled (" + why + ")");
    session_note("unprofiled", why);
    return false;
  }
  for (std::uint32_t cbid = 1; cbid < static_cast<std::uint32_t>(CUPTI_DRIVER_TRACE_CBID_SIZE); ++cbid)
    api.cuptiEnableCallback(1, g.subscriber, CUPTI_CB_DOMAIN_DRIVER_API, cbid);
  return true;
}

} // namespace
} // namespace tool
} // namespace v1
} // namespace nvscope

// Called by the CUDA driver from cuInit, once per process (see docs/run.md).
extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  using namespace nvscope::tool;
  static std::atomic<bool> once{false};
  if (once.exchange(true)) return 1;
  const run_parse p = parse_run_env();
  if (!p.error.empty()) {
    say(p.error + "; this process runs unprofiled");
    session_note("unprofiled", p.error);
    return 1;
  }
  state().options = p.options;
  open_gate();
  return 1;
}

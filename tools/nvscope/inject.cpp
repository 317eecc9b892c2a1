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
#include <nvscope/analyze/totals.hpp>
#include <nvscope/capture/schedule.hpp>
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
#include <string_view>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>
#include <vector>

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
  std::FILE* steps_file = nullptr; // bounded: STEM.steps.jsonl, a line a step as it ends
  unsigned snapshots = 0;
  std::mutex steps_mutex;
  numbered_steps steps; // bounded, with a step schedule: the steps it records, as they end
};

injected& state() {
  static auto* s = new injected();
  return *s;
}

void say(const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); }

std::string pid_text() { return std::to_string(static_cast<long long>(::getpid())); }

// The files' stem (OUTPUT_DIR/NAME, patterns expanded), or empty when it cannot be made.
std::string output_stem(const run_options& o) {
  const auto dir = expand_output_path(o.output_dir);
  const auto name = expand_output_path(o.name);
  if (!dir || !name) return {};
  return dir.path + "/" + name.path;
}

// A JSON string: quotes, backslashes and control characters escaped.
std::string json_text(std::string_view v) {
  std::string out = "\"";
  for (const char c : v) {
    if (c == '"' || c == '\\') out += '\\', out += c;
    else if (static_cast<unsigned char>(c) < 0x20) {
      char u[8];
      std::snprintf(u, sizeof u, "\\u%04x", static_cast<unsigned>(c));
      out += u;
    } else out += c;
  }
  return out + "\"";
}

// One step's summary as a line of STEM.steps.jsonl.
std::string step_line(const step_totals& t) {
  auto n = [](std::uint64_t v) { return std::to_string(v); };
  std::string line = "{\"step\": " + n(t.number) + ", \"name\": " + json_text(t.name) + ", \"begin_ns\": " + n(t.begin) +
                     ", \"end_ns\": " + n(t.end) + ", \"wall_ns\": " + n(t.wall_ns) + ", \"gpu_busy_ns\": " + n(t.gpu_busy_ns) +
                     ", \"kernel_ns\": " + n(t.kernel_ns) + ", \"copy_ns\": " + n(t.copy_ns) + ", \"memset_ns\": " + n(t.memset_ns) +
                     ", \"sync_ns\": " + n(t.sync_ns) + ", \"launches\": " + n(t.launches) +
                     ", \"dropped_records\": " + n(t.lost.dropped_records) + ", \"buffer_errors\": " + n(t.lost.buffer_errors) +
                     ", \"launches_lost\": " + n(t.lost.launches_lost) + ", \"lossy\": " + (t.lossy ? "true" : "false") +
                     ", \"raw_kept\": " + (t.raw_kept ? "true" : "false") + ", \"top_kernels\": [";
  for (std::size_t i = 0; i < t.top_kernels.size(); ++i)
    line += std::string(i ? ", " : "") + "{\"name\": " + json_text(t.top_kernels[i].name) + ", \"count\": " +
            n(t.top_kernels[i].count) + ", \"ns\": " + n(t.top_kernels[i].ns) + "}";
  return line + "]}\n";
}

// The folded totals as STEM.totals.json: per kernel name, per NVTX range group and for the
// steps, count, total, min, max, median and p99 (median and p99 within the sketch's 1 %).
std::string totals_json(const totals& all, const collector_stats& st) {
  auto n = [](std::uint64_t v) { return std::to_string(v); };
  auto figures = [&](const duration_sketch& d) {
    char q[96];
    std::snprintf(q, sizeof q, ", \"median_ns\": %.0f, \"p99_ns\": %.0f}", d.median(), d.quantile(0.99));
    return "{\"count\": " + n(d.count()) + ", \"total_ns\": " + n(d.sum()) + ", \"min_ns\": " + n(d.min()) + ", \"max_ns\": " + n(d.max()) + q;
  };
  std::string j = "{\"records_folded\": " + n(st.records_folded) + ", \"steps_summarised\": " + n(st.steps_summarised) +
                  ", \"steps_lossy\": " + n(st.steps_lossy) + ", \"steps_given_up\": " + n(st.steps_given_up) +
                  ", \"quantile_relative_error\": 0.01, \"steps\": " + figures(all.steps) + ", \"kernels\": [";
  bool first = true;
  for (const auto& [name, d] : all.kernels) {
    j += std::string(first ? "" : ", ") + "{\"name\": " + json_text(name) + ", \"time\": " + figures(d) + "}";
    first = false;
  }
  j += "], \"ranges\": [";
  first = true;
  for (const auto& [key, d] : all.ranges) { // NVTX range groups folded (step ranges are in "steps")
    j += std::string(first ? "" : ", ") + "{\"domain\": " + json_text(key.domain) + ", \"name\": " + json_text(key.name) +
         ", \"style\": " + (key.push_pop ? "\"PushPop\"" : "\"StartEnd\"") + ", \"time\": " + figures(d) + "}";
    first = false;
  }
  const auto& r = all.run;
  return j + "], \"marks\": " + n(r.marks) + ", \"api_calls\": " + n(r.api_calls) + ", \"api_ns\": " + n(r.api_ns) +
         ", \"copies\": " + n(r.copies) + ", \"copy_ns\": " + n(r.copy_ns) + ", \"memsets\": " + n(r.memsets) +
         ", \"memset_ns\": " + n(r.memset_ns) + ", \"syncs\": " + n(r.syncs) + ", \"sync_ns\": " + n(r.sync_ns) +
         ", \"dropped_records\": " + n(r.lost.dropped_records) + "}\n";
}

// Analyses `full` and writes its files under `o`'s names (the end of the process, or a snapshot);
// `run`: the whole run's totals for the summary (null: those of `full`).
void write_profile(const trace& full, const run_options& o, const char* why, const totals* run = nullptr);

// A bounded collection's end: the steps file closed, the folded totals written.
void write_totals() {
  auto& s = state();
  if (s.steps_file != nullptr) std::fclose(s.steps_file);
  s.steps_file = nullptr;
  const std::string stem = output_stem(s.options);
  if (stem.empty()) return;
  const write_result w = write_file(stem + ".totals.json", totals_json(s.c->folded(), s.c->stats()));
  if (!w) say(w.error);
}

// SIGUSR1 in a bounded collection: the flight recorder as it stands, written as
// STEM.snapshot_N.*, and the program goes on.
void write_snapshot() {
  auto& s = state();
  std::lock_guard<std::mutex> lock(s.finish_mutex);
  if (!s.started.load() || s.finished.load()) return;
  run_options o = s.options;
  o.name += ".snapshot_" + std::to_string(++s.snapshots);
  o.summary_shows = summary_view::none;
  const trace t = s.c->snapshot();
  say("nvscope: run: process " + pid_text() + ": SIGUSR1: snapshot of " + std::to_string(t.kernels.size()) + " kernels kept");
  if (!t.kernels.empty() || !t.copies.empty() || !t.memsets.empty()) write_profile(t, o, "SIGUSR1");
}

// The step rule of a bounded collection: --steps as the analysis reads it, else its default.
bool run_step_name(std::string_view name) {
  static const step_matcher match = [] {
    analysis_options ao;
    if (!state().options.steps.empty()) ao.step_pattern = glob_regex(state().options.steps);
    return step_matcher(ao);
  }();
  return match(name);
}

// Where each step's summary goes as it ends (CUPTI's buffer thread): STEM.steps.jsonl.
void open_steps_file() {
  auto& s = state();
  const auto dir = expand_output_path(s.options.output_dir);
  const std::string stem = output_stem(s.options);
  if (!dir || stem.empty()) return;
  ::mkdir(dir.path.c_str(), 0777); // the end of the process makes the whole path; this file comes first
  s.steps_file = std::fopen((stem + ".steps.jsonl").c_str(), "w");
  if (s.steps_file == nullptr) say("nvscope: run: cannot write " + stem + ".steps.jsonl: " + std::strerror(errno) + " (steps are still summarised at the end)");
}

// Stops the collector and writes everything (finish calls it once per process).
void finish_profile(const char* why) {
  auto& s = state();
  s.c->stop();
  const trace full = s.c->take();
  if (s.options.bounded || s.c->stats().memory_limit_reached) write_totals(); // what was folded, not kept
  if (full.kernels.empty() && full.copies.empty() && full.memsets.empty() && full.ranges.empty()) {
    // A process that loaded CUDA but did no GPU work and opened no range (a launcher such as
    // torchrun's agent): nothing to write, and nothing to say beside its children's profiles.
    session_note("empty", "");
    return;
  }
  totals run = s.c->folded(); // every record not in `full`: with it, the whole run's totals
  merge(run, run_totals_of(s.options, full));
  write_profile(full, s.options, why, &run);
}

void write_profile(const trace& full, const run_options& o, const char* why, const totals* run) {
  auto& s = state();
  numbered_steps steps; // a bounded collection's steps as they ended: the schedule's window
  const bool numbered = s.options.bounded && o.range == capture_range::steps;
  if (numbered) {
    std::lock_guard<std::mutex> lock(s.steps_mutex);
    steps = s.steps;
  }
  const window_choice wc = choose_windows(full, o, numbered ? &steps : nullptr);
  const trace t = wc.whole ? trace{} : restrict_to(full, wc.windows);
  const trace& used = wc.whole ? full : t;
  analysis_options ao;
  if (!o.steps.empty()) ao.step_pattern = glob_regex(o.steps); // the window's steps are the analysis' steps
  if (!wc.whole) ao.window = time_window{used.begin, used.finish};
  if (s.options.attribute_process) ao.attribute = attribution_rule::process;
  const trace_index x = index_trace(used, ao.start_end, ao.attribute); // its links serve the exports, credited as the tables are
  const analysis_report r = analyze(used, x, ao);
  const bool color = use_color(static_cast<color_when>(s.options.color), stderr);
  const totals whole = run ? totals{} : run_totals_of(o, full); // the window's file still carries the run's totals
  const process_end w = end_process(o, used, r, x.links, pid_text(), why, color, run ? run : &whole);
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
  for (;;) {
    const ssize_t got = ::read(state().signal_pipe[0], &sig, 1);
    if (got != 1 && errno == EINTR) continue;
    if (got != 1) return;
    if (sig != SIGUSR1) break;
    char line[512];
    if (contain_failure([] { write_snapshot(); }, static_cast<long long>(::getpid()), line)) std::fprintf(stderr, "%s\n", line);
  }
  finish(sig == SIGINT ? "SIGINT" : "SIGTERM");
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

void install_signal_handlers() {
  auto& s = state();
  std::vector<int> wanted = {SIGINT, SIGTERM};
  if (s.options.bounded) wanted.push_back(SIGUSR1); // a snapshot; its default would end the program
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

// A bounded collection's step as it ends, for the step schedule's window at the end: the
// collector kept the raw records of the steps the schedule records by this same number.
void note_step(const step_totals& t) {
  auto& s = state();
  if (!s.options.bounded || s.options.range != capture_range::steps) return;
  const auto schedule = schedule_of(s.options);
  std::lock_guard<std::mutex> lock(s.steps_mutex);
  ++s.steps.seen;
  if (schedule.phase_of(t.number) == capture_phase::recording) s.steps.recorded.push_back({t.number, t.begin, t.end});
}

collector_options collector_options_of(const run_options& o) {
  collector_options c;
  c.kinds = static_cast<activity>(o.kinds);
  c.buffer_size = o.buffer_size;
  c.buffer_count = o.buffer_count;
  c.bounded = o.bounded;
  c.keep_steps = o.keep_steps;
  c.keep_slowest = o.keep_slowest;
  c.memory_limit = o.memory_limit;
  c.is_step_name = &run_step_name;
  if (o.range == capture_range::steps) {
    const auto schedule = schedule_of(o);
    c.keep_step_raw = [schedule](std::uint64_t n) { return schedule.phase_of(n) == capture_phase::recording; };
  }
  c.only_in_capture = o.bounded && o.range == capture_range::cuda_profiler_api; // its windows kept raw as they come
  if (o.range == capture_range::nvtx) { // --nvtx-capture=NAME[@DOMAIN]: its first range kept raw as it comes, as window.cpp picks it
    const std::size_t at = o.nvtx_capture.rfind('@');
    std::string name = o.nvtx_capture.substr(0, at), domain = at == std::string::npos ? std::string() : o.nvtx_capture.substr(at + 1);
    const bool any_domain = at == std::string::npos;
    c.keep_range_raw = [name, domain, any_domain](std::string_view n, std::string_view d) { return n == name && (any_domain || d == domain); };
  }
  c.on_step = [](const step_totals& t) {
    note_step(t);
    if (std::FILE* f = state().steps_file) {
      const std::string line = step_line(t);
      std::fwrite(line.data(), 1, line.size(), f);
      std::fflush(f);
    }
  };
  return c;
}

void start_collector() {
  auto& s = state();
  if (s.options.bounded) open_steps_file();
  s.c = new collector(collector_options_of(s.options));
  if (!s.c->start()) {
    const std::string why = s.c->errors().empty() ? std::string("unknown reason") : s.c->errors().back();
    say("nvscope: run: process " + pid_text() + " runs unprofiled (" + why + ")");
    session_note("unprofiled", why);
    return;
  }
  s.started.store(true);
  const run_options& o = s.options;
  if (o.bounded && (o.delay_s > 0.0 || o.duration_s > 0.0)) { // --delay/--duration: known now, kept raw
    const timestamp_ns from = s.c->result().begin + static_cast<timestamp_ns>(o.delay_s * 1e9);
    s.c->keep_raw_between(time_window{from, o.duration_s > 0.0 ? from + static_cast<timestamp_ns>(o.duration_s * 1e9) : ~timestamp_ns{0}});
  }
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
  // A window folds from the start: what falls outside it is never kept raw (the bounded
  // collection follows each window source as records arrive); a whole run is kept within
  // --memory-limit (collector_options::memory_limit).
  auto& o = state().options;
  if (o.range != capture_range::whole || o.delay_s > 0.0 || o.duration_s > 0.0) o.bounded = true;
  open_gate();
  return 1;
}

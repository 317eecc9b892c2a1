#include "run_options.hpp"

#include <nvscope/capture/env.hpp>
#include <nvscope/capture/schedule.hpp>
#include <nvscope/export/output_path.hpp>
#include <nvscope/export/reports.hpp>
#include <nvscope/detail/quote.hpp>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace nvscope {
inline namespace v1 {
namespace tool {

namespace {

using setter = std::string (*)(run_options&, std::string_view);

struct option_entry {
  const char* name;
  setter set;
  const char* section;  ///< Output, Window, Collection: where --help, the man page and docs/run.md list it
  const char* value;    ///< the value's placeholder or its choices
  const char* fallback; ///< the default as shown; "" when there is none
  const char* help;     ///< what it does, one sentence (@RANKS@: the rank variables, in %r's order)
  const char* words;    ///< what completion offers, space-separated; "@dir": folders; "": nothing
};

std::string quoted(std::string_view s) { return "'" + detail::escape_input(s, 64) + "'"; }

bool equal_nocase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

std::string parse_count(std::string_view v, std::uint64_t& out) {
  if (v.empty() || v.size() > 18) return "want a whole number";
  std::uint64_t n = 0;
  for (char c : v) {
    if (c < '0' || c > '9') return "want a whole number";
    n = n * 10 + static_cast<std::uint64_t>(c - '0');
  }
  out = n;
  return {};
}

// Bytes, with an optional K, M or G suffix (powers of 1024).
std::string parse_bytes(std::string_view v, std::size_t& out) {
  std::uint64_t scale = 1;
  if (!v.empty()) {
    const char s = v.back();
    if (s == 'K' || s == 'k') scale = std::uint64_t{1} << 10;
    if (s == 'M' || s == 'm') scale = std::uint64_t{1} << 20;
    if (s == 'G' || s == 'g') scale = std::uint64_t{1} << 30;
    if (scale != 1) v.remove_suffix(1);
  }
  std::uint64_t n = 0;
  if (!parse_count(v, n).empty() || n == 0) return "want a positive size in bytes (suffix K, M or G allowed)";
  if (n > (std::uint64_t{1} << 40) / scale) return "too large (at most 1T)";
  out = static_cast<std::size_t>(n * scale);
  return {};
}

// Seconds from 0 to max_window_seconds: past it a window's bounds would leave the 64-bit
// nanosecond clock (2^64 ns is about 584 years; the clock's origin is already ~56 years in).
std::string parse_seconds(std::string_view v, double& out) {
  const std::string s(v);
  char* end = nullptr;
  errno = 0;
  const double d = s.empty() ? -1.0 : std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || (errno != 0 && errno != ERANGE) || !std::isfinite(d) || d < 0.0)
    return "want seconds (a number >= 0)";
  if (d > max_window_seconds) return "want seconds from 0 to 1000000000 (about 31 years)";
  out = d;
  return {};
}

// A schedule count, read and limited as the schedule reads one (NVSCOPE_CAPTURE's rule).
std::string parse_schedule(std::string_view v, std::uint64_t& out) {
  if (parse_schedule_count(v, out)) return {};
  const bool digits = !v.empty() && v.find_first_not_of("0123456789") == std::string_view::npos;
  return digits ? "want a whole number 0.." + std::to_string(max_schedule_count) : "want a whole number";
}

// An output path pattern (--name, --output-dir): its syntax now, its values in each process.
std::string set_pattern(std::string& field, std::string_view v) {
  if (const auto syntax = check_output_pattern(v); !syntax)
    return "at position " + std::to_string(syntax.position) + ": " + syntax.why;
  field = std::string(v);
  return {};
}

std::string set_outputs(run_options& o, std::string_view v) {
  const run_outputs none{false, false, false, false, false, false, false, false};
  run_outputs r = none;
  std::size_t pos = 0;
  while (pos <= v.size()) {
    const std::size_t comma = v.find(',', pos);
    const std::string_view item = v.substr(pos, comma == v.npos ? v.npos : comma - pos);
    if (item == "summary") r.summary = true;
    else if (item == "csv") r.csv = true;
    else if (item == "json") r.json = true;
    else if (item == "trace") r.trace = true;
    else if (item == "folded") r.folded = true;
    else if (item == "flame") r.flame = true;
    else if (item == "steps") r.steps = true;
    else if (item == "histograms") r.histograms = true;
    else if (item == "all") r = run_outputs{true, true, true, true, true, true, true, true};
    else if (item == "none") r = none;
    else return "unknown output " + quoted(item) + " (want summary, csv, json, trace, folded, flame, steps, histograms, all or none)";
    if (comma == v.npos) break;
    pos = comma + 1;
  }
  o.outputs = r;
  return {};
}

// --reports: nsys's names, checked here so that a bad name stops the run before the program starts.
std::string set_reports(run_options& o, std::string_view v) {
  const auto chosen = parse_reports(v);
  if (!chosen.error.empty()) return chosen.error.substr(std::string_view("nvscope: reports: ").size());
  o.reports = std::string(v);
  return {};
}

// Whether a report of `list` reads CUDA API calls, which the collector then records.
bool reports_read_api(const std::string& list) {
  for (const auto& c : parse_reports(list).reports)
    if (!c.from_analysis && c.computed != trace_report::cuda_gpu_trace && c.computed != trace_report::cuda_gpu_sum &&
        c.computed != trace_report::nvtx_pushpop_sum && c.computed != trace_report::nvtx_pushpop_trace &&
        c.computed != trace_report::nvtx_startend_sum && c.computed != trace_report::cuda_gpu_kern_gb_sum &&
        c.computed != trace_report::nvtx_gpu_proj_trace)
      return true;
  return false;
}

std::string set_kinds(run_options& o, std::string_view v) {
  struct named {
    const char* name;
    std::uint32_t bits;
  };
  static constexpr named names[] = {
      {"kernels", kind_bits::kernels},   {"copies", kind_bits::copies},       {"memsets", kind_bits::memsets},
      {"syncs", kind_bits::syncs},       {"nvtx", kind_bits::nvtx},           {"runtime", kind_bits::runtime_api},
      {"driver", kind_bits::driver_api}, {"overhead", kind_bits::overhead},   {"standard", kind_bits::standard}};
  std::uint32_t bits = 0;
  std::size_t pos = 0;
  while (pos <= v.size()) {
    const std::size_t comma = v.find(',', pos);
    const std::string_view item = v.substr(pos, comma == v.npos ? v.npos : comma - pos);
    bool found = false;
    for (const auto& n : names)
      if (item == n.name) {
        bits |= n.bits;
        found = true;
      }
    if (!found)
      return "unknown kind " + quoted(item) +
             " (want kernels, copies, memsets, syncs, nvtx, runtime, driver, overhead or standard)";
    if (comma == v.npos) break;
    pos = comma + 1;
  }
  o.kinds = bits;
  return {};
}

std::string set_capture_range(run_options& o, std::string_view v) {
  if (equal_nocase(v, "none")) o.range = capture_range::whole;
  else if (equal_nocase(v, "cudaProfilerApi")) o.range = capture_range::cuda_profiler_api;
  else if (equal_nocase(v, "nvtx")) o.range = capture_range::nvtx;
  else if (equal_nocase(v, "steps")) o.range = capture_range::steps;
  else return "want none, cudaProfilerApi, nvtx or steps";
  return {};
}

// `stderr` and `file` are the older spellings of `full` and `none`.
std::string set_summary(run_options& o, std::string_view v) {
  if (v == "short") o.summary_shows = summary_view::screen;
  else if (v == "full" || v == "stderr") o.summary_shows = summary_view::full;
  else if (v == "none" || v == "file") o.summary_shows = summary_view::none;
  else return "want short, full or none";
  return {};
}

std::string set_color(run_options& o, std::string_view v) {
  if (v == "auto") o.color = color_choice::automatic;
  else if (v == "always") o.color = color_choice::always;
  else if (v == "never") o.color = color_choice::never;
  else return "want auto, always or never";
  return {};
}

std::string set_attribute(run_options& o, std::string_view v) {
  if (v == "thread") o.attribute_process = false;
  else if (v == "process") o.attribute_process = true;
  else return "want thread or process";
  return {};
}

std::string set_capture_spec(run_options& o, std::string_view v) {
  const capture_spec spec = parse_capture_spec(v);
  if (!spec.ok) return spec.error;
  const schedule_options& s = spec.options;
  if (s.recorded_step_count() == 0 && s.repeat() != 0) return "this schedule records no step";
  o.skip = s.skip_first();
  o.wait = s.wait();
  o.warmup = s.warmup();
  o.active = s.active();
  o.repeat = s.repeat();
  return {};
}

// --keep-steps, --keep-slowest: a count of steps, and the bounded collection on.
std::string set_kept(run_options& o, std::string_view v, std::size_t& out) {
  std::uint64_t n = 0;
  if (!parse_count(v, n).empty() || n > 1000000) return "want a count of steps from 0 to 1000000";
  out = static_cast<std::size_t>(n);
  o.bounded = true;
  return {};
}


// THE option table: the parser reads it, and --help, the man page nvscope(1), the bash
// completion and docs/run.md's option tables are made from it (option_docs.cpp; a test checks
// docs/run.md holds what it makes). Adding an option is one row: name, setter, section, value
// placeholder, default as shown, what it does, and the words completion offers.
constexpr option_entry option_table[] = {
    {"output-dir", [](run_options& o, std::string_view v) -> std::string {
       if (v.empty()) return "want a folder";
       return set_pattern(o.output_dir, v);
     }, "Output", "DIR", ".", "folder of the files, created if missing; may use the patterns of --name", "@dir"},
    {"name", [](run_options& o, std::string_view v) -> std::string {
       if (v.empty() || v.find('/') != v.npos) return "want a file name stem without '/'";
       return set_pattern(o.name, v);
     }, "Output", "PATTERN", "nvscope_%p",
     "file name stem: %p pid, %h host, %r rank (the first set of @RANKS@), %q{VAR} a variable, %% a percent sign", ""},
    {"outputs", set_outputs, "Output", "LIST", "summary,json,trace",
     "any of summary, csv, json, trace, folded, flame, steps, histograms (SVG pictures), or all, none",
     "summary csv json trace folded flame steps histograms all none"},
    {"reports", set_reports, "Output", "LIST", "",
     "nsys stats reports by nsys's name, written as STEM.NAME.csv, STEM.reports.txt and STEM.reports.json: summary "
     "(what nsys stats prints by default), cuda_api_sum, cuda_gpu_trace[:base|:mangled], ... (docs/analysis.md)", "summary cuda_api_sum cuda_api_trace cuda_gpu_trace cuda_gpu_sum cuda_kern_exec_sum cuda_kern_exec_trace nvtx_pushpop_sum nvtx_pushpop_trace nvtx_startend_sum cuda_api_gpu_sum cuda_gpu_kern_gb_sum nvtx_gpu_proj_trace"},
    {"summary", set_summary, "Output", "short|full|none", "short",
     "what stderr shows at the end of each process: one screen of 40 lines of 120 columns (short), every table as "
     "STEM.txt holds them (full), or errors and the files line only (none)", "short full none"},
    {"color", set_color, "Output", "auto|always|never", "auto", "colour the screen (auto: on a terminal, not with NO_COLOR)",
     "auto always never"},
    {"capture-range", set_capture_range, "Window", "none|cudaProfilerApi|nvtx|steps", "none",
     "what is analysed and written: the whole run, between cudaProfilerStart and cudaProfilerStop, the range of "
     "--nvtx-capture, or the steps of the schedule", "none cudaProfilerApi nvtx steps"},
    {"nvtx-capture", [](run_options& o, std::string_view v) -> std::string {
       if (v.empty() || v.front() == '@') return "want NAME or NAME@DOMAIN";
       o.nvtx_capture = std::string(v);
       return {};
     }, "Window", "NAME[@DOMAIN]", "", "the first NVTX range of that name (implies --capture-range=nvtx)", ""},
    {"steps", [](run_options& o, std::string_view v) -> std::string {
       o.steps = std::string(v);
       return {};
     }, "Window", "PATTERN", "", "step range names, any case, * and ? allowed (default: step, step_N, step N, ProfilerStep#N, ...)", ""},
    {"capture", set_capture_spec, "Window", "SPEC", "", "the schedule as NVSCOPE_CAPTURE writes it (skip=5,active=10 / 10-20 / 7)", ""},
    {"attribute", set_attribute, "Analysis", "thread|process", "thread",
     "which range a kernel belongs to when the thread that launched it had none open: thread is nsys's rule (no range; "
     "the tables equal nsys's), process the range open on the one other thread that has one, as PyTorch's backward "
     "kernels (launched by autograd's thread) under the main thread's backward range", "thread process"},
    {"skip", [](run_options& o, std::string_view v) { return parse_schedule(v, o.skip); }, "Window", "N", "0",
     "steps skipped before the schedule starts (0..1000000000)", ""},
    {"wait", [](run_options& o, std::string_view v) { return parse_schedule(v, o.wait); }, "Window", "N", "0",
     "steps waited at the start of each cycle", ""},
    {"warmup", [](run_options& o, std::string_view v) { return parse_schedule(v, o.warmup); }, "Window", "N", "0",
     "warm-up steps of each cycle (run, not recorded)", ""},
    {"active", [](run_options& o, std::string_view v) { return parse_schedule(v, o.active); }, "Window", "N", "",
     "recorded steps of each cycle (needed by a schedule)", ""},
    {"repeat", [](run_options& o, std::string_view v) { return parse_schedule(v, o.repeat); }, "Window", "N", "1",
     "cycles (0: every one)", ""},
    {"delay", [](run_options& o, std::string_view v) { return parse_seconds(v, o.delay_s); }, "Window", "SECONDS", "0",
     "start of a time window from the start of collection (at most 1e9 s)", ""},
    {"duration", [](run_options& o, std::string_view v) { return parse_seconds(v, o.duration_s); }, "Window", "SECONDS", "0",
     "length of the time window (0: to the end)", ""},
    {"kinds", set_kinds, "Collection", "LIST", "standard",
     "any of kernels, copies, memsets, syncs, nvtx, runtime, driver, overhead, or standard (the first five)",
     "kernels copies memsets syncs nvtx runtime driver overhead standard"},
    {"buffer-size", [](run_options& o, std::string_view v) { return parse_bytes(v, o.buffer_size); }, "Collection", "BYTES",
     "8M", "size of one CUPTI buffer (K, M, G suffixes)", ""},
    {"buffer-count", [](run_options& o, std::string_view v) -> std::string {
       std::uint64_t n = 0;
       if (!parse_count(v, n).empty() || n == 0 || n > 4096) return "want a count from 1 to 4096";
       o.buffer_count = static_cast<std::size_t>(n);
       return {};
     }, "Collection", "N", "8", "number of buffers (1 to 4096); memory is bounded by their product", ""},
    {"memory-limit", [](run_options& o, std::string_view v) -> std::string {
       if (v == "none") {
         o.memory_limit = std::numeric_limits<std::size_t>::max(); // collector_options' no_memory_limit
         return {};
       }
       o.bounded = true;
       if (auto e = parse_bytes(v, o.memory_limit); !e.empty()) return e;
       return o.memory_limit == 0 ? "want a size above 0 (K, M, G suffixes) or none" : std::string();
     }, "Long runs", "BYTES", "1G",
     "raw records held at most, always (none: keep everything): a run that fits keeps them all; past it, later "
     "records are folded into STEM.totals.json, one line says so, the run goes on. A size given turns on the bounded "
     "collection (so do --keep-steps, --keep-slowest): only the window and the flight recorder kept raw, past the limit "
     "kept steps given up, each step summarised in STEM.steps.jsonl; SIGUSR1 writes a snapshot (STEM.snapshot_N.*)", ""},
    {"keep-steps", [](run_options& o, std::string_view v) { return set_kept(o, v, o.keep_steps); }, "Long runs", "N", "3",
     "raw records of the last N steps (0..1000000)", ""},
    {"keep-slowest", [](run_options& o, std::string_view v) { return set_kept(o, v, o.keep_slowest); }, "Long runs", "K", "3",
     "raw records of the K slowest steps by wall time (0..1000000)", ""},
};

const option_entry* find_option(std::string_view name) {
  for (const auto& e : option_table)
    if (name == e.name) return &e;
  return nullptr;
}

bool is_schedule_option(std::string_view n) {
  return n == "skip" || n == "wait" || n == "warmup" || n == "active" || n == "repeat" || n == "capture" ||
         n == "steps";
}

// Applies one option; the error names where the value came from.
bool apply(run_parse& r, const option_entry& e, std::string_view value, const std::string& source) {
  const std::string why = e.set(r.options, value);
  if (!why.empty()) {
    r.error = "nvscope: run: bad " + source + "=" + quoted(value) + ": " + why;
    return false;
  }
  for (auto& g : r.given)
    if (g.name == e.name) {
      g.value = std::string(value);
      return true;
    }
  r.given.push_back(given_option{e.name, std::string(value)});
  return true;
}

bool given(const run_parse& r, std::string_view name) {
  for (const auto& g : r.given)
    if (g.name == name) return true;
  return false;
}

// The combination: implied capture ranges and what each range needs.
void check_combination(run_parse& r) {
  auto& o = r.options;
  bool schedule = false;
  for (const auto& g : r.given) schedule = schedule || is_schedule_option(g.name);
  const bool range_given = given(r, "capture-range");
  if (!o.nvtx_capture.empty() && !range_given) o.range = capture_range::nvtx;
  if (schedule && !range_given && o.nvtx_capture.empty()) o.range = capture_range::steps;
  if (o.range == capture_range::nvtx && o.nvtx_capture.empty())
    r.error = "nvscope: run: --capture-range=nvtx needs --nvtx-capture=NAME";
  else if (!o.nvtx_capture.empty() && o.range != capture_range::nvtx)
    r.error = "nvscope: run: --nvtx-capture needs --capture-range=nvtx (or no --capture-range)";
  else if (schedule && o.range != capture_range::steps)
    r.error = "nvscope: run: step options (--steps, --skip, --wait, --warmup, --active, --repeat, --capture) need "
              "--capture-range=steps (or no --capture-range)";
  else if (o.range == capture_range::steps && o.active == 0)
    r.error = "nvscope: run: a step schedule needs --active=N (N >= 1)";
  if (!r.error.empty()) return;
  if (reports_read_api(o.reports)) o.kinds |= kind_bits::runtime_api | kind_bits::driver_api;
  // Record the implied range, so that every process of the tree sees the same one.
  const char* implied = o.range == capture_range::nvtx ? "nvtx" : o.range == capture_range::steps ? "steps" : nullptr;
  if (implied != nullptr && !range_given) r.given.push_back(given_option{"capture-range", implied});
}

bool read_environment(run_parse& r) {
  for (const auto& e : option_table) {
    const std::string var = env_name(e.name);
    const char* v = std::getenv(var.c_str());
    if (v != nullptr && !apply(r, e, v, var)) return false;
  }
  return true;
}

} // namespace

std::string env_name(std::string_view option) {
  std::string out = "NVSCOPE_RUN_";
  for (char c : option) out += c == '-' ? '_' : static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
  return out;
}

run_parse parse_run_env() {
  run_parse r;
  if (read_environment(r)) check_combination(r);
  return r;
}

run_parse parse_run(int argc, char** argv, int first) {
  run_parse r;
  if (!read_environment(r)) return r;
  int i = first;
  for (; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--") {
      ++i;
      break;
    }
    if (a == "-h" || a == "--help") {
      r.help = true;
      return r;
    }
    if (a.size() < 3 || a.substr(0, 2) != "--") {
      if (!a.empty() && a.front() == '-') {
        r.error = "nvscope: run: unknown option " + quoted(a) + " (see nvscope run --help)";
        return r;
      }
      break; // the program
    }
    const std::string_view body = a.substr(2);
    const std::size_t eq = body.find('=');
    const std::string_view name = body.substr(0, eq);
    const option_entry* e = find_option(name);
    if (e == nullptr) {
      r.error = "nvscope: run: unknown option " + quoted(std::string("--") + std::string(name)) +
                " (see nvscope run --help)";
      return r;
    }
    std::string_view value;
    if (eq != body.npos) {
      value = body.substr(eq + 1);
    } else if (i + 1 < argc && std::string_view(argv[i + 1]).substr(0, 2) != "--") {
      value = argv[++i]; // `--opt value`; never `--` or another option as the value
    } else {
      r.error = "nvscope: run: option --" + std::string(name) + " needs a value";
      if (i + 1 < argc) r.error += " (not " + quoted(argv[i + 1]) + "; a value that begins with '--' is written --" + std::string(name) + "=VALUE)";
      return r;
    }
    if (!apply(r, *e, value, "--" + std::string(name))) return r;
  }
  if (i >= argc) {
    r.error = "nvscope: run: no program given (nvscope run [options] -- program args...)";
    return r;
  }
  r.program = i;
  check_combination(r);
  return r;
}

std::vector<std::pair<std::string, std::string>> child_environment(const std::vector<given_option>& given) {
  std::vector<std::pair<std::string, std::string>> env;
  env.reserve(given.size());
  for (const auto& g : given) env.emplace_back(env_name(g.name), g.value);
  return env;
}

std::vector<option_doc> run_option_docs() {
  std::vector<option_doc> out;
  for (const auto& e : option_table) {
    std::string help = e.help;
    if (const auto at = help.find("@RANKS@"); at != std::string::npos) help.replace(at, 7, rank_variable_list());
    out.push_back(option_doc{e.name, e.section, e.value, e.fallback, std::move(help), e.words});
  }
  return out;
}

} // namespace tool
} // namespace v1
} // namespace nvscope

#include "run_options.hpp"

#include <nvscope/capture/env.hpp>
#include <nvscope/capture/schedule.hpp>
#include <nvscope/export/output_path.hpp>
#include <nvscope/export/recipes.hpp>
#include <nvscope/export/reports.hpp>
#include <nvscope/detail/quote.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

#include <dirent.h>

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

// --recipes: nsys's recipe names and options, checked here as --reports is.
std::string set_recipes(run_options& o, std::string_view v) {
  const auto chosen = parse_recipes(v);
  if (!chosen.error.empty()) return chosen.error.substr(std::string_view("nvscope: recipes: ").size());
  o.recipes = std::string(v);
  return {};
}

// Whether a report of `list` reads CUDA API calls, which the collector then records.
bool reports_read_api(const std::string& list) {
  for (const auto& c : parse_reports(list).reports)
    if (c.nvtx_names || (!c.from_analysis && c.computed != trace_report::cuda_gpu_trace && c.computed != trace_report::cuda_gpu_sum &&
        c.computed != trace_report::nvtx_pushpop_sum && c.computed != trace_report::nvtx_pushpop_trace &&
        c.computed != trace_report::nvtx_startend_sum && c.computed != trace_report::cuda_gpu_kern_gb_sum &&
        c.computed != trace_report::nvtx_gpu_proj_trace))
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

// nsys's booleans: true or false.
std::string parse_bool(std::string_view v, bool& out) {
  if (v == "true") out = true;
  else if (v == "false") out = false;
  else return "want true or false";
  return {};
}

// -o/--output: nsys's report path, split into --output-dir and --name (relative to the working
// folder; the patterns of --name anywhere in it). nsys's extension .nsys-rep, where given, is
// dropped: the stem is the path before it, as nsys's report is.
std::string set_output(run_options& o, std::string_view v) {
  constexpr std::string_view nsys_extension = ".nsys-rep";
  if (v.size() > nsys_extension.size() && v.substr(v.size() - nsys_extension.size()) == nsys_extension)
    v.remove_suffix(nsys_extension.size());
  const std::size_t slash = v.rfind('/');
  const std::string_view dir = slash == v.npos ? std::string_view(".") : slash == 0 ? std::string_view("/") : v.substr(0, slash);
  const std::string_view stem = slash == v.npos ? v : v.substr(slash + 1);
  if (stem.empty()) return "want a path that ends in a file name stem (not in '/')";
  if (auto e = set_pattern(o.output_dir, dir); !e.empty()) return e;
  return set_pattern(o.name, stem);
}

// -t/--trace: nsys's trace names. cuda is the GPU work and the CUDA API calls, nvtx the NVTX
// ranges; nsys's other sources are named in one line, as nvscope collects none of them.
std::string set_trace(run_options& o, std::string_view v) {
  static constexpr const char* foreign[] = {"osrt", "cublas", "cublas-verbose", "cudnn", "cusparse", "cusparse-verbose",
                                            "cudla", "cudla-verbose", "cusolver", "mpi", "ucx", "oshmem", "openacc", "openmp",
                                            "opengl", "opengl-annotations", "vulkan", "vulkan-annotations", "nvvideo",
                                            "nvmedia", "gds", "syscall", "python-gil", "dx11", "dx12", "wddm", "tegra-accelerators"};
  const std::uint32_t cuda = kind_bits::kernels | kind_bits::copies | kind_bits::memsets | kind_bits::syncs |
                             kind_bits::runtime_api | kind_bits::driver_api;
  std::uint32_t bits = 0;
  std::size_t pos = 0;
  while (pos <= v.size()) {
    const std::size_t comma = v.find(',', pos);
    const std::string_view item = v.substr(pos, comma == v.npos ? v.npos : comma - pos);
    if (item == "cuda") bits |= cuda;
    else if (item == "nvtx") bits |= kind_bits::nvtx;
    else if (item == "none") bits |= 0u; // no kind: nsys's -t none
    else {
      for (const char* f : foreign)
        if (item == f) return "nvscope cannot trace " + quoted(item) + " (it traces cuda and nvtx; docs/run.md, \"nsys's options\")";
      return "unknown trace " + quoted(item) + " (want cuda, nvtx or none)";
    }
    if (comma == v.npos) break;
    pos = comma + 1;
  }
  o.kinds = bits;
  return {};
}

// --capture-range-end: nsys's stop, stop-shutdown, repeat[:N], none.
std::string set_capture_end(run_options& o, std::string_view v) {
  o.capture_end_count = 0;
  if (v == "stop") o.capture_end = range_end::stop;
  else if (v == "stop-shutdown") o.capture_end = range_end::stop_shutdown;
  else if (v == "none") o.capture_end = range_end::none;
  else if (v == "repeat") o.capture_end = range_end::repeat;
  else if (v.substr(0, 7) == "repeat:") {
    if (!parse_count(v.substr(7), o.capture_end_count).empty() || o.capture_end_count == 0)
      return "want repeat:N with a whole number N >= 1";
    o.capture_end = range_end::repeat;
  } else return "want stop, stop-shutdown, repeat, repeat:N or none";
  return {};
}

// --cuda-graph-trace: nvscope records every kernel of a graph launch (nsys's node); it has no
// record of a whole graph, so nsys's graph is refused in one line.
std::string set_graph_trace(run_options&, std::string_view v) {
  if (v == "node") return {};
  if (v == "graph") return "nvscope records each node of a CUDA graph, not whole graphs (want node)";
  return "want node (nvscope cannot record graph)";
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
    {"output", set_output, "Output", "PATH", "",
     "nsys's -o: the stem as one path, the folder and the file name of --output-dir and --name at once, with their "
     "patterns (%p, %h, %q{VAR}, %%); the files are PATH.txt, PATH.json, ...", "@dir"},
    {"force-overwrite", [](run_options& o, std::string_view v) { return parse_bool(v, o.force_overwrite); }, "Output",
     "true|false", "false",
     "nsys's -f: write over the files of an existing stem; false: a stem without %p whose files exist stops the run "
     "with one line (exit 2) before the program starts", "true false"},
    {"outputs", set_outputs, "Output", "LIST", "summary,json,trace",
     "any of summary, csv, json, trace, folded, flame, steps, histograms (SVG pictures), or all, none",
     "summary csv json trace folded flame steps histograms all none"},
    {"reports", set_reports, "Output", "LIST", "",
     "nsys stats reports by nsys's name, written as STEM.NAME.csv, STEM.reports.txt and STEM.reports.json: summary "
     "(what nsys stats prints by default), cuda_api_sum, cuda_gpu_kern_sum[:nvtx-name][:base|:mangled], cuda_gpu_trace[:nvtx-name][:base|:mangled] (NAME:nvtx-name on each of the seven reports with kernel names), ... (docs/analysis.md)", "summary cuda_api_sum cuda_api_trace cuda_gpu_trace cuda_gpu_sum cuda_kern_exec_sum cuda_kern_exec_trace nvtx_pushpop_sum nvtx_pushpop_trace nvtx_startend_sum cuda_api_gpu_sum cuda_gpu_kern_gb_sum nvtx_gpu_proj_trace"},
    {"recipes", set_recipes, "Output", "LIST", "",
     "nsys recipes by nsys's name, NAME[:k=v...] with nsys's recipe options, written as STEM.NAME.csv (a recipe of several files, as nsys writes them: STEM.NAME.FILE.csv): "
     "gpu_gaps[:gap=MS], gpu_time_util[:threshold=PCT][:chunks=N], cuda_api_sync, cuda_memcpy_async, cuda_memcpy_sync, "
     "cuda_memset_sync, cuda_gpu_kern_hist, cuda_gpu_kern_pace:name=KERNEL, nvtx_pace:name=RANGE, nvtx_gpu_proj_pace:name=RANGE, "
     "nccl_gpu_overlap_trace, cuda_gpu_time_util_map[:bins=N], nccl_gpu_time_util_map[:bins=N] (docs/analysis.md)",
     "gpu_gaps gpu_time_util cuda_api_sync cuda_memcpy_async cuda_memcpy_sync cuda_memset_sync cuda_gpu_kern_hist cuda_gpu_kern_pace nvtx_pace nvtx_gpu_proj_pace nccl_gpu_overlap_trace cuda_gpu_time_util_map nccl_gpu_time_util_map"},
    {"summary", set_summary, "Output", "short|full|none", "short",
     "what stderr shows at the end of each process: one screen of 40 lines of 120 columns (short), every table as "
     "STEM.txt holds them (full), or errors and the files line only (none)", "short full none"},
    {"stats", [](run_options& o, std::string_view v) { return parse_bool(v, o.stats); }, "Output", "true|false",
     "false", "nsys's --stats: at the end print nsys stats' default reports (those of --reports=summary) on stdout",
     "true false"},
    {"color", set_color, "Output", "auto|always|never", "auto", "colour the screen (auto: on a terminal, not with NO_COLOR)",
     "auto always never"},
    {"capture-range", set_capture_range, "Window", "none|cudaProfilerApi|nvtx|steps", "none",
     "what is analysed and written: the whole run, between cudaProfilerStart and cudaProfilerStop, the range of "
     "--nvtx-capture, or the steps of the schedule", "none cudaProfilerApi nvtx steps"},
    {"capture-range-end", set_capture_end, "Window", "stop|stop-shutdown|repeat[:N]|none", "stop-shutdown",
     "nsys's: what ends a cudaProfilerApi or NVTX capture range: the first range only (stop; stop-shutdown too, but the "
     "program is not ended), every range or the first N (repeat[:N]), or nothing: from the first start to the end (none)",
     "stop stop-shutdown repeat none"},
    {"nvtx-capture", [](run_options& o, std::string_view v) -> std::string {
       if (v.empty() || v.front() == '@' || v.back() == '@') return "want RANGE, RANGE@DOMAIN or RANGE@*";
       o.nvtx_capture = std::string(v);
       return {};
     }, "Window", "RANGE[@DOMAIN|@*]", "",
     "nsys's: the NVTX range of that name, in the default domain (RANGE), in DOMAIN, or in any domain (@*); implies "
     "--capture-range=nvtx", ""},
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
    {"trace", set_trace, "Collection", "LIST", "",
     "nsys's -t, instead of --kinds: cuda (the kinds kernels, copies, memsets, syncs, runtime, driver), nvtx, or none; "
     "nsys's other names (osrt, cublas, cudnn, ...) stop the run with one line", "cuda nvtx none"},
    {"cuda-graph-trace", set_graph_trace, "Collection", "node", "node",
     "nsys's: node, every kernel of a graph launch as its own kernel (nvscope has no whole-graph records: graph is "
     "refused)", "node"},
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

// nsys's one-letter spellings: -o PATH or -oPATH is --output=PATH. Here rather than a column of
// the table, so that a row stays seven fields; run_option_docs joins them to their rows.
struct short_entry {
  char letter;
  const char* name;
};
constexpr short_entry short_table[] = {
    {'o', "output"}, {'f', "force-overwrite"}, {'t', "trace"}, {'d', "duration"}, {'y', "delay"}};

const option_entry* find_option(std::string_view name) {
  for (const auto& e : option_table)
    if (name == e.name) return &e;
  return nullptr;
}

const option_entry* find_short(char letter) {
  for (const auto& s : short_table)
    if (s.letter == letter) return find_option(s.name);
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

// --stats=true: nsys stats' default reports among --reports' (once).
void add_summary_report(std::string& reports) {
  for (std::size_t pos = 0; pos <= reports.size();) {
    const std::size_t comma = std::min(reports.find(',', pos), reports.size());
    if (reports.compare(pos, comma - pos, "summary") == 0) return;
    pos = comma + 1;
  }
  reports += reports.empty() ? "summary" : ",summary";
}

// The combination: implied capture ranges and what each range needs.
void check_combination(run_parse& r) {
  auto& o = r.options;
  if (o.stats) add_summary_report(o.reports);
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
  else if (given(r, "output") && (given(r, "output-dir") || given(r, "name")))
    r.error = "nvscope: run: -o/--output names the folder and the stem at once: give it without --output-dir and --name";
  else if (given(r, "trace") && given(r, "kinds"))
    r.error = "nvscope: run: -t/--trace and --kinds choose the same kinds: give one of them";
  else if (given(r, "capture-range-end") && o.range != capture_range::cuda_profiler_api && o.range != capture_range::nvtx)
    r.error = "nvscope: run: --capture-range-end needs --capture-range=cudaProfilerApi or nvtx (or --nvtx-capture)";
  if (!r.error.empty()) return;
  if (reports_read_api(o.reports)) o.kinds |= kind_bits::runtime_api | kind_bits::driver_api;
  for (const auto which : parse_recipes(o.recipes).recipes)
    if (recipe_reads_api(which)) o.kinds |= kind_bits::runtime_api;
  // Record the implied range, so that every process of the tree sees the same one.
  const char* implied = o.range == capture_range::nvtx ? "nvtx" : o.range == capture_range::steps ? "steps" : nullptr;
  if (implied != nullptr && !range_given) r.given.push_back(given_option{"capture-range", implied});
}

// Whether `a` is an option rather than a value: `--` and `--x...`, or a one-letter option.
bool looks_like_option(std::string_view a) {
  if (a.substr(0, 2) == "--") return true;
  return a.size() == 2 && a[0] == '-' && (a[1] == 'h' || find_short(a[1]) != nullptr);
}

// Reads the option at argv[i] (--name=value, --name value, -x value, -xvalue), moving `i`
// past a separate value; false with the one-line error when it is bad. A separate value is
// never `--` or another option; -f and --force-overwrite alone mean true, as a flag.
bool read_option(run_parse& r, int argc, char** argv, int& i) {
  const std::string_view a = argv[i];
  const bool is_long = a.size() >= 3 && a.substr(0, 2) == "--";
  const std::string_view body = a.substr(is_long ? 2 : 1);
  const std::size_t eq = is_long ? body.find('=') : std::string_view::npos;
  const std::string_view name = is_long ? body.substr(0, eq) : body.substr(0, 1);
  const option_entry* e = is_long ? find_option(name) : a.size() >= 2 ? find_short(a[1]) : nullptr;
  if (e == nullptr) {
    r.error = "nvscope: run: unknown option " + quoted(is_long ? "--" + std::string(name) : std::string(a)) +
              " (see nvscope run --help)";
    return false;
  }
  const std::string spelled = (is_long ? "--" : "-") + std::string(name);
  const bool has_next = i + 1 < argc && !looks_like_option(argv[i + 1]);
  const bool joined = !is_long && body.size() > 1;
  const bool flag = std::strcmp(e->name, "force-overwrite") == 0 && eq == body.npos && !joined &&
                    (!has_next || (std::strcmp(argv[i + 1], "true") != 0 && std::strcmp(argv[i + 1], "false") != 0));
  std::string_view value;
  if (eq != body.npos) value = body.substr(eq + 1);
  else if (joined) value = body.substr(1); // -oPATH
  else if (flag) value = "true";
  else if (has_next) value = argv[++i]; // `--opt value`; never `--` or another option as the value
  else {
    r.error = "nvscope: run: option " + spelled + " needs a value";
    if (i + 1 < argc) r.error += " (not " + quoted(argv[i + 1]) + "; a value that begins with '-' is written --" + e->name + "=VALUE)";
    return false;
  }
  return apply(r, *e, value, spelled);
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
    if (a.empty() || a.front() != '-') break; // the program
    if (!read_option(r, argc, argv, i)) return r;
  }
  if (i >= argc) {
    r.error = "nvscope: run: no program given (nvscope run [options] -- program args...)";
    return r;
  }
  r.program = i;
  check_combination(r);
  return r;
}

std::string refuse_overwrite(const run_options& o) {
  if (o.force_overwrite || o.name.find("%p") != std::string::npos || o.output_dir.find("%p") != std::string::npos) return {};
  const path_result dir = expand_output_path(o.output_dir), stem = expand_output_path(o.name);
  if (!dir || !stem) return {}; // each process says why it cannot name its files
  DIR* d = ::opendir(dir.path.c_str());
  if (d == nullptr) return {};
  std::string found;
  const std::string prefix = stem.path + ".";
  while (const dirent* entry = ::readdir(d))
    if (found.empty() && std::strncmp(entry->d_name, prefix.c_str(), prefix.size()) == 0) found = entry->d_name;
  ::closedir(d);
  if (found.empty()) return {};
  return "nvscope: run: " + quoted(dir.path + "/" + found) + " exists: not overwritten (-f/--force-overwrite=true writes over it)";
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
    std::string letter;
    for (const auto& s : short_table)
      if (std::strcmp(s.name, e.name) == 0) letter = std::string(1, s.letter);
    out.push_back(option_doc{e.name, std::move(letter), e.section, e.value, e.fallback, std::move(help), e.words});
  }
  return out;
}

} // namespace tool
} // namespace v1
} // namespace nvscope

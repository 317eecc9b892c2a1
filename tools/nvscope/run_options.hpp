#pragma once
// The options of `nvscope run`: one table, read from the command line and from
// NVSCOPE_RUN_* environment variables (the command line wins). The tool validates them,
// then hands them to every process of the tree as NVSCOPE_RUN_* variables, which the
// injection library parses again with the same table.

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nvscope {
inline namespace v1 {
namespace tool {

/// Which part of the run is analysed and written.
enum class capture_range : std::uint8_t {
  whole,              ///< everything from CUDA's start to the process's end
  cuda_profiler_api,  ///< between the program's cudaProfilerStart and cudaProfilerStop
  nvtx,               ///< the first NVTX range named by --nvtx-capture
  steps,              ///< the active steps of a schedule over NVTX step ranges
};

/// What happens at the end of a cudaProfilerApi or NVTX capture range (--capture-range-end,
/// nsys's values). nvscope analyses in the process, so it never ends the program itself.
enum class range_end : std::uint8_t {
  stop,          ///< the first range only; the program runs on
  stop_shutdown, ///< nsys's default: the first range only (nsys then ends the program; nvscope lets it run)
  repeat,        ///< every range, the first N with repeat:N
  none,          ///< stops ignored: from the first start to the end of the run
};

/// Which files and texts are written at the end of each process.
struct run_outputs {
  bool summary = true; ///< the text summary: STEM.txt, and on stderr what --summary says
  bool csv = false;    ///< the six nsys-named CSV reports
  bool json = true;    ///< the JSON summary
  bool trace = true;   ///< the Chrome trace (chrome://tracing, Perfetto UI)
  bool folded = false; ///< folded stacks (flamegraph.pl, speedscope)
  bool flame = false;      ///< STEM.flame.svg: interactive flame graph of GPU time by range stack
  bool steps = false;      ///< STEM.steps.svg: time and GPU busy per step, GPU utilisation over time
  bool histograms = false; ///< STEM.kernels.svg: a duration histogram per top kernel
};

/// What stderr shows at the end of each process (--summary); STEM.txt holds the full text
/// whenever `summary` is among the outputs.
enum class summary_view : std::uint8_t {
  screen, ///< one screen (export/screen.hpp): verdict, findings, steps, top kernels and ranges, losses, files
  full,   ///< every table and the whole diagnosis, as STEM.txt holds them
  none,   ///< nothing but errors and the line of the files written
};

/// When the screen is coloured (--color), with nvscope::color_when's values (checked where both are seen).
enum class color_choice : std::uint8_t { automatic, always, never };

/// Activity kinds, with the bit values of nvscope::activity (checked where both are seen).
namespace kind_bits {
inline constexpr std::uint32_t kernels = 1u << 0, copies = 1u << 1, memsets = 1u << 2, syncs = 1u << 3,
                               nvtx = 1u << 4, runtime_api = 1u << 5, driver_api = 1u << 6, overhead = 1u << 7;
inline constexpr std::uint32_t standard = kernels | copies | memsets | syncs | nvtx;
} // namespace kind_bits

/// The longest --delay or --duration, in seconds (about 31 years): larger values are refused.
inline constexpr double max_window_seconds = 1e9;

struct run_options {
  std::string output_dir = ".";
  std::string name = "nvscope_%p"; ///< file name stem: %p pid, %h host, %r rank, %q{VAR}, %%
  run_outputs outputs;
  bool force_overwrite = false;    ///< -f: write over the files of an existing stem
  bool stats = false;              ///< --stats=true: nsys stats' default reports, printed at the end
  std::string reports;             ///< --reports: nsys's report names (export/reports.hpp's parse_reports), written as STEM.NAME.csv
  std::string recipes;             ///< --recipes: nsys's recipe names and options (export/recipes.hpp's parse_recipes), as STEM.NAME.csv
  summary_view summary_shows = summary_view::screen;
  color_choice color = color_choice::automatic;
  capture_range range = capture_range::whole;
  range_end capture_end = range_end::stop_shutdown;
  std::uint64_t capture_end_count = 0; ///< repeat:N's N; 0: every range
  std::string nvtx_capture;        ///< NAME (default domain), NAME@DOMAIN or NAME@* (any domain), as nsys
  std::string steps;               ///< step range names (glob with * and ?); empty: step, step_N, ...
  bool attribute_process = false; ///< --attribute=process: nvscope::attribution_rule::process
  std::uint64_t skip = 0, wait = 0, warmup = 0, active = 0, repeat = 1;
  double delay_s = 0.0;
  double duration_s = 0.0;         ///< 0: to the end
  std::uint32_t kinds = kind_bits::standard;
  std::size_t buffer_size = std::size_t{8} << 20;
  std::size_t buffer_count = 8;
  /// A long run in bounded memory (docs/run.md, "Long runs"): on when --memory-limit,
  /// --keep-steps or --keep-slowest is given. Records outside the window and the flight
  /// recorder are folded into running totals as buffers arrive; every step is summarised as it
  /// ends (STEM.steps.jsonl).
  bool bounded = false;
  std::size_t keep_steps = 3, keep_slowest = 3;
  /// Without `bounded` too: raw records past it are folded (collector_options::memory_limit);
  /// the largest size_t (collector_options' no_memory_limit) with --memory-limit=none.
  std::size_t memory_limit = std::size_t{1} << 30;
};

/// One option as a user gave it: its long name and the raw value.
struct given_option {
  std::string name;  ///< e.g. "output-dir"
  std::string value;
};

/// The outcome of reading options: the options, what was given (for the child's
/// environment), where the program starts in argv, or a one-line error.
struct run_parse {
  run_options options;
  std::vector<given_option> given;
  int program = -1;  ///< index into argv of the program; -1 when none
  bool help = false;
  std::string error; ///< "nvscope: run: ..." when the options are bad
};

/// The environment variable of an option: "output-dir" -> "NVSCOPE_RUN_OUTPUT_DIR".
std::string env_name(std::string_view option);

/// Reads NVSCOPE_RUN_* from the environment, then argv[first..] up to "--" or the first
/// argument that is not an option, and checks the combination.
run_parse parse_run(int argc, char** argv, int first);

/// Reads only the environment (what the injection library does).
run_parse parse_run_env();

/// Why the run must not start because files of its stem exist (-f/--force-overwrite=false, as
/// nsys refuses an existing report): one line, or empty. Only a stem known before the program
/// starts is checked: one with %p is new in every process.
std::string refuse_overwrite(const run_options& o);

/// The variables to hand to the program: NVSCOPE_RUN_<NAME>=value for each given option.
std::vector<std::pair<std::string, std::string>> child_environment(const std::vector<given_option>& given);

/// One option as --help, the man page, the completion and docs/run.md describe it: a row of
/// the table the parser reads (run_options.cpp), so that none of them can disagree with it.
struct option_doc {
  std::string name;     ///< "output-dir"
  std::string short_name; ///< "o" for -o; empty when the option has none
  std::string section;  ///< "Output", "Window", "Collection"
  std::string value;    ///< "DIR", "short|full|none"
  std::string fallback; ///< the default as shown; empty when none
  std::string help;     ///< one sentence
  std::string words;    ///< completion words, space-separated; "@dir": folders
};

/// Every option of `nvscope run`, in the table's order.
std::vector<option_doc> run_option_docs();

/// The help text of `nvscope run`, made from run_option_docs (option_docs.cpp).
const char* run_usage();

} // namespace tool
} // namespace v1
} // namespace nvscope

// nvscope run's options: command line, NVSCOPE_RUN_* variables, the combination rules and
// the one-line errors.
#include "option_docs.hpp"
#include "run_options.hpp"
#include "file_text.hpp"

#include <doctest/doctest.h>
#include <nvscope/export/output_path.hpp>
#include <nvscope/capture/schedule.hpp>

#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

using namespace nvscope::tool;

namespace {

// argv for parse_run: "nvscope run ARGS..."
struct args {
  std::vector<std::string> text;
  std::vector<char*> ptrs;
  explicit args(std::vector<std::string> a) : text(std::move(a)) {
    text.insert(text.begin(), {"nvscope", "run"});
    for (auto& s : text) ptrs.push_back(s.data());
  }
  run_parse parse() { return parse_run(static_cast<int>(ptrs.size()), ptrs.data(), 2); }
};

// Sets a variable for one scope.
struct scoped_env {
  std::string name;
  scoped_env(const char* n, const char* v) : name(n) { ::setenv(n, v, 1); }
  ~scoped_env() { ::unsetenv(name.c_str()); }
};

std::string value_of(const run_parse& r, const std::string& name) {
  for (const auto& g : r.given)
    if (g.name == name) return g.value;
  return "<none>";
}

} // namespace

TEST_CASE("defaults: the whole run, summary, JSON and Chrome trace, 8 buffers of 8 MiB") {
  auto r = args({"--", "prog", "a"}).parse();
  REQUIRE(r.error.empty());
  CHECK(r.program == 3);
  CHECK(r.options.range == capture_range::whole);
  CHECK(r.options.outputs.summary);
  CHECK(r.options.outputs.json);
  CHECK(r.options.outputs.trace);
  CHECK_FALSE(r.options.outputs.csv);
  CHECK(r.options.buffer_size == (std::size_t{8} << 20));
  CHECK(r.options.buffer_count == 8);
  CHECK(r.given.empty());
}

TEST_CASE("--help lists the rank variables in the order %r tries them (issue 46)") {
  const std::string help = run_usage();
  CHECK(help.find(nvscope::rank_variable_list()) != std::string::npos);
  CHECK(help.find("@RANKS@") == std::string::npos);
  CHECK(nvscope::rank_variable_list().rfind(nvscope::rank_variables[0], 0) == 0);
}

TEST_CASE("options: --name value never takes -- or another option as its value (issue 46)") {
  for (const std::vector<std::string>& given : {std::vector<std::string>{"--output-dir", "--frobnicate", "--", "prog"},
                                                std::vector<std::string>{"--output-dir", "--", "prog"},
                                                std::vector<std::string>{"--name", "--outputs=csv", "prog"}}) {
    const auto r = args(given).parse();
    CAPTURE(given[1]);
    CHECK(r.error.find("needs a value") != std::string::npos);
    CHECK(r.error.find('\n') == std::string::npos);
  }
  const auto r = args({"--output-dir=--odd", "--", "prog"}).parse(); // such a value is still written with '='
  REQUIRE(r.error.empty());
  CHECK(r.options.output_dir == "--odd");
}

TEST_CASE("options: --name=value and --name value; the program starts at the first non-option") {
  auto r = args({"--output-dir", "out", "--outputs=csv,folded", "--buffer-size=4M", "prog", "--not-ours"}).parse();
  REQUIRE(r.error.empty());
  CHECK(r.options.output_dir == "out");
  CHECK(r.options.outputs.csv);
  CHECK(r.options.outputs.folded);
  CHECK_FALSE(r.options.outputs.json);
  CHECK(r.options.buffer_size == (std::size_t{4} << 20));
  CHECK(r.program == 6);
}

TEST_CASE("environment: NVSCOPE_RUN_* read, the command line wins, both handed to the child") {
  scoped_env a("NVSCOPE_RUN_OUTPUT_DIR", "from_env");
  scoped_env b("NVSCOPE_RUN_BUFFER_COUNT", "3");
  auto r = args({"--output-dir=from_args", "--", "prog"}).parse();
  REQUIRE(r.error.empty());
  CHECK(r.options.output_dir == "from_args");
  CHECK(r.options.buffer_count == 3);
  const auto env = child_environment(r.given);
  bool dir = false, count = false;
  for (const auto& kv : env) {
    dir = dir || (kv.first == "NVSCOPE_RUN_OUTPUT_DIR" && kv.second == "from_args");
    count = count || (kv.first == "NVSCOPE_RUN_BUFFER_COUNT" && kv.second == "3");
  }
  CHECK(dir);
  CHECK(count);
  const auto only_env = parse_run_env();
  CHECK(only_env.error.empty());
  CHECK(only_env.options.output_dir == "from_env");
}

TEST_CASE("bad options: one line naming the option and the value") {
  auto r = args({"--skip=x", "--", "prog"}).parse();
  CHECK(r.error == "nvscope: run: bad --skip='x': want a whole number");
  r = args({"--bogus", "--", "prog"}).parse();
  CHECK(r.error == "nvscope: run: unknown option '--bogus' (see nvscope run --help)");
  r = args({"-x", "prog"}).parse();
  CHECK(r.error.find("unknown option '-x'") != std::string::npos);
  r = args({"--kinds=kernels,gpu", "prog"}).parse();
  CHECK(r.error.find("unknown kind 'gpu'") != std::string::npos);
  r = args({"--buffer-count=0", "prog"}).parse();
  CHECK(r.error.find("--buffer-count='0'") != std::string::npos);
  r = args({"--delay=-1", "prog"}).parse();
  CHECK(r.error.find("want seconds") != std::string::npos);
  r = args({"--name=a/b", "prog"}).parse();
  CHECK(r.error.find("without '/'") != std::string::npos);
  r = args({"--output-dir"}).parse();
  CHECK(r.error == "nvscope: run: option --output-dir needs a value");
  r = args({"--outputs=json"}).parse();
  CHECK(r.error.find("no program given") != std::string::npos);
  r = args({"--skip=1\n2", "prog"}).parse();
  CHECK(r.error.find('\n') == std::string::npos);
  CHECK(r.error.find("\\x0a") != std::string::npos);
}

TEST_CASE("bad environment: the variable is named") {
  scoped_env a("NVSCOPE_RUN_CAPTURE_RANGE", "sometimes");
  auto r = args({"prog"}).parse();
  CHECK(r.error == "nvscope: run: bad NVSCOPE_RUN_CAPTURE_RANGE='sometimes': want none, cudaProfilerApi, nvtx or steps");
}

TEST_CASE("windows: implied capture ranges, and what each needs") {
  auto r = args({"--nvtx-capture=train@mylib", "prog"}).parse();
  REQUIRE(r.error.empty());
  CHECK(r.options.range == capture_range::nvtx);
  CHECK(value_of(r, "capture-range") == "nvtx");
  r = args({"--skip=2", "--active=3", "prog"}).parse();
  REQUIRE(r.error.empty());
  CHECK(r.options.range == capture_range::steps);
  CHECK(r.options.skip == 2);
  CHECK(r.options.active == 3);
  CHECK(value_of(r, "capture-range") == "steps");
  r = args({"--capture=skip=5,warmup=1,active=10,repeat=2", "prog"}).parse();
  REQUIRE(r.error.empty());
  CHECK(r.options.skip == 5);
  CHECK(r.options.warmup == 1);
  CHECK(r.options.active == 10);
  CHECK(r.options.repeat == 2);
  r = args({"--capture-range=CUDAPROFILERAPI", "prog"}).parse();
  CHECK(r.options.range == capture_range::cuda_profiler_api);
  r = args({"--capture-range=nvtx", "prog"}).parse();
  CHECK(r.error == "nvscope: run: --capture-range=nvtx needs --nvtx-capture=NAME");
  r = args({"--capture-range=steps", "prog"}).parse();
  CHECK(r.error.find("needs --active=N") != std::string::npos);
  r = args({"--capture-range=cudaProfilerApi", "--skip=1", "prog"}).parse();
  CHECK(r.error.find("need --capture-range=steps") != std::string::npos);
  r = args({"--capture=nonsense", "prog"}).parse();
  CHECK(r.error.find("bad --capture='nonsense'") != std::string::npos);
}

TEST_CASE("help") {
  auto r = args({"--help"}).parse();
  CHECK(r.help);
  CHECK(std::string(run_usage()).find("--capture-range") != std::string::npos);
  CHECK(env_name("buffer-size") == "NVSCOPE_RUN_BUFFER_SIZE");
}

TEST_CASE("output patterns: their syntax checked before the program starts, values left to each process (issue 45)") {
  struct bad {
    const char* arg;
    const char* says;
  } cases[] = {
      {"--name=prof_%z", "nvscope: run: bad --name='prof_%z': at position 5: unknown specifier '%z' (known: %p %h %r %q{VAR} %%)"},
      {"--name=prof_%", "nvscope: run: bad --name='prof_%': at position 5: '%' at the end (write '%%' for a percent sign)"},
      {"--name=p_%q{RUN", "nvscope: run: bad --name='p_%q{RUN': at position 2: '%q{' has no closing '}'"},
      {"--output-dir=out_%z", "nvscope: run: bad --output-dir='out_%z': at position 4: unknown specifier '%z' (known: %p %h %r %q{VAR} %%)"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.arg);
    CHECK(args({c.arg, "--", "prog"}).parse().error == c.says);
  }
  ::unsetenv("NVSCOPE_TEST_NOT_SET_HERE");
  auto r = args({"--name=p_%p_%r_%h_%q{NVSCOPE_TEST_NOT_SET_HERE}", "--output-dir=runs/%q{NVSCOPE_TEST_NOT_SET_HERE}", "prog"}).parse();
  CHECK(r.error.empty()); // the values are each process' own, read where it writes
  scoped_env e("NVSCOPE_RUN_NAME", "x%z");
  CHECK(args({"prog"}).parse().error ==
        "nvscope: run: bad NVSCOPE_RUN_NAME='x%z': at position 1: unknown specifier '%z' (known: %p %h %r %q{VAR} %%)");
}

TEST_CASE("schedule counts: one limit, the schedule's, in --skip/--wait/--warmup/--active/--repeat and --capture (issue 45)") {
  const std::string limit = std::to_string(nvscope::max_schedule_count);
  const std::string past = std::to_string(nvscope::max_schedule_count + 1);
  for (const char* name : {"skip", "wait", "warmup", "active", "repeat"}) {
    CAPTURE(name);
    auto r = args({"--" + std::string(name) + "=" + past, "--active=1", "prog"}).parse();
    if (std::string(name) == "active") r = args({"--active=" + past, "prog"}).parse();
    CHECK(r.error == "nvscope: run: bad --" + std::string(name) + "='" + past + "': want a whole number 0.." + limit);
    const std::string others = std::string(name) == "active" ? "" : "active=1,";
    r = args({"--capture=" + others + std::string(name) + "=" + past, "prog"}).parse();
    CHECK(r.error.rfind("nvscope: run: bad --capture='", 0) == 0);
    CHECK(r.error.find("(want a whole number 0.." + limit + ")") != std::string::npos);
  }
  // The largest count is accepted both ways, and the schedule uses it (window_test: it selects steps).
  auto r = args({"--active=" + limit, "--skip=" + limit, "prog"}).parse();
  REQUIRE(r.error.empty());
  CHECK(r.options.active == nvscope::max_schedule_count);
  r = args({"--capture=active=" + limit, "prog"}).parse();
  REQUIRE(r.error.empty());
  CHECK(r.options.active == nvscope::max_schedule_count);
}

TEST_CASE("--delay and --duration: past the limit refused in one line (issue 45)") {
  for (const char* name : {"delay", "duration"}) {
    for (const char* v : {"2e10", "1e12", "1e300", "1000000000.5"}) {
      const std::string arg = "--" + std::string(name) + "=" + v;
      CAPTURE(arg);
      CHECK(args({arg, "prog"}).parse().error ==
            "nvscope: run: bad --" + std::string(name) + "='" + v + "': want seconds from 0 to 1000000000 (about 31 years)");
    }
    auto r = args({"--" + std::string(name) + "=1e9", "prog"}).parse();
    CHECK(r.error.empty());
  }
}

TEST_CASE("--attribute: thread (nsys's rule) by default, process on request, anything else refused in one line") {
  auto r = args({"--", "prog"}).parse();
  REQUIRE(r.error.empty());
  CHECK_FALSE(r.options.attribute_process);
  r = args({"--attribute=process", "--", "prog"}).parse();
  REQUIRE(r.error.empty());
  CHECK(r.options.attribute_process);
  CHECK(value_of(r, "attribute") == "process");
  r = args({"--attribute", "thread", "prog"}).parse();
  REQUIRE(r.error.empty());
  CHECK_FALSE(r.options.attribute_process);
  r = args({"--attribute=threads", "prog"}).parse();
  CHECK(r.error == "nvscope: run: bad --attribute='threads': want thread or process");
  scoped_env e("NVSCOPE_RUN_ATTRIBUTE", "process");
  r = args({"prog"}).parse();
  REQUIRE(r.error.empty());
  CHECK(r.options.attribute_process);
  CHECK(std::string(run_usage()).find("--attribute=thread|process") != std::string::npos);
}

TEST_CASE("--reports: nsys's report names, checked before the program starts; API reports record API calls (issue 48)") {
  auto r = args({"--reports=summary,cuda_gpu_trace:base", "prog"}).parse();
  REQUIRE(r.error.empty());
  CHECK(r.options.reports == "summary,cuda_gpu_trace:base");
  CHECK((r.options.kinds & kind_bits::runtime_api) != 0); // summary holds cuda_api_sum
  CHECK(value_of(r, "reports") == "summary,cuda_gpu_trace:base");
  r = args({"--reports=nvtx_pushpop_trace,cuda_gpu_sum", "prog"}).parse();
  REQUIRE(r.error.empty());
  CHECK(r.options.kinds == kind_bits::standard); // no API report: the kinds stay as they were
  r = args({"--reports=cuda_api_summ", "prog"}).parse();
  CHECK(r.error.find("--reports") != std::string::npos);
  CHECK(r.error.find("no report named 'cuda_api_summ'") != std::string::npos);
  r = args({"--reports=cuda_kern_exec_sum", "--kinds=kernels", "prog"}).parse();
  REQUIRE(r.error.empty());
  CHECK((r.options.kinds & kind_bits::runtime_api) != 0); // whatever order --kinds came in
}

TEST_CASE("--recipes: nsys's recipe names and options, checked before the program starts; API recipes record API calls (issue 48)") {
  auto r = args({"--recipes=gpu_gaps:gap=100,gpu_time_util", "prog"}).parse();
  REQUIRE(r.error.empty());
  CHECK(r.options.recipes == "gpu_gaps:gap=100,gpu_time_util");
  CHECK(r.options.kinds == kind_bits::standard); // no recipe reads API calls
  CHECK(value_of(r, "recipes") == "gpu_gaps:gap=100,gpu_time_util");
  r = args({"--recipes=cuda_memcpy_sync", "--kinds=kernels", "prog"}).parse();
  REQUIRE(r.error.empty());
  CHECK((r.options.kinds & kind_bits::runtime_api) != 0);
  for (const char* bad : {"--recipes=gpu_gapz", "--recipes=gpu_gaps:min=3", "--recipes=cuda_api_sync:gap=1"}) {
    r = args({bad, "prog"}).parse();
    CHECK_MESSAGE(r.error.find("--recipes") != std::string::npos, bad);
    CHECK_MESSAGE(r.error.find('\n') == std::string::npos, bad);
  }
  CHECK(args({"--recipes=gpu_gapz", "prog"}).parse().error.find("no recipe named 'gpu_gapz'") != std::string::npos);
}

TEST_CASE("a long run: --memory-limit, --keep-steps and --keep-slowest turn the bounded collection on, and reach the child") {
  auto r = args({"--", "prog"}).parse();
  REQUIRE(r.error.empty());
  CHECK_FALSE(r.options.bounded);
  CHECK(r.options.memory_limit == (std::size_t{1} << 30)); // a default run is bounded too: 1 GiB of raw records
  r = args({"--memory-limit=none", "--", "prog"}).parse();
  REQUIRE(r.error.empty());
  CHECK_FALSE(r.options.bounded);
  CHECK(r.options.memory_limit == std::numeric_limits<std::size_t>::max()); // everything kept
  r = args({"--memory-limit=256M", "--keep-steps=5", "--keep-slowest", "0", "--", "prog"}).parse();
  REQUIRE(r.error.empty());
  CHECK(r.options.bounded);
  CHECK(r.options.memory_limit == (std::size_t{256} << 20));
  CHECK(r.options.keep_steps == 5);
  CHECK(r.options.keep_slowest == 0);
  bool limit = false;
  for (const auto& kv : child_environment(r.given)) limit = limit || (kv.first == "NVSCOPE_RUN_MEMORY_LIMIT" && kv.second == "256M");
  CHECK(limit);
  r = args({"--keep-steps=2", "--", "prog"}).parse();
  REQUIRE(r.error.empty());
  CHECK(r.options.bounded);
  CHECK(r.options.memory_limit == (std::size_t{1} << 30)); // the default limit
  r = args({"--keep-slowest=x", "--", "prog"}).parse();
  CHECK(r.error.find("--keep-slowest='x'") != std::string::npos);
  r = args({"--memory-limit=0", "--", "prog"}).parse();
  CHECK(r.error.find("--memory-limit='0'") != std::string::npos);
  CHECK(std::string(run_usage()).find("--memory-limit=BYTES") != std::string::npos);
}

// Issue 46: --help, the man page, the bash completion and docs/run.md's option tables are
// made from the one table the parser reads; each lists every option, and docs/run.md holds
// exactly what the table makes (regenerate with `nvscope docs markdown SECTION`).
TEST_CASE("options: help, man page, completion and docs/run.md come from the parser's table and agree") {
  const auto docs = run_option_docs();
  REQUIRE(docs.size() >= 19); // the options of this writing; more may come
  const std::string help = run_usage(), man = man_page(), completion = bash_completion();
  std::string letters;
  for (const auto& o : docs) {
    CAPTURE(o.name);
    const std::string letter = o.short_name.empty() ? "" : "-" + o.short_name + ", ";
    CHECK(help.find("  " + letter + "--" + o.name + "=" + o.value) != std::string::npos);
    std::string roff_name;
    for (char c : o.name) roff_name += c == '-' ? std::string("\\-") : std::string(1, c);
    const std::string roff_letter = o.short_name.empty() ? "" : "\\fB\\-" + o.short_name + "\\fR, ";
    CHECK(man.find(".TP\n" + roff_letter + "\\fB\\-\\-" + roff_name + "\\fR=") != std::string::npos);
    if (!o.short_name.empty()) {
      letters += o.short_name;
      CHECK(completion.find(" -" + o.short_name + " ") != std::string::npos);
      const auto s = args({"-" + o.short_name, "\x01", "prog"}).parse(); // the parser knows the letter
      CHECK(s.error.find("unknown option") == std::string::npos);
    }
    CHECK(completion.find(" --" + o.name + "=") != std::string::npos);
    // the parser knows every documented option: a bad value is "bad", never "unknown"
    const auto r = args({"--" + o.name + "=\x01", "prog"}).parse();
    CHECK(r.error.find("unknown option") == std::string::npos);
    CHECK((o.section == "Output" || o.section == "Window" || o.section == "Analysis" || o.section == "Collection" || o.section == "Long runs"));
  }
  CHECK(letters == "ofydt"); // nsys's letters, in the table's order: -o -f -y -d -t
  const std::string run_md = nvscope_test::file_text(NVSCOPE_TEST_SOURCE_DIR "/docs/run.md");
  for (const std::string section : {"Output", "Window", "Analysis", "Collection", "Long runs"}) {
    CAPTURE(section);
    CHECK(run_md.find(markdown_options(section)) != std::string::npos);
  }
  CHECK(man.rfind(".TH NVSCOPE 1 ", 0) == 0);
  CHECK(man.find(".SH EXIT STATUS") != std::string::npos);
  CHECK(help.find("127") != std::string::npos);
}

TEST_CASE("nsys's letters: -o X and -oX, -f, -t, -d, -y are their long options; a separate value is never an option (issue 48)") {
  auto r = args({"-o", "runs/prof_%h", "-t", "nvtx", "-d", "2.5", "-y5", "prog"}).parse();
  REQUIRE(r.error.empty());
  CHECK(r.options.output_dir == "runs");
  CHECK(r.options.name == "prof_%h");
  CHECK(r.options.kinds == kind_bits::nvtx);
  CHECK(r.options.duration_s == 2.5);
  CHECK(r.options.delay_s == 5.0);
  CHECK(r.program == 9);
  CHECK(value_of(r, "output") == "runs/prof_%h"); // handed to the child under its long name
  r = args({"-oprof", "prog"}).parse();
  REQUIRE(r.error.empty());
  CHECK(r.options.output_dir == ".");
  CHECK(r.options.name == "prof");
  for (const std::vector<std::string>& given : {std::vector<std::string>{"-o", "-f", "prog"},
                                                std::vector<std::string>{"-t", "--", "prog"},
                                                std::vector<std::string>{"--trace", "-y", "1", "prog"},
                                                std::vector<std::string>{"-d", "-h"}}) {
    CAPTURE(given[0]);
    const auto bad = args(given).parse();
    CHECK(bad.error.find("needs a value") != std::string::npos);
    CHECK(bad.error.find('\n') == std::string::npos);
  }
  CHECK(args({"-q", "prog"}).parse().error == "nvscope: run: unknown option '-q' (see nvscope run --help)");
  CHECK(args({"-d", "x", "prog"}).parse().error == "nvscope: run: bad -d='x': want seconds (a number >= 0)");
}

TEST_CASE("-o/--output: folder and stem at once, with the patterns; not with --output-dir or --name (issue 48)") {
  auto r = args({"--output=/abs/dir_%q{HOME}/run_%p", "prog"}).parse();
  REQUIRE(r.error.empty());
  CHECK(r.options.output_dir == "/abs/dir_%q{HOME}");
  CHECK(r.options.name == "run_%p");
  r = args({"-o", "/top", "prog"}).parse();
  REQUIRE(r.error.empty());
  CHECK(r.options.output_dir == "/");
  CHECK(r.options.name == "top");
  r = args({"-o", "runs/prof.nsys-rep", "prog"}).parse(); // nsys's extension dropped: the stem is runs/prof
  REQUIRE(r.error.empty());
  CHECK(r.options.output_dir == "runs");
  CHECK(r.options.name == "prof");
  CHECK(args({"-o", "dir/", "prog"}).parse().error.find("file name stem") != std::string::npos);
  CHECK(args({"-o", "x_%z", "prog"}).parse().error.find("unknown specifier '%z'") != std::string::npos);
  CHECK(args({"-o", "x", "--name=y", "prog"}).parse().error.find("without --output-dir and --name") != std::string::npos);
  scoped_env env("NVSCOPE_RUN_OUTPUT_DIR", "elsewhere");
  CHECK(args({"-o", "x", "prog"}).parse().error.find("without --output-dir and --name") != std::string::npos);
}

TEST_CASE("-f/--force-overwrite: an existing stem refused before the program starts unless true; %p stems not checked (issue 48)") {
  char folder[] = "/tmp/nvscope-options-test-XXXXXX";
  REQUIRE(::mkdtemp(folder) != nullptr);
  const std::string dir = folder;
  auto r = args({"-o", dir + "/prof", "prog"}).parse();
  REQUIRE(r.error.empty());
  CHECK_FALSE(r.options.force_overwrite);
  CHECK(refuse_overwrite(r.options).empty()); // nothing there yet
  { std::FILE* f = std::fopen((dir + "/prof.trace.json").c_str(), "w"); REQUIRE(f != nullptr); std::fclose(f); }
  CHECK(refuse_overwrite(r.options) == "nvscope: run: '" + dir + "/prof.trace.json' exists: not overwritten (-f/--force-overwrite=true writes over it)");
  CHECK(refuse_overwrite(args({"-o", dir + "/prof2", "prog"}).parse().options).empty()); // another stem
  CHECK(refuse_overwrite(args({"-o", dir + "/pro", "prog"}).parse().options).empty());   // a prefix is not the stem
  CHECK(refuse_overwrite(args({"-o", dir + "/prof", "-f", "prog"}).parse().options).empty());
  CHECK(refuse_overwrite(args({"-o", dir + "/prof", "-f", "true", "prog"}).parse().options).empty());
  CHECK_FALSE(refuse_overwrite(args({"-o", dir + "/prof", "--force-overwrite=false", "prog"}).parse().options).empty());
  CHECK(refuse_overwrite(args({"-o", dir + "/prof%p", "prog"}).parse().options).empty());
  r = args({"-f", "prog"}).parse(); // alone, a flag: prog is the program
  CHECK(r.program == 3);
  CHECK(r.options.force_overwrite);
  CHECK(args({"--force-overwrite=yes", "prog"}).parse().error == "nvscope: run: bad --force-overwrite='yes': want true or false");
  std::remove((dir + "/prof.trace.json").c_str());
  ::rmdir(folder);
}

TEST_CASE("-t/--trace: cuda and nvtx mapped to the kinds, none, nsys's other sources refused in one line (issue 48)") {
  using namespace kind_bits;
  auto r = args({"--trace=cuda,nvtx", "prog"}).parse();
  REQUIRE(r.error.empty());
  CHECK(r.options.kinds == (kernels | copies | memsets | syncs | runtime_api | driver_api | nvtx));
  CHECK(args({"-t", "cuda", "prog"}).parse().options.kinds == (kernels | copies | memsets | syncs | runtime_api | driver_api));
  CHECK(args({"-t", "none", "prog"}).parse().options.kinds == 0);
  CHECK(args({"-t", "cublas", "prog"}).parse().error.find("nvscope cannot trace 'cublas'") != std::string::npos);
  CHECK(args({"-t", "osrt,cuda", "prog"}).parse().error.find("nvscope cannot trace 'osrt'") != std::string::npos);
  CHECK(args({"-t", "cuda,gpu", "prog"}).parse().error.find("unknown trace 'gpu' (want cuda, nvtx or none)") != std::string::npos);
  CHECK(args({"-t", "cuda", "--kinds=kernels", "prog"}).parse().error.find("give one of them") != std::string::npos);
}

TEST_CASE("--stats=true: the summary reports added to --reports once; false and the default add none (issue 48)") {
  CHECK(args({"prog"}).parse().options.reports.empty());
  CHECK(args({"--stats=false", "prog"}).parse().options.reports.empty());
  auto r = args({"--stats=true", "prog"}).parse();
  REQUIRE(r.error.empty());
  CHECK(r.options.stats);
  CHECK(r.options.reports == "summary");
  CHECK(args({"--stats", "true", "--reports=cuda_gpu_trace", "prog"}).parse().options.reports == "cuda_gpu_trace,summary");
  CHECK(args({"--stats=true", "--reports=summary,cuda_gpu_trace", "prog"}).parse().options.reports == "summary,cuda_gpu_trace");
  CHECK(args({"--stats=1", "prog"}).parse().error == "nvscope: run: bad --stats='1': want true or false");
}

TEST_CASE("--capture-range-end: nsys's values, stop-shutdown by default, only with a cudaProfilerApi or NVTX range (issue 48)") {
  auto r = args({"--capture-range=cudaProfilerApi", "prog"}).parse();
  CHECK(r.options.capture_end == range_end::stop_shutdown);
  r = args({"--capture-range=cudaProfilerApi", "--capture-range-end=repeat:3", "prog"}).parse();
  REQUIRE(r.error.empty());
  CHECK(r.options.capture_end == range_end::repeat);
  CHECK(r.options.capture_end_count == 3);
  r = args({"--nvtx-capture=train", "--capture-range-end", "repeat", "prog"}).parse();
  REQUIRE(r.error.empty());
  CHECK(r.options.capture_end == range_end::repeat);
  CHECK(r.options.capture_end_count == 0);
  CHECK(args({"--nvtx-capture=a", "--capture-range-end=stop", "prog"}).parse().options.capture_end == range_end::stop);
  CHECK(args({"--nvtx-capture=a", "--capture-range-end=none", "prog"}).parse().options.capture_end == range_end::none);
  CHECK(args({"--nvtx-capture=a", "--capture-range-end=later", "prog"}).parse().error.find("want stop, stop-shutdown, repeat, repeat:N or none") != std::string::npos);
  CHECK(args({"--nvtx-capture=a", "--capture-range-end=repeat:x", "prog"}).parse().error.find("repeat:N") != std::string::npos);
  CHECK(args({"--capture-range-end=stop", "prog"}).parse().error.find("needs --capture-range=cudaProfilerApi or nvtx") != std::string::npos);
}

TEST_CASE("--nvtx-capture: RANGE, RANGE@DOMAIN, RANGE@*; --cuda-graph-trace=node only (issue 48)") {
  CHECK(args({"--nvtx-capture=train@*", "prog"}).parse().error.empty());
  CHECK(args({"--nvtx-capture=train@lib", "prog"}).parse().options.range == capture_range::nvtx);
  CHECK(args({"--nvtx-capture=@lib", "prog"}).parse().error.find("want RANGE, RANGE@DOMAIN or RANGE@*") != std::string::npos);
  CHECK(args({"--nvtx-capture=train@", "prog"}).parse().error.find("want RANGE") != std::string::npos);
  CHECK(args({"--cuda-graph-trace=node", "prog"}).parse().error.empty());
  CHECK(args({"--cuda-graph-trace=graph", "prog"}).parse().error.find("not whole graphs") != std::string::npos);
  CHECK(args({"--cuda-graph-trace=nodes", "prog"}).parse().error.find("want node") != std::string::npos);
}

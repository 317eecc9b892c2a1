// `nvscope diff` end to end through diff_run: exit status 0 / 1 / 2, the three formats, one
// error line naming the bad part, summaries written by diagnosis_json read back, the corpus.

#include "diff_command.hpp"
#include "noise.hpp"
#include "scenarios.hpp"

#include <nvscope/analyze/diagnose/diagnose.hpp>
#include <nvscope/export/diagnosis_json.hpp>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace nvscope;

namespace {

struct result {
  int status = -1;
  std::string out, err;
};

result diff(std::vector<std::string> args) {
  std::vector<const char*> argv{"nvscope", "diff"};
  for (const auto& a : args) argv.push_back(a.c_str());
  result r;
  r.status = tool::diff_run(static_cast<int>(argv.size()), argv.data(), r.out, r.err);
  return r;
}

std::string write(const std::string& name, const std::string& text) {
  const auto dir = fs::temp_directory_path() / "nvscope_diff_test";
  fs::create_directories(dir);
  const auto path = (dir / name).string();
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

std::string saved(const run_samples& s) { return "{\"samples\":" + samples_json(s) + "}"; }

bool one_error_line(const result& r) {
  return r.status == 2 && r.out.empty() && r.err.rfind("nvscope: diff: ", 0) == 0 &&
         r.err.find('\n') == r.err.size() - 1;
}

} // namespace

TEST_CASE("same distribution: exit 0; a 20% regression in one kernel: exit 1, named") {
  const auto base = write("base.json", saved(noise::run(1, 6, 200)));
  const auto same = write("same.json", saved(noise::run(2, 6, 200)));
  const auto slow = write("slow.json", saved(noise::run(3, 6, 200, 4, 1.2)));
  const auto pass = diff({base, same});
  CHECK(pass.status == 0);
  CHECK(pass.out.find(": pass") != std::string::npos);
  const auto fail = diff({base, slow, "--threshold", "5%"});
  CHECK(fail.status == 1);
  CHECK(fail.out.find("kernel_4  REGRESSION") != std::string::npos);
  CHECK(fail.out.find("FAIL") != std::string::npos);
  CHECK(diff({base, slow, "--threshold=50"}).status == 0); // 20 % is not above 50 %
}

TEST_CASE("csv and json formats") {
  const auto base = write("base2.json", saved(noise::run(11, 3, 100)));
  const auto next = write("next2.json", saved(noise::run(12, 3, 100, 0, 1.3)));
  const auto csv = diff({base, next, "--format", "csv"});
  CHECK(csv.status == 1);
  CHECK(csv.out.rfind("Group,Name,Base Count,New Count,", 0) == 0);
  CHECK(std::count(csv.out.begin(), csv.out.end(), '\n') == 4);
  const auto js = diff({base, next, "--format=json", "--resamples", "500", "--alpha", "0.01"});
  CHECK(js.status == 1);
  const auto j = nlohmann::json::parse(js.out);
  CHECK(j["gate"] == "fail");
  CHECK(j["resamples"] == 500);
  CHECK(j["rows"][0]["name"] == "kernel_0");
  CHECK(j["rows"][0]["regression"] == true);
}

TEST_CASE("summaries written by diagnosis_json: the same trace passes, a slower gemm fails") {
  auto t = scenario::outlier_step(20, -1);
  const auto d = diagnose(t, attribute(t));
  const auto a = write("a.json", "{\"diagnosis\":" + diagnosis_json(t, d) + "}");
  CHECK(diff({a, a}).status == 0);
  for (auto& k : t.kernels)
    if (t.strings[k.name] == "gemm") k.end += (k.end - k.start) / 5; // 20 % slower
  const auto d2 = diagnose(t, attribute(t));
  const auto b = write("b.json", "{\"diagnosis\":" + diagnosis_json(t, d2) + "}");
  const auto r = diff({a, b});
  CHECK(r.status == 1);
  CHECK(r.out.find("kernel      gemm  REGRESSION") != std::string::npos);
}

TEST_CASE("a step that lost records (trace::lossy_steps): left out of the samples nvscope diff compares, and said") {
  auto t = scenario::outlier_step();
  for (const auto& r : t.ranges)
    if (std::string(t.strings[r.name]) == "step_13") t.lossy_steps.push_back(time_window{r.start, r.end});
  REQUIRE(t.lossy_steps.size() == 1);
  const auto d = diagnose(t, attribute(t));
  const std::string text = "{\"diagnosis\":" + diagnosis_json(t, d) + "}";
  run_samples s;
  std::string error;
  REQUIRE(tool::read_samples(text, s, error));
  CHECK(s.lossy_steps == 1);
  REQUIRE(s.steps.size() == 1);
  CHECK(s.steps[0].count == 19);
  const auto a = write("lossy.json", text);
  const auto r = diff({a, a});
  CHECK(r.status == 0);
  CHECK(r.err.find("1 steps that lost records left out of the step figures") != std::string::npos);
}

TEST_CASE("unreadable, malformed and mismatched input: exit 2 with one line naming the part") {
  const auto good = write("good.json", saved(noise::run(5, 2, 20)));
  auto r = diff({good, "/nonexistent/x.json"});
  CHECK(one_error_line(r));
  CHECK(r.err.find("cannot read '/nonexistent/x.json'") != std::string::npos);
  r = diff({good, write("notjson.json", "{\"samples\": [")});
  CHECK(one_error_line(r));
  CHECK(r.err.find("not JSON") != std::string::npos);
  r = diff({good, write("badns.json", "{\"samples\":{\"format\":\"nvscope-samples\",\"version\":1,"
                                      "\"kernels\":[{\"name\":\"k\",\"ns\":[1,-2]}]}}")});
  CHECK(one_error_line(r));
  CHECK(r.err.find("samples.kernels[0].ns[1] is not a non-negative integer") != std::string::npos);
  r = diff({good, write("v2.json", "{\"samples\":{\"format\":\"nvscope-samples\",\"version\":2}}")});
  CHECK(one_error_line(r));
  CHECK(r.err.find("version 2") != std::string::npos);
  run_samples other;
  other.kernels.push_back(sample_set{"unrelated", 3, {1, 2, 3}});
  r = diff({good, write("other.json", saved(other))});
  CHECK(one_error_line(r));
  CHECK(r.err.find("share no kernel, range or step") != std::string::npos);
  r = diff({good, write("ctl\n\x1b.json", "{}")});
  CHECK(one_error_line(r));
  CHECK(r.err.find("ctl\\x0a\\x1b.json") != std::string::npos); // control characters escaped
}

TEST_CASE("arguments: one line for each misuse, --help exits 0") {
  const auto good = write("good3.json", saved(noise::run(6, 2, 20)));
  CHECK(one_error_line(diff({good})));
  CHECK(one_error_line(diff({good, good, good})));
  CHECK(one_error_line(diff({good, good, "--threshold", "five"})));
  CHECK(one_error_line(diff({good, good, "--alpha", "0.9"})));
  CHECK(one_error_line(diff({good, good, "--format", "xml"})));
  CHECK(diff({good, good, "--gate-host"}).status == 0); // takes no value: the files stay two
  CHECK(one_error_line(diff({good, good, "--resamples", "10"})));
  CHECK(one_error_line(diff({good, good, "--bogus", "1"})));
  CHECK(one_error_line(diff({good, good, "--format"})));
  const auto help = diff({"--help"});
  CHECK(help.status == 0);
  CHECK(help.out.find("usage: nvscope diff") != std::string::npos);
}

TEST_CASE("corpus: every bad input is refused with a reason, every good one read") {
  const fs::path corpus = NVSCOPE_DIFF_CORPUS;
  int bad = 0, good = 0;
  for (const auto& e : fs::directory_iterator(corpus / "bad")) {
    std::ifstream in(e.path(), std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    run_samples s;
    std::string error;
    CHECK_MESSAGE(!tool::read_samples(text, s, error), e.path().string());
    CHECK(!error.empty());
    ++bad;
  }
  for (const auto& e : fs::directory_iterator(corpus / "good")) {
    std::ifstream in(e.path(), std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    run_samples s;
    std::string error;
    const bool ok = tool::read_samples(text, s, error);
    const std::string what = e.path().string() + ": " + error;
    CHECK_MESSAGE(ok, what);
    ++good;
  }
  CHECK(bad >= 8);
  CHECK(good >= 2);
}

namespace {
std::string samples_with_version(const std::string& version) {
  return "{\"samples\":{\"format\":\"nvscope-samples\"" + version + ",\"kernels\":[{\"name\":\"k\",\"ns\":[1,2,3]}]}}";
}

// Runs `body` in a child process under an address-space limit of `limit_mb` beyond what the
// process holds now (ulimit -v, as CI runners set): its return, 125 when it threw, or 128 + the
// signal that ended it.
int under_memory_limit(std::size_t limit_mb, const std::function<int()>& body) {
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    long pages = 0;
    if (std::FILE* f = std::fopen("/proc/self/statm", "r")) {
      if (std::fscanf(f, "%ld", &pages) != 1) pages = 0;
      std::fclose(f);
    }
    struct ::rlimit lim {};
    lim.rlim_cur = lim.rlim_max = static_cast<rlim_t>(pages) * static_cast<rlim_t>(::sysconf(_SC_PAGESIZE)) + (limit_mb << 20);
    if (::setrlimit(RLIMIT_AS, &lim) != 0) ::_exit(120);
    int status = 125; // an exception left diff_run
    try {
      status = body();
    } catch (...) {
    }
    ::_exit(status);
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool sanitized = true; // the sanitizers reserve terabytes of address space: RLIMIT_AS cannot hold
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool sanitized = true;
#else
constexpr bool sanitized = false;
#endif
#else
constexpr bool sanitized = false;
#endif
} // namespace

TEST_CASE("samples.version: an integral number is 1; anything else is said precisely (issue 45)") {
  const auto good = write("good_v.json", saved(noise::run(5, 2, 20)));
  run_samples s;
  std::string error;
  CHECK(tool::read_samples(samples_with_version(",\"version\":1.0"), s, error));
  CHECK(error.empty());
  struct bad {
    const char* version;
    const char* says;
  } cases[] = {
      {"", "samples.version is missing"},
      {",\"version\":\"1\"", "samples.version is not a number"},
      {",\"version\":1.5", "samples.version 1.5 is not a whole number"},
      {",\"version\":-1", "samples.version -1 is not 1 (written by another nvscope)"},
      {",\"version\":2.0", "samples.version 2 is not 1 (written by another nvscope)"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.version);
    run_samples t;
    std::string why;
    CHECK_FALSE(tool::read_samples(samples_with_version(c.version), t, why));
    CHECK(why == c.says);
  }
}

TEST_CASE("a folder given as a summary: it is a folder, not 'not JSON' (issue 45)") {
  const auto good = write("good_f.json", saved(noise::run(5, 2, 20)));
  const auto folder = fs::temp_directory_path() / "nvscope_diff_test" / "a_folder";
  fs::create_directories(folder);
  const auto r = diff({good, folder.string()});
  CHECK(one_error_line(r));
  CHECK(r.err == "nvscope: diff: cannot read '" + folder.string() + "': it is a folder\n");
}

TEST_CASE("names in the text table escaped (newline, escape sequence); the CSV quotes them as they are (issue 45)") {
  run_samples a, b;
  const std::string odd = "k\nfake row\x1b[31m\\";
  a.kernels.push_back(sample_set{odd, 6, {10, 11, 12, 10, 11, 12}});
  b.kernels.push_back(sample_set{odd, 6, {10, 11, 12, 10, 11, 12}});
  a.kernels.push_back(sample_set{"gemm_\xce\xbb", 6, {10, 11, 12, 10, 11, 12}}); // UTF-8 kept
  b.kernels.push_back(sample_set{"gemm_\xce\xbb", 6, {10, 11, 12, 10, 11, 12}});
  const auto base = write("odd_a.json", saved(a)), next = write("odd_b.json", saved(b));
  const auto text = diff({base, next});
  CHECK(text.status == 0);
  CHECK(text.out.find("k\\x0afake row\\x1b[31m\\x5c") != std::string::npos);
  CHECK(text.out.find('\x1b') == std::string::npos);
  CHECK(text.out.find("gemm_\xce\xbb") != std::string::npos);
  CHECK(text.out.find("\nfake row") == std::string::npos); // no row split by the name
  const auto csv = diff({base, next, "--format", "csv"});
  CHECK(csv.out.find("\"k\nfake row\x1b[31m\\\"") != std::string::npos);
}

TEST_CASE("under an address-space limit: a deep nesting, a huge file, memory running out: exit 2, one line (issue 45)" *
          doctest::skip(sanitized)) {
  const auto good = write("good_m.json", saved(noise::run(5, 2, 20)));
  const auto nested = write("nested.json", std::string(10u << 20, '[') + std::string(10u << 20, ']')); // 20 MB
  std::string flat = "{\"samples\":{\"format\":\"nvscope-samples\",\"version\":1,\"kernels\":[{\"name\":\"k\",\"ns\":[";
  while (flat.size() < (99u << 20)) flat += "1234567,";
  flat += "1]}]}}";
  const auto huge = write("huge.json", flat); // 99 MB: past the size nvscope diff reads
  flat.resize(60u << 20);
  flat += "1]}]}}";
  const auto big = write("big.json", flat); // 60 MB of samples: read, then memory runs out under 150 MB
  struct expect {
    std::string file;
    std::size_t limit_mb;
    std::string says;
  } cases[] = {
      {nested, 400, "nvscope: diff: '" + nested + "': nested deeper than 64 levels (a summary has a few)\n"},
      {huge, 400, "nvscope: diff: cannot read '" + huge + "': it is larger than 64 MiB, the most a summary may take\n"},
      {big, 150, "nvscope: diff: out of memory (reading or comparing the summaries)\n"},
  };
  const std::string said = write("said.txt", "");
  for (const auto& c : cases) {
    CAPTURE(c.file);
    const int status = under_memory_limit(c.limit_mb, [&] {
      const auto r = diff({good, c.file});
      std::ofstream(said, std::ios::binary) << r.err;
      return r.status;
    });
    CHECK(status == 2); // before: 134, SIGABRT from std::bad_alloc
    std::ifstream in(said, std::ios::binary);
    CHECK(std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()) == c.says);
  }
  fs::remove(nested);
  fs::remove(huge);
  fs::remove(big);
}

namespace {

// A summary with samples and a provenance naming `device` (and its UUID) and `driver`.
std::string with_origin(const run_samples& s, const std::string& device, const std::string& uuid,
                        const std::string& driver, const std::string& version = "0.1.0") {
  nlohmann::json p = {{"nvscope_version", version}, {"driver_version", driver},
                      {"devices", nlohmann::json::array({{{"id", 0}, {"name", device}, {"uuid", uuid}}})}};
  return "{\"provenance\":" + p.dump() + ",\"samples\":" + samples_json(s) + "}";
}

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

} // namespace

TEST_CASE("provenance: same device, driver and version: no line; different GPU models refused, exit 2, one line (issue 46)") {
  const auto s1 = noise::run(41, 3, 100), s2 = noise::run(42, 3, 100);
  const auto a = write("h200_a.json", with_origin(s1, "NVIDIA H200", "GPU-aaaa", "570.124.06"));
  const auto b = write("h200_b.json", with_origin(s2, "NVIDIA H200", "GPU-aaaa", "570.124.06"));
  const auto h100 = write("h100.json", with_origin(s2, "NVIDIA H100 80GB HBM3", "GPU-bbbb", "575.51.03", "0.2.0"));
  const auto same = diff({a, b});
  CHECK(same.status == 0);
  CHECK(same.err.empty());
  const auto refused = diff({a, h100});
  CHECK(one_error_line(refused));
  CHECK(refused.err.find("NVIDIA H200") != std::string::npos);
  CHECK(refused.err.find("NVIDIA H100 80GB HBM3") != std::string::npos);
  CHECK(refused.err.find("--allow-different-devices") != std::string::npos);
  const auto allowed = diff({a, h100, "--allow-different-devices"});
  CHECK(allowed.status == 0);
  // One line each: the device, the driver, nvscope's version.
  CHECK(count_of(allowed.err, "\n") == 3);
  CHECK(count_of(allowed.err, "nvscope: diff: device differs: ") == 1);
  CHECK(count_of(allowed.err, "nvscope: diff: driver differs: ") == 1);
  CHECK(count_of(allowed.err, "nvscope: diff: nvscope version differs: ") == 1);
  CHECK(allowed.err.find("570.124.06") != std::string::npos);
  CHECK(allowed.err.find("575.51.03") != std::string::npos);
}

TEST_CASE("provenance: another GPU of the same model is named, not refused; a summary without provenance is said (issue 46)") {
  const auto s1 = noise::run(43, 3, 100), s2 = noise::run(44, 3, 100);
  const auto a = write("gpu0.json", with_origin(s1, "NVIDIA H200", "GPU-aaaa", "570.124.06"));
  const auto b = write("gpu1.json", with_origin(s2, "NVIDIA H200", "GPU-cccc", "570.124.06"));
  const auto other = diff({a, b});
  CHECK(other.status == 0);
  CHECK(count_of(other.err, "\n") == 1);
  CHECK(other.err.find("device UUID (same model, another GPU) differs") != std::string::npos);
  CHECK(other.err.find("GPU-cccc") != std::string::npos);
  const auto old = write("old.json", saved(s2));
  const auto mixed = diff({a, old});
  CHECK(mixed.status == 0);
  CHECK(count_of(mixed.err, "\n") == 1);
  CHECK(mixed.err.find("records no provenance") != std::string::npos);
}

TEST_CASE("provenance: --format json says its format and the inputs' differences") {
  const auto a = write("fa.json", with_origin(noise::run(45, 3, 100), "NVIDIA H200", "GPU-aaaa", "570.124.06"));
  const auto b = write("fb.json", with_origin(noise::run(46, 3, 100), "NVIDIA H200", "GPU-aaaa", "575.51.03"));
  const auto r = diff({a, b, "--format", "json"});
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["format"]["name"] == "nvscope-diff");
  CHECK(j["format"]["version"] == 1);
  REQUIRE(j["input_differences"].size() == 1);
  CHECK(j["input_differences"][0].get<std::string>().rfind("driver differs: ", 0) == 0);
  CHECK(j["gate"] == "pass");
  if (const char* dir = std::getenv("NVSCOPE_SCHEMA_SAMPLES"); dir != nullptr && *dir)
    std::ofstream(std::string(dir) + "/diff.json", std::ios::binary) << r.out;
}

TEST_CASE("the shipped summary of 2026-11-23 has no samples: refused in one line, as docs/diagnosis.md says") {
  const std::string shipped = NVSCOPE_SHIPPED_SUMMARY;
  const auto r = diff({shipped, shipped});
  CHECK(one_error_line(r));
  CHECK(r.err.find("no samples") != std::string::npos);
}

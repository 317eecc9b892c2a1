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
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

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

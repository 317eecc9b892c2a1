// The nvscope command itself, started as a user would start it, on programs that need no
// GPU: arguments, stdin, stdout and the exit status pass through; bad options stop before
// the program starts; one line says why nothing was profiled; SIGTERM reaches the program.
#include <doctest/doctest.h>
#include "file_text.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

struct outcome {
  int status = -1; // exit status, or 128 + signal
  std::string out, err;
};

std::string temp_folder() {
  const char* tmp = std::getenv("TMPDIR");
  std::string p = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/nvscope-run-test-XXXXXX";
  REQUIRE(::mkdtemp(p.data()) != nullptr);
  return p;
}

struct env_change {
  std::vector<std::pair<std::string, std::string>> set;
  std::vector<std::string> unset;
};

// Runs argv with stdin from `input`, capturing stdout and stderr. With `term_on_ready`, sends
// SIGTERM to it once its stdout says "ready".
outcome run(const std::vector<std::string>& argv, const env_change& env = {}, const std::string& input = "",
            bool term_on_ready = false) {
  const std::string dir = temp_folder();
  const std::string in = dir + "/in", out = dir + "/out", err = dir + "/err";
  std::ofstream(in) << input;
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    const int fi = ::open(in.c_str(), O_RDONLY), fo = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600),
              fe = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fi < 0 || fo < 0 || fe < 0) ::_exit(121);
    ::dup2(fi, 0);
    ::dup2(fo, 1);
    ::dup2(fe, 2);
    for (const auto& name : env.unset) ::unsetenv(name.c_str());
    for (const auto& kv : env.set) ::setenv(kv.first.c_str(), kv.second.c_str(), 1);
    std::vector<char*> a;
    for (const auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
    a.push_back(nullptr);
    ::execv(a[0], a.data());
    ::_exit(122);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  bool termed = false;
  int status = 0;
  for (;;) {
    const pid_t w = ::waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      FAIL("timed out: " << argv[0]);
    }
    if (term_on_ready && !termed && nvscope_test::file_text(out).find("ready") != std::string::npos) {
      ::kill(pid, SIGTERM);
      termed = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  outcome o;
  o.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  o.out = nvscope_test::file_text(out);
  o.err = nvscope_test::file_text(err);
  ::unlink(in.c_str());
  ::unlink(out.c_str());
  ::unlink(err.c_str());
  ::rmdir(dir.c_str());
  return o;
}

std::vector<std::string> nvscope_lines(const std::string& err) {
  std::vector<std::string> lines;
  std::stringstream s(err);
  std::string line;
  while (std::getline(s, line))
    if (line.rfind("nvscope:", 0) == 0) lines.push_back(line);
  return lines;
}

bool empty_folder(const std::string& dir) {
  const std::string probe = nvscope_test::file_text(dir); // a folder reads as nothing; check its entries instead
  (void)probe;
  return ::rmdir(dir.c_str()) == 0; // succeeds only when empty (and removes it)
}

bool driver_present() {
  void* h = ::dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (h != nullptr) ::dlclose(h);
  return h != nullptr;
}

// The stand-in driver folder first on the library path; CUPTI named exactly.
env_change with_fake_driver() {
  env_change e;
  const char* old = std::getenv("LD_LIBRARY_PATH");
  e.set.emplace_back("LD_LIBRARY_PATH", std::string(NVSCOPE_TEST_FAKE_DRIVER_DIR) + (old ? std::string(":") + old : ""));
  e.set.emplace_back("NVSCOPE_CUPTI_PATH", NVSCOPE_TEST_CUPTI);
  e.unset.push_back("CUDA_INJECTION64_PATH");
  return e;
}

} // namespace

TEST_CASE("a program without CUDA: arguments, stdin, stdout and exit status pass through; one line, no files") {
  const std::string out_dir = temp_folder();
  for (const bool fake : {false, true}) {
    CAPTURE(fake);
    env_change env = fake ? with_fake_driver() : env_change{};
    env.unset.push_back("CUDA_INJECTION64_PATH");
    const auto o = run({NVSCOPE_TEST_TOOL, "run", "--output-dir=" + out_dir, "--", NVSCOPE_TEST_ECHO, "a b", "-x",
                        "--exit=7"},
                       env, "line one\nline two\n");
    CHECK(o.status == 7);
    CHECK(o.out == "arg[1]=a b\narg[2]=-x\narg[3]=--exit=7\nline one\nline two\n");
    const auto lines = nvscope_lines(o.err);
    REQUIRE(lines.size() == 1);
    if (fake || driver_present())
      CHECK(lines[0] == "nvscope: run: no process of the program used CUDA; no profile written");
    else
      CHECK(lines[0] == "nvscope: run: no CUDA driver on this machine (libcuda.so.1 not found); the program runs unprofiled");
  }
  CHECK(empty_folder(out_dir));
}

TEST_CASE("bad options: exit 2, one line naming the bad part, the program not started") {
  const std::string dir = temp_folder();
  const std::string marker = dir + "/started";
  struct bad {
    std::vector<std::string> args;
    const char* says;
  } cases[] = {
      {{"--skip=many"}, "nvscope: run: bad --skip='many': want a whole number"},
      {{"--frobnicate=1"}, "nvscope: run: unknown option '--frobnicate' (see nvscope run --help)"},
      {{"--capture-range=nvtx"}, "nvscope: run: --capture-range=nvtx needs --nvtx-capture=NAME"},
      {{"--outputs=pdf"}, "nvscope: run: bad --outputs='pdf': unknown output 'pdf' (want summary, csv, json, trace, folded, all or none)"},
      {{"--summary=tables"}, "nvscope: run: bad --summary='tables': want short, full or none"},
      {{"--color", "yes"}, "nvscope: run: bad --color='yes': want auto, always or never"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> argv = {NVSCOPE_TEST_TOOL, "run"};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    argv.insert(argv.end(), {"--", "/bin/sh", "-c", "touch " + marker});
    const auto o = run(argv);
    CHECK(o.status == 2);
    CHECK(o.err == std::string(c.says) + "\n");
    CHECK(::access(marker.c_str(), F_OK) != 0);
  }
  const auto env_bad = run({NVSCOPE_TEST_TOOL, "run", "--", "/bin/sh", "-c", "touch " + marker},
                           env_change{{{"NVSCOPE_RUN_BUFFER_SIZE", "lots"}}, {}});
  CHECK(env_bad.status == 2);
  CHECK(env_bad.err.find("bad NVSCOPE_RUN_BUFFER_SIZE='lots'") != std::string::npos);
  CHECK(::access(marker.c_str(), F_OK) != 0);
  const auto none = run({NVSCOPE_TEST_TOOL, "run"});
  CHECK(none.status == 2);
  CHECK(none.err == "nvscope: run: no program given (nvscope run [options] -- program args...)\n");
  const auto missing = run({NVSCOPE_TEST_TOOL, "run", "--", dir + "/no-such-program"});
  CHECK(missing.status == 127);
  CHECK(missing.err.find("cannot start") != std::string::npos);
  CHECK(empty_folder(dir));
}

TEST_CASE("a CUDA program on a machine without a GPU: one clear line, the program runs") {
  if (driver_present()) {
    // A GPU machine: there this program finds its devices; the GPU script covers it.
    const auto o = run({NVSCOPE_TEST_TOOL, "run", "--outputs=none", "--", NVSCOPE_TEST_CUDART});
    CHECK(o.status == 5);
    CHECK(o.out.find("cudart_program:") != std::string::npos);
    return;
  }
  const auto plain = run({NVSCOPE_TEST_TOOL, "run", "--", NVSCOPE_TEST_CUDART});
  CHECK(plain.status == 5);
  CHECK(plain.out.find("cudart_program: no device") != std::string::npos);
  auto lines = nvscope_lines(plain.err);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].find("no CUDA driver on this machine") != std::string::npos);
  const auto fake = run({NVSCOPE_TEST_TOOL, "run", "--", NVSCOPE_TEST_CUDART}, with_fake_driver());
  CHECK(fake.status == 5);
  CHECK(fake.out.find("cudart_program: no device") != std::string::npos);
  lines = nvscope_lines(fake.err);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0] == "nvscope: run: no process of the program used CUDA; no profile written");
}

TEST_CASE("another CUDA tool attached (nsys, ncu, compute-sanitizer): one line, the program runs") {
  const auto o = run({NVSCOPE_TEST_TOOL, "run", "--", NVSCOPE_TEST_ECHO, "--exit=3"},
                     env_change{{{"CUDA_INJECTION64_PATH", "/opt/other/libtool.so"}}, {}});
  CHECK(o.status == 3);
  CHECK(o.out == "arg[1]=--exit=3\n");
  CHECK(o.err ==
        "nvscope: run: another CUDA tool is attached (CUDA_INJECTION64_PATH is set, as under nsys, ncu or "
        "compute-sanitizer); the program runs unprofiled\n");
}

TEST_CASE("SIGTERM to the tool reaches the program; its exit status comes back") {
  env_change env = with_fake_driver();
  const auto o = run({NVSCOPE_TEST_TOOL, "run", "--", NVSCOPE_TEST_ECHO, "--wait-term", "--exit=9"}, env, "", true);
  CHECK(o.status == 9);
  CHECK(o.out.find("got SIGTERM") != std::string::npos);
}

TEST_CASE("a program killed by a signal: the tool ends with the same signal") {
  const auto o = run({NVSCOPE_TEST_TOOL, "run", "--", "/bin/sh", "-c", "kill -KILL $$"}, with_fake_driver());
  CHECK(o.status == 128 + SIGKILL);
}

TEST_CASE("nvscope without a command, with an unknown one, and diff") {
  auto o = run({NVSCOPE_TEST_TOOL});
  CHECK(o.status == 2);
  CHECK(o.err.find("usage: nvscope run") != std::string::npos);
  o = run({NVSCOPE_TEST_TOOL, "frob\x01"});
  CHECK(o.status == 2);
  CHECK(o.err == "nvscope: unknown command 'frob\\x01' (want run or diff; see nvscope --help)\n");
  o = run({NVSCOPE_TEST_TOOL, "run", "--help"});
  CHECK(o.status == 0);
  CHECK((o.out + o.err).find("--summary=short|full|none") != std::string::npos);
  CHECK((o.out + o.err).find("--color=auto|always|never") != std::string::npos);
  o = run({NVSCOPE_TEST_TOOL, "--version"});
  CHECK(o.status == 0);
  CHECK(o.out.rfind("nvscope ", 0) == 0);
}

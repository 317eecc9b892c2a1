// The nvscope command itself, started as a user would start it, on programs that need no
// GPU: arguments, stdin, stdout and the exit status pass through; bad options stop before
// the program starts; one line says why nothing was profiled; SIGTERM reaches the program.
#include <doctest/doctest.h>
#include "file_text.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
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

// A started command: its pid and the files of its stdin, stdout and stderr.
struct spawned {
  pid_t pid = -1;
  std::string dir, in, out, err;
};

// Starts argv with stdin from `input`, capturing stdout and stderr; the signals in `ignored`
// set to SIG_IGN first (as nohup does), and with `own_group` in a process group of its own
// (its pid), as a job scheduler or GNU timeout starts a job.
spawned spawn(const std::vector<std::string>& argv, const env_change& env = {}, const std::string& input = "",
              const std::vector<int>& ignored = {}, bool own_group = false) {
  spawned s;
  s.dir = temp_folder();
  s.in = s.dir + "/in", s.out = s.dir + "/out", s.err = s.dir + "/err";
  std::ofstream(s.in) << input;
  s.pid = ::fork();
  REQUIRE(s.pid >= 0);
  if (s.pid == 0) {
    const int fi = ::open(s.in.c_str(), O_RDONLY), fo = ::open(s.out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600),
              fe = ::open(s.err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fi < 0 || fo < 0 || fe < 0) ::_exit(121);
    ::dup2(fi, 0);
    ::dup2(fo, 1);
    ::dup2(fe, 2);
    for (const auto& name : env.unset) ::unsetenv(name.c_str());
    for (const auto& kv : env.set) ::setenv(kv.first.c_str(), kv.second.c_str(), 1);
    for (int sig : ignored) ::signal(sig, SIG_IGN);
    if (own_group) ::setpgid(0, 0);
    std::vector<char*> a;
    for (const auto& arg : argv) a.push_back(const_cast<char*>(arg.c_str()));
    a.push_back(nullptr);
    ::execv(a[0], a.data());
    ::_exit(122);
  }
  if (own_group) ::setpgid(s.pid, s.pid); // both sides, so that a signal right after sees the group
  return s;
}

// Waits for `s` (60 s at most), calling on_ready once its stdout says "ready"; then its outcome.
outcome reap(const spawned& s, const std::function<void()>& on_ready = {}) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  bool ready = false;
  int status = 0;
  for (;;) {
    const pid_t w = ::waitpid(s.pid, &status, WNOHANG);
    if (w == s.pid) break;
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(s.pid, SIGKILL);
      ::waitpid(s.pid, &status, 0);
      FAIL("timed out");
    }
    if (on_ready && !ready && nvscope_test::file_text(s.out).find("ready") != std::string::npos) {
      on_ready();
      ready = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  outcome o;
  o.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  o.out = nvscope_test::file_text(s.out);
  o.err = nvscope_test::file_text(s.err);
  ::unlink(s.in.c_str());
  ::unlink(s.out.c_str());
  ::unlink(s.err.c_str());
  ::rmdir(s.dir.c_str());
  return o;
}

// Runs argv with stdin from `input`, capturing stdout and stderr. With `term_on_ready`, sends
// SIGTERM to it once its stdout says "ready".
outcome run(const std::vector<std::string>& argv, const env_change& env = {}, const std::string& input = "",
            bool term_on_ready = false) {
  const spawned s = spawn(argv, env, input);
  if (!term_on_ready) return reap(s);
  return reap(s, [&s] { ::kill(s.pid, SIGTERM); });
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
      {{"--outputs=pdf"}, "nvscope: run: bad --outputs='pdf': unknown output 'pdf' (want summary, csv, json, trace, folded, flame, steps, histograms, all or none)"},
      {{"--summary=tables"}, "nvscope: run: bad --summary='tables': want short, full or none"},
      {{"--color", "yes"}, "nvscope: run: bad --color='yes': want auto, always or never"},
      {{"-t", "cuda,osrt"}, "nvscope: run: bad -t='cuda,osrt': nvscope cannot trace 'osrt' (it traces cuda and nvtx; docs/run.md, \"nsys's options\")"},
      {{"--cuda-graph-trace=graph"}, "nvscope: run: bad --cuda-graph-trace='graph': nvscope records each node of a CUDA graph, not whole graphs (want node)"},
      {{"--capture-range-end=repeat:0", "--capture-range=cudaProfilerApi"}, "nvscope: run: bad --capture-range-end='repeat:0': want repeat:N with a whole number N >= 1"},
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

TEST_CASE("-o with an existing stem: refused in one line, exit 2, before the program starts; -f writes over it (issue 48)") {
  const std::string dir = temp_folder();
  const std::string marker = dir + "/started";
  std::ofstream(dir + "/prof.json") << "{}";
  const auto refused = run({NVSCOPE_TEST_TOOL, "run", "-o", dir + "/prof", "--", "/bin/sh", "-c", "touch " + marker});
  CHECK(refused.status == 2);
  CHECK(refused.err == "nvscope: run: '" + dir + "/prof.json' exists: not overwritten (-f/--force-overwrite=true writes over it)\n");
  CHECK(::access(marker.c_str(), F_OK) != 0);
  const auto forced = run({NVSCOPE_TEST_TOOL, "run", "-o", dir + "/prof", "-f", "--", "/bin/sh", "-c", "touch " + marker});
  CHECK(forced.status == 0);
  CHECK(::access(marker.c_str(), F_OK) == 0);
  const auto other = run({NVSCOPE_TEST_TOOL, "run", "--output=" + dir + "/other", "--", "/bin/true"});
  CHECK(other.status == 0);
  CHECK(other.err.find("exists") == std::string::npos);
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
  CHECK(o.err == "nvscope: unknown command 'frob\\x01' (want run, diff, merge, env or docs; see nvscope --help)\n");
  o = run({NVSCOPE_TEST_TOOL, "run", "--help"});
  CHECK(o.status == 0);
  CHECK((o.out + o.err).find("--summary=short|full|none") != std::string::npos);
  CHECK((o.out + o.err).find("--color=auto|always|never") != std::string::npos);
  o = run({NVSCOPE_TEST_TOOL, "--version"});
  CHECK(o.status == 0);
  CHECK(o.out.rfind("nvscope ", 0) == 0);
}

TEST_CASE("a signal sent to the tool's whole process group reaches the program once, in each of 20 tries (issue 45)") {
  // GNU timeout, job schedulers: kill(-PGID, SIGINT). The program counts the SIGINTs it gets.
  int once = 0;
  for (int i = 0; i < 20; ++i) {
    const spawned s = spawn({NVSCOPE_TEST_TOOL, "run", "--", NVSCOPE_TEST_ECHO, "--count-int", "--exit=4"},
                            with_fake_driver(), "", {}, true);
    const outcome o = reap(s, [&s] {
      ::kill(-s.pid, SIGINT);
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      ::kill(s.pid, SIGTERM);
    });
    CHECK(o.status == 4);
    const bool one = o.out.find("got SIGTERM\nSIGINT 1\n") != std::string::npos;
    CHECK_MESSAGE(one, "try " << i << ": " << o.out.substr(o.out.find("ready")));
    once += one ? 1 : 0;
  }
  CHECK(once == 20);
}

TEST_CASE("signals ignored at start stay ignored, in the tool and in the program: nohup survives SIGHUP (issue 45)") {
  const spawned s = spawn({NVSCOPE_TEST_TOOL, "run", "--", NVSCOPE_TEST_ECHO, "--report-ignored", "--wait-term", "--exit=9"},
                          with_fake_driver(), "", {SIGHUP, SIGQUIT}, true);
  const outcome o = reap(s, [&s] {
    ::kill(s.pid, SIGHUP); // a shell's SIGHUP at logout
    ::kill(-s.pid, SIGHUP);
    ::kill(s.pid, SIGQUIT);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ::kill(s.pid, SIGTERM); // not ignored: forwarded, the program ends cleanly
  });
  CHECK(o.status == 9);
  CHECK(o.out.find("SIGHUP ignored\nSIGINT default\nSIGQUIT ignored\nSIGTERM default\n") != std::string::npos);
  CHECK(o.out.find("got SIGTERM") != std::string::npos);
}

TEST_CASE("a program that cannot start: one line, 127 when not found, 126 when it exists but cannot run (issue 45)") {
  const std::string dir = temp_folder();
  const std::string plain = dir + "/plain", script = dir + "/bad_interpreter", odd = dir + "/x\nline\x1b[31m";
  std::ofstream(plain) << "#!/bin/sh\necho hi\n";
  REQUIRE(::chmod(plain.c_str(), 0644) == 0); // not executable
  std::ofstream(script) << "#!" << dir << "/no-such-interpreter\n";
  REQUIRE(::chmod(script.c_str(), 0755) == 0);
  const std::string shown = dir; // temp folders hold printable characters only
  struct expected {
    std::string program;
    int status;
    std::string line;
  } cases[] = {
      {dir + "/no-such-program", 127, "nvscope: run: cannot start '" + shown + "/no-such-program': No such file or directory"},
      {"nvscope-no-such-program-in-path", 127, "nvscope: run: cannot start 'nvscope-no-such-program-in-path': No such file or directory"},
      {odd, 127, "nvscope: run: cannot start '" + shown + "/x\\x0aline\\x1b[31m': No such file or directory"},
      {plain, 126, "nvscope: run: cannot start '" + shown + "/plain': Permission denied"},
      {dir, 126, "nvscope: run: cannot start '" + shown + "': it is a folder"},
      {script, 126, "nvscope: run: cannot start '" + shown + "/bad_interpreter': its interpreter (the #! line's program) was not found"},
  };
  // An obstacle (another CUDA tool attached): the program would run unprofiled, but it never starts, so that is not said.
  for (const auto& c : cases) {
    CAPTURE(c.program);
    const auto o = run({NVSCOPE_TEST_TOOL, "run", "--", c.program}, env_change{{{"CUDA_INJECTION64_PATH", "/opt/other/libtool.so"}}, {}});
    CHECK(o.status == c.status);
    CHECK(o.err == c.line + "\n");
  }
  ::unlink(plain.c_str());
  ::unlink(script.c_str());
  CHECK(empty_folder(dir));
}

namespace {
// Reads the terminal's master side until `want` has been seen (or 20 s); what was read.
std::string read_until(int master, const std::string& want, std::string& all) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (all.find(want) == std::string::npos && std::chrono::steady_clock::now() < deadline) {
    struct pollfd p {master, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    char buf[512];
    const ssize_t n = ::read(master, buf, sizeof buf);
    if (n <= 0) break; // EIO: the terminal's last user closed it
    all.append(buf, static_cast<std::size_t>(n));
  }
  return all;
}

// `nvscope run` at a terminal, as a shell starts a foreground job (forkpty: a session whose
// controlling terminal is the pty, the tool in its foreground group).
pid_t at_terminal(int& master, const std::vector<std::string>& argv) {
  const env_change env = with_fake_driver();
  const pid_t pid = ::forkpty(&master, nullptr, nullptr, nullptr);
  REQUIRE(pid >= 0);
  if (pid == 0) {
    for (const auto& name : env.unset) ::unsetenv(name.c_str());
    for (const auto& kv : env.set) ::setenv(kv.first.c_str(), kv.second.c_str(), 1);
    std::vector<char*> a;
    for (const auto& arg : argv) a.push_back(const_cast<char*>(arg.c_str()));
    a.push_back(nullptr);
    ::execv(a[0], a.data());
    ::_exit(122);
  }
  return pid;
}

int exit_of(pid_t pid) {
  int status = 0;
  for (int i = 0; i < 2000 && ::waitpid(pid, &status, WNOHANG) == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -1;
}
} // namespace

TEST_CASE("at a terminal: the program reads it, Ctrl-C reaches it once, Ctrl-Z stops and fg resumes the job (issue 45)") {
  int master = -1;
  pid_t pid = at_terminal(master, {NVSCOPE_TEST_TOOL, "run", "--", NVSCOPE_TEST_ECHO});
  std::string all;
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  REQUIRE(::write(master, "typed line\n\x04\x04", 13) == 13); // a line, then end of input (Ctrl-D; the echo program's fread reads past a first one)
  read_until(master, "typed line\r\ntyped line", all); // the echo of the terminal, then the program's copy
  CHECK(exit_of(pid) == 0);
  CHECK(all.find("typed line\r\ntyped line") != std::string::npos);
  ::close(master);

  // Inside a script's process group (a shell without job control): the program reads the
  // terminal all the same (stopped for reading from the background, it is given the terminal).
  pid = at_terminal(master, {"/bin/sh", "-c", std::string(NVSCOPE_TEST_TOOL) + " run -- " + NVSCOPE_TEST_ECHO + "; echo script-done"});
  all.clear();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  REQUIRE(::write(master, "typed line\n\x04\x04", 13) == 13);
  read_until(master, "script-done", all);
  CHECK(exit_of(pid) == 0);
  CHECK(all.find("typed line\r\ntyped line") != std::string::npos);
  CHECK(all.find("script-done") != std::string::npos);
  ::close(master);

  pid = at_terminal(master, {NVSCOPE_TEST_TOOL, "run", "--", NVSCOPE_TEST_ECHO, "--count-int", "--exit=4"});
  all.clear();
  read_until(master, "ready", all);
  REQUIRE(::write(master, "\x1a", 1) == 1); // Ctrl-Z: the job stops, as a shell sees it
  int status = 0;
  pid_t w = 0;
  for (int i = 0; i < 500 && (w = ::waitpid(pid, &status, WNOHANG | WUNTRACED)) == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  CHECK(w == pid);
  CHECK(WIFSTOPPED(status));
  ::kill(pid, SIGCONT); // fg
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  REQUIRE(::write(master, "\x03", 1) == 1); // Ctrl-C
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  ::kill(pid, SIGTERM);
  read_until(master, "SIGINT ", all);
  read_until(master, "\n", all);
  CHECK(exit_of(pid) == 4);
  CHECK(all.find("SIGINT 1") != std::string::npos);
  ::close(master);
}

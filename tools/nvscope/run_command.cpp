#include "run_command.hpp"

#include "run_options.hpp"
#include "session.hpp"

#include <nvscope/collector.hpp>

#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <string>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace nvscope {
inline namespace v1 {
namespace tool {
namespace {

volatile sig_atomic_t child_pid = 0;

constexpr int forwarded_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

// Signals sent to the tool by another process (kill, a job scheduler) go on to the program.
// Terminal signals (Ctrl-C) are not forwarded: the terminal sends them to the program too.
extern "C" void forward_signal(int sig, siginfo_t* info, void*) {
  const pid_t child = static_cast<pid_t>(child_pid);
  if (child <= 0 || info == nullptr) return;
  if (info->si_code > 0) return; // from the kernel: the terminal, already delivered to the group
  if (info->si_pid == child) return;
  ::kill(child, sig);
}

void install_forwarding() {
  struct sigaction sa {};
  sa.sa_sigaction = forward_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  for (int sig : forwarded_signals) ::sigaction(sig, &sa, nullptr);
}

std::string folder_of_executable() {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return {};
  std::string path(buf, static_cast<std::size_t>(n));
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

bool readable(const std::string& path) { return ::access(path.c_str(), R_OK) == 0; }

#ifndef NVSCOPE_INSTALL_LIBDIR
#define NVSCOPE_INSTALL_LIBDIR "lib"
#endif

// NVSCOPE_RUN_INJECTION, else the install's library folder beside bin/ (the build tree has
// the same layout), else lib/ or lib64/, else beside the command.
std::string find_injection_library(std::string& looked) {
  if (const char* v = std::getenv("NVSCOPE_RUN_INJECTION"); v != nullptr && *v != '\0') {
    looked = v;
    return readable(v) ? std::string(v) : std::string();
  }
  const std::string bin = folder_of_executable();
  const std::string candidates[] = {bin + "/../" NVSCOPE_INSTALL_LIBDIR "/libnvscope_inject.so",
                                    bin + "/../lib/libnvscope_inject.so", bin + "/../lib64/libnvscope_inject.so",
                                    bin + "/libnvscope_inject.so"};
  for (const auto& c : candidates) {
    looked += (looked.empty() ? "" : ", ") + c;
    if (readable(c)) return c;
  }
  return {};
}

// Why the program must run unprofiled, or empty; `library` is set when it can be profiled.
std::string obstacle(std::string& library) {
  if (const char* v = std::getenv("CUDA_INJECTION64_PATH"); v != nullptr && *v != '\0')
    return "another CUDA tool is attached (CUDA_INJECTION64_PATH is set, as under nsys, ncu or compute-sanitizer)";
  void* driver = ::dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (driver == nullptr) return "no CUDA driver on this machine (libcuda.so.1 not found)";
  ::dlclose(driver);
  std::string looked;
  library = find_injection_library(looked);
  if (library.empty()) return "nvscope's injection library is missing (looked for " + looked + ")";
  // NVTX ranges of every library go to CUPTI, unless a tool already owns NVTX (nsys).
  if (!prepare_collector()) return "libcupti could not be loaded (set NVSCOPE_CUPTI_PATH to its file)";
  return {};
}

std::string make_session_folder() {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/nvscope-run-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) return {};
  return pattern;
}

void remove_session_folder(const std::string& folder, const std::vector<process_notes>& notes) {
  for (const auto& p : notes) ::unlink((folder + "/" + std::to_string(p.pid)).c_str());
  ::rmdir(folder.c_str());
}

struct launch {
  pid_t pid = -1;
  int exec_errno = 0;
};

// fork + execvp; an exec failure comes back through a close-on-exec pipe.
launch start_program(char** program, bool profiled, const std::string& library, const std::string& session,
                     const run_parse& parsed) {
  launch l;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    l.exec_errno = errno;
    return l;
  }
  l.pid = ::fork();
  if (l.pid == 0) {
    ::close(fds[0]);
    if (profiled) {
      ::setenv("CUDA_INJECTION64_PATH", library.c_str(), 1);
      ::setenv(session_variable, session.c_str(), 1);
      for (const auto& kv : child_environment(parsed.given)) ::setenv(kv.first.c_str(), kv.second.c_str(), 1);
    }
    ::execvp(program[0], program);
    const int e = errno;
    const ssize_t n = ::write(fds[1], &e, sizeof e);
    (void)n;
    ::_exit(127);
  }
  ::close(fds[1]);
  if (l.pid < 0) {
    l.exec_errno = errno;
    ::close(fds[0]);
    return l;
  }
  int e = 0;
  ssize_t n;
  do n = ::read(fds[0], &e, sizeof e);
  while (n < 0 && errno == EINTR);
  if (n == static_cast<ssize_t>(sizeof e)) l.exec_errno = e;
  ::close(fds[0]);
  return l;
}

int wait_for(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return status;
}

} // namespace

int run_main(int argc, char** argv) {
  const run_parse parsed = parse_run(argc, argv, 2);
  if (parsed.help) {
    std::fputs(run_usage(), stdout);
    return 0;
  }
  if (!parsed.error.empty()) {
    std::fprintf(stderr, "%s\n", parsed.error.c_str());
    return 2;
  }
  std::string library;
  const std::string why_not = obstacle(library);
  std::string session;
  if (why_not.empty()) {
    session = make_session_folder();
    if (session.empty())
      std::fprintf(stderr, "nvscope: run: cannot create a session folder in TMPDIR (%s); processes that end "
                           "without writing will not be named\n", std::strerror(errno));
  } else {
    std::fprintf(stderr, "nvscope: run: %s; the program runs unprofiled\n", why_not.c_str());
  }
  install_forwarding();
  const launch l = start_program(argv + parsed.program, why_not.empty(), library, session, parsed);
  if (l.pid < 0 || l.exec_errno != 0) {
    if (l.pid > 0) wait_for(l.pid);
    std::fprintf(stderr, "nvscope: run: cannot start '%s': %s\n", argv[parsed.program], std::strerror(l.exec_errno));
    if (!session.empty()) ::rmdir(session.c_str());
    return 127;
  }
  child_pid = l.pid;
  const int status = wait_for(l.pid);
  child_pid = 0;
  if (why_not.empty() && !session.empty()) {
    const auto notes = read_session(session);
    for (const auto& line : session_summary(notes)) std::fprintf(stderr, "%s\n", line.c_str());
    remove_session_folder(session, notes);
  }
  if (status < 0) return 1;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    std::fflush(nullptr);
    ::signal(sig, SIG_DFL);
    ::raise(sig);
    return 128 + sig;
  }
  return 1;
}

} // namespace tool
} // namespace v1
} // namespace nvscope

#include "run_command.hpp"

#include "run_options.hpp"
#include "session.hpp"

#include <nvscope/collector.hpp>
#include <nvscope/detail/quote.hpp>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <filesystem>
#include <string>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace nvscope {
inline namespace v1 {
namespace tool {
namespace {

volatile sig_atomic_t child_pid = 0;

// The program runs in a process group of its own, so that a signal sent to the tool's group
// (kill -INT -PGID, GNU timeout, a job scheduler) reaches only the tool, which forwards it:
// the program gets each signal exactly once. At a terminal the program's group is made the
// terminal's foreground (as a shell does for a job), so Ctrl-C, Ctrl-\ and Ctrl-Z go to it
// directly and it can read the terminal; the tool, then in the background, gets none of them.
constexpr int forwarded_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};

extern "C" void forward_signal(int sig, siginfo_t* info, void*) {
  const pid_t child = static_cast<pid_t>(child_pid);
  if (child <= 0 || (info != nullptr && info->si_code == SI_USER && info->si_pid == child)) return; // not back to its sender
  const int saved = errno; // the interrupted code's errno is its own
  ::kill(child, sig);
  errno = saved;
}

// Forwarding for each signal the tool was not started with ignored; those stay ignored, in
// the tool and (SIG_IGN survives exec) in the program: nohup's SIGHUP is kept. Returns the
// signals given a handler, which the program's side of the fork resets before exec.
sigset_t install_forwarding() {
  sigset_t installed;
  sigemptyset(&installed);
  struct sigaction sa {};
  sa.sa_sigaction = forward_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  for (int sig : forwarded_signals) {
    struct sigaction old {};
    if (::sigaction(sig, nullptr, &old) != 0 || (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_IGN)) continue;
    ::sigaction(sig, &sa, nullptr);
    sigaddset(&installed, sig);
  }
  return installed;
}

// The terminal of stdin, stdout or stderr (the first that is one).
struct terminal {
  int fd = -1;         ///< -1: none
  bool job = false;    ///< the tool leads its group: a job-control shell started it as a job
  bool in_front = false; ///< the tool's group holds the terminal's foreground now
};

terminal controlling_terminal() {
  for (int fd = 0; fd < 3; ++fd)
    if (::isatty(fd)) return {fd, ::getpgrp() == ::getpid(), ::tcgetpgrp(fd) == ::getpgrp()};
  return {};
}

// Makes `group` the terminal's foreground; SIGTTOU blocked meanwhile, since a caller in the
// background (the tool, taking the terminal back) would otherwise be stopped by it.
void give_terminal(int tty, pid_t group) {
  sigset_t ttou, old;
  sigemptyset(&ttou);
  sigaddset(&ttou, SIGTTOU);
  ::sigprocmask(SIG_BLOCK, &ttou, &old);
  (void)::tcsetpgrp(tty, group);
  ::sigprocmask(SIG_SETMASK, &old, nullptr);
}

// Whether execvp would have found a file for `name`: then the program exists but cannot run
// (exit 126, as shells give), otherwise it is not found (127).
bool program_exists(const char* name) {
  if (std::strchr(name, '/') != nullptr) return ::access(name, F_OK) == 0;
  const char* path = std::getenv("PATH");
  const std::string dirs = path != nullptr && *path != '\0' ? path : "/bin:/usr/bin"; // execvp's default
  for (std::size_t from = 0; from <= dirs.size();) {
    const std::size_t colon = std::min(dirs.find(':', from), dirs.size());
    const std::string dir = colon == from ? std::string(".") : dirs.substr(from, colon - from);
    if (::access((dir + "/" + name).c_str(), F_OK) == 0) return true;
    from = colon + 1;
  }
  return false;
}

// Why the program could not start, in the user's words.
std::string start_failure(const char* name, int error) {
  struct ::stat st {};
  if (error == EACCES && std::strchr(name, '/') != nullptr && ::stat(name, &st) == 0 && S_ISDIR(st.st_mode))
    return "it is a folder";
  if (error == ENOENT && program_exists(name)) return "its interpreter (the #! line's program) was not found";
  return std::strerror(error);
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
// the same layout), else lib/ or lib64/, else beside the command. The path found is written
// without `bin/..` (the program and `nvscope env` show it as the install names it).
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
    if (readable(c)) return std::filesystem::path(c).lexically_normal().string();
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

// The program's side of the fork: its own process group (the terminal's foreground when the
// tool is a job holding it), the tool's handlers back to their defaults, the signal mask as it
// was, then exec.
[[noreturn]] void exec_program(char** program, int report, int tty, const sigset_t& handled, const sigset_t& mask) {
  for (int sig = 1; sig < NSIG; ++sig)
    if (sigismember(&handled, sig) == 1) ::signal(sig, SIG_DFL);
  ::setpgid(0, 0);
  if (tty >= 0) give_terminal(tty, ::getpid());
  ::sigprocmask(SIG_SETMASK, &mask, nullptr);
  ::execvp(program[0], program);
  const int e = errno;
  const ssize_t n = ::write(report, &e, sizeof e);
  (void)n;
  ::_exit(127);
}

// fork + execvp; an exec failure comes back through a close-on-exec pipe. The forwarded
// signals are held from before the fork until child_pid is set: none is lost between. `tty`:
// the terminal to give the program's group, -1 for none.
launch start_program(char** program, bool profiled, const std::string& library, const std::string& session,
                     const run_parse& parsed, int tty, const sigset_t& handled) {
  launch l;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    l.exec_errno = errno;
    return l;
  }
  sigset_t mask;
  ::sigprocmask(SIG_BLOCK, &handled, &mask);
  l.pid = ::fork();
  if (l.pid == 0) {
    ::close(fds[0]);
    if (profiled) {
      ::setenv("CUDA_INJECTION64_PATH", library.c_str(), 1);
      ::setenv(session_variable, session.c_str(), 1);
      for (const auto& kv : child_environment(parsed.given)) ::setenv(kv.first.c_str(), kv.second.c_str(), 1);
    }
    exec_program(program, fds[1], tty, handled, mask);
  }
  ::close(fds[1]);
  if (l.pid < 0) {
    l.exec_errno = errno;
    ::sigprocmask(SIG_SETMASK, &mask, nullptr);
    ::close(fds[0]);
    return l;
  }
  ::setpgid(l.pid, l.pid); // both sides, so that the group exists whichever runs first
  if (tty >= 0) give_terminal(tty, l.pid);
  child_pid = l.pid;
  ::sigprocmask(SIG_SETMASK, &mask, nullptr);
  int e = 0;
  ssize_t n;
  do n = ::read(fds[0], &e, sizeof e);
  while (n < 0 && errno == EINTR);
  if (n == static_cast<ssize_t>(sizeof e)) l.exec_errno = e;
  ::close(fds[0]);
  return l;
}

// The terminal back to the tool's group, if the program's group holds it.
void take_terminal(int tty, pid_t program) {
  if (tty >= 0 && ::tcgetpgrp(tty) == program) give_terminal(tty, ::getpgrp());
}

// Waits for the program to end. A job at a terminal: a stop of the program (Ctrl-Z, or
// reading the terminal while the job is in the background) stops the tool too, so that the
// shell sees its job stopped; when the tool is continued (fg, bg), so is the program, in the
// terminal's foreground if the tool holds it. At a terminal the tool holds without being a
// job (inside a script's group): a program stopped for reading or writing it from the
// background gets the terminal and goes on.
int wait_for(pid_t pid, const terminal& tty) {
  int status = 0;
  for (;;) {
    if (::waitpid(pid, &status, tty.fd >= 0 ? WUNTRACED : 0) < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    if (!WIFSTOPPED(status)) break;
    const int why = WSTOPSIG(status);
    if (tty.job) {
      take_terminal(tty.fd, pid);
      ::kill(::getpid(), SIGSTOP);
    } else if ((why != SIGTTIN && why != SIGTTOU) || ::tcgetpgrp(tty.fd) != ::getpgrp()) {
      continue; // stopped by someone else, or the script is in the background: not ours to continue
    }
    if (::tcgetpgrp(tty.fd) == ::getpgrp()) give_terminal(tty.fd, pid);
    ::kill(-pid, SIGCONT);
  }
  take_terminal(tty.fd, pid);
  return status;
}

// --stats=true: each process's nsys stats reports (STEM.reports.txt, as it wrote them) on
// stdout once the program has ended, as nsys prints its stats after the run.
void print_stats(const std::vector<process_notes>& notes) {
  for (const auto& n : notes)
    for (std::size_t k = 0; k < n.kinds.size(); ++k) {
      if (n.kinds[k] != "written") continue;
      const std::string& files = n.details[k];
      for (std::size_t pos = 0; pos < files.size();) {
        const std::size_t end = std::min(files.find(", ", pos), files.size());
        const std::string path = files.substr(pos, end - pos);
        pos = end + 2;
        const std::string suffix = ".reports.txt";
        if (path.size() < suffix.size() || path.compare(path.size() - suffix.size(), suffix.size(), suffix) != 0) continue;
        if (std::FILE* f = std::fopen(path.c_str(), "r")) {
          char buffer[4096];
          for (std::size_t got; (got = std::fread(buffer, 1, sizeof buffer, f)) > 0;) std::fwrite(buffer, 1, got, stdout);
          std::fclose(f);
        }
      }
    }
  std::fflush(stdout);
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
  if (const std::string refused = refuse_overwrite(parsed.options); !refused.empty()) {
    std::fprintf(stderr, "%s\n", refused.c_str());
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
  }
  const sigset_t handled = install_forwarding();
  const terminal tty = controlling_terminal();
  const launch l = start_program(argv + parsed.program, why_not.empty(), library, session, parsed,
                                 tty.job && tty.in_front ? tty.fd : -1, handled);
  if (l.pid < 0 || l.exec_errno != 0) {
    if (l.pid > 0) wait_for(l.pid, tty);
    child_pid = 0;
    const char* name = argv[parsed.program];
    std::fprintf(stderr, "nvscope: run: cannot start '%s': %s\n", detail::escape_input(name, 256).c_str(),
                 start_failure(name, l.exec_errno).c_str());
    if (!session.empty()) ::rmdir(session.c_str());
    return program_exists(name) ? 126 : 127;
  }
  // Said once the program has started: a program that cannot start is not said to run.
  if (!why_not.empty()) std::fprintf(stderr, "nvscope: run: %s; the program runs unprofiled\n", why_not.c_str());
  const int status = wait_for(l.pid, tty);
  child_pid = 0;
  if (why_not.empty() && !session.empty()) {
    const auto notes = read_session(session);
    for (const auto& line : session_summary(notes)) std::fprintf(stderr, "%s\n", line.c_str());
    if (parsed.options.stats) print_stats(notes);
    remove_session_folder(session, notes);
  }
  if (status < 0) {
    std::fprintf(stderr, "nvscope: run: cannot wait for the program: %s\n", std::strerror(errno));
    return 1;
  }
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

int env_main(int argc, char** argv) {
  std::vector<char*> args(argv, argv + argc);
  static char dashes[] = "--", program[] = "true";
  args.push_back(dashes); // the options alone: parse_run wants a program after them
  args.push_back(program);
  const run_parse parsed = parse_run(static_cast<int>(args.size()), args.data(), 2);
  if (parsed.help || !parsed.error.empty()) {
    std::fprintf(stderr, "%s\n", parsed.help ? "usage: nvscope env [nvscope run's options]" : parsed.error.c_str());
    return 2;
  }
  std::string library;
  if (const std::string why_not = obstacle(library); !why_not.empty()) {
    std::fprintf(stderr, "nvscope: env: %s\n", why_not.c_str());
    return 1;
  }
  std::printf("CUDA_INJECTION64_PATH=%s\n", library.c_str());
  if (const char* nvtx = std::getenv("NVTX_INJECTION64_PATH"); nvtx != nullptr) std::printf("NVTX_INJECTION64_PATH=%s\n", nvtx);
  for (const auto& kv : child_environment(parsed.given)) std::printf("%s=%s\n", kv.first.c_str(), kv.second.c_str());
  return 0;
}

} // namespace tool
} // namespace v1
} // namespace nvscope

// A program that never touches CUDA, for the run tests. Prints "arg[i]=..." for each
// argument, then copies stdin to stdout, then exits with the status given by --exit=N.
// With --report-ignored it first prints "SIGHUP ignored" or "SIGHUP default" for SIGHUP,
// SIGINT, SIGQUIT and SIGTERM (the dispositions it was started with). With --wait-term it
// says "ready" and waits for SIGTERM, then prints "got SIGTERM"; with --count-int it also
// counts the SIGINTs it gets meanwhile and prints "SIGINT N" after it.
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

namespace {
volatile std::sig_atomic_t got_term = 0;
volatile std::sig_atomic_t ints = 0;
extern "C" void on_term(int) { got_term = 1; }
extern "C" void on_int(int) { ints = ints + 1; }

void report_ignored() {
  const struct {
    int sig;
    const char* name;
  } sigs[] = {{SIGHUP, "SIGHUP"}, {SIGINT, "SIGINT"}, {SIGQUIT, "SIGQUIT"}, {SIGTERM, "SIGTERM"}};
  for (const auto& s : sigs) {
    struct sigaction now {};
    ::sigaction(s.sig, nullptr, &now);
    std::printf("%s %s\n", s.name, now.sa_handler == SIG_IGN ? "ignored" : "default");
  }
}
} // namespace

int main(int argc, char** argv) {
  int status = 0;
  bool wait_term = false, count_int = false;
  for (int i = 1; i < argc; ++i) {
    std::printf("arg[%d]=%s\n", i, argv[i]);
    if (std::strncmp(argv[i], "--exit=", 7) == 0) status = std::atoi(argv[i] + 7);
    if (std::strcmp(argv[i], "--wait-term") == 0) wait_term = true;
    if (std::strcmp(argv[i], "--count-int") == 0) wait_term = count_int = true;
    if (std::strcmp(argv[i], "--report-ignored") == 0) report_ignored();
  }
  if (wait_term) {
    std::signal(SIGTERM, on_term);
    if (count_int) std::signal(SIGINT, on_int);
    std::printf("ready\n");
    std::fflush(stdout);
    for (int i = 0; i < 3000 && !got_term; ++i) ::usleep(10000);
    std::printf(got_term ? "got SIGTERM\n" : "no SIGTERM\n");
    if (count_int) std::printf("SIGINT %d\n", static_cast<int>(ints));
    return status;
  }
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, stdin)) > 0) std::fwrite(buf, 1, n, stdout);
  return status;
}

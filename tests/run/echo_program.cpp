// A program that never touches CUDA, for the run tests. Prints "arg[i]=..." for each
// argument, then copies stdin to stdout, then exits with the status given by --exit=N.
// With --wait-term it says "ready" and waits for SIGTERM, then prints "got SIGTERM".
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

namespace {
volatile std::sig_atomic_t got_term = 0;
extern "C" void on_term(int) { got_term = 1; }
} // namespace

int main(int argc, char** argv) {
  int status = 0;
  bool wait_term = false;
  for (int i = 1; i < argc; ++i) {
    std::printf("arg[%d]=%s\n", i, argv[i]);
    if (std::strncmp(argv[i], "--exit=", 7) == 0) status = std::atoi(argv[i] + 7);
    if (std::strcmp(argv[i], "--wait-term") == 0) wait_term = true;
  }
  if (wait_term) {
    std::signal(SIGTERM, on_term);
    std::printf("ready\n");
    std::fflush(stdout);
    for (int i = 0; i < 3000 && !got_term; ++i) ::usleep(10000);
    std::printf(got_term ? "got SIGTERM\n" : "no SIGTERM\n");
    return status;
  }
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, stdin)) > 0) std::fwrite(buf, 1, n, stdout);
  return status;
}

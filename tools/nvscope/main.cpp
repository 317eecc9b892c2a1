// The nvscope command: `nvscope run` (profile an unmodified program), `nvscope diff`
// (compare two saved reports) and `nvscope merge` (per-rank profiles into one report).

#include "option_docs.hpp"
#include "run_command.hpp"

#include <nvscope/detail/quote.hpp>
#include <nvscope/version.hpp>

#include <cstdio>
#include <cstring>

#if NVSCOPE_HAVE_DIFF
#include "diff_command.hpp"
#include "merge_command.hpp"
#endif

namespace {

void usage(std::FILE* to) {
  std::fputs("usage: nvscope run [options] -- program [args...]   profile a program, no rebuild\n"
             "       nvscope diff ...                             compare two saved reports\n"
             "       nvscope merge DIR|FILES... [-o OUT]          one report over per-rank traces\n"
             "       nvscope --version\n"
             "       nvscope env [options]                        the variables run gives a program (for attach)\n"
             "       nvscope docs man|bash [FILE]                 the man page, the bash completion\n"
             "nvscope run --help lists the options; man nvscope and docs/run.md explain them.\n",
             to);
}

} // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  const char* command = argv[1];
  if (std::strcmp(command, "run") == 0) return nvscope::tool::run_main(argc, argv);
  if (std::strcmp(command, "docs") == 0) return nvscope::tool::docs_main(argc, argv);
  if (std::strcmp(command, "env") == 0) return nvscope::tool::env_main(argc, argv);
  if (std::strcmp(command, "diff") == 0) {
#if NVSCOPE_HAVE_DIFF
    return nvscope::tool::diff_main(argc, argv);
#else
    std::fputs("nvscope: diff is not built\n", stderr);
    return 2;
#endif
  }
  if (std::strcmp(command, "merge") == 0) {
#if NVSCOPE_HAVE_DIFF
    return nvscope::tool::merge_main(argc, argv);
#else
    std::fputs("nvscope: merge is not built\n", stderr);
    return 2;
#endif
  }
  if (std::strcmp(command, "--help") == 0 || std::strcmp(command, "-h") == 0) {
    usage(stdout);
    return 0;
  }
  if (std::strcmp(command, "--version") == 0) {
    std::printf("nvscope %d.%d.%d\n", NVSCOPE_VERSION_MAJOR, NVSCOPE_VERSION_MINOR, NVSCOPE_VERSION_PATCH);
    return 0;
  }
  std::fprintf(stderr, "nvscope: unknown command '%s' (want run, diff, merge, env or docs; see nvscope --help)\n",
               nvscope::detail::escape_input(command, 64).c_str());
  return 2;
}

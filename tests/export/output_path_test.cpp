// Output path patterns and file writing errors.
#include <doctest/doctest.h>
#include "file_text.hpp"
#include <nvscope/export/output_path.hpp>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <stdexcept>
#include <string>

#include <sys/resource.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {
void clear_ranks() {
  for (const char* v : nvscope::rank_variables) ::unsetenv(v);
}
} // namespace

TEST_CASE("%p %h %% and plain text") {
  auto p = nvscope::expand_output_path("out_%p_%%_%h.json");
  REQUIRE(p);
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  CHECK(p.path == "out_" + std::to_string(::getpid()) + "_%_" + host + ".json");
}

TEST_CASE("%r follows the documented order and errors when no variable is set") {
  clear_ranks();
  auto p = nvscope::expand_output_path("r%r.csv");
  CHECK_FALSE(p);
  CHECK(p.error.find("no rank variable") != std::string::npos);
  CHECK(p.error.find('\n') == std::string::npos);
  ::setenv("LOCAL_RANK", "5", 1);
  CHECK(nvscope::expand_output_path("r%r").path == "r5");
  ::setenv("SLURM_PROCID", "3", 1);
  CHECK(nvscope::expand_output_path("r%r").path == "r3");
  ::setenv("OMPI_COMM_WORLD_RANK", "1", 1);
  CHECK(nvscope::expand_output_path("r%r").path == "r1");
  clear_ranks();
}

TEST_CASE("%q{VAR}") {
  ::setenv("NVSCOPE_TEST_RUN", "abc", 1);
  CHECK(nvscope::expand_output_path("x_%q{NVSCOPE_TEST_RUN}_y").path == "x_abc_y");
  ::unsetenv("NVSCOPE_TEST_UNSET_VAR");
  auto p = nvscope::expand_output_path("x_%q{NVSCOPE_TEST_UNSET_VAR}");
  CHECK_FALSE(p);
  CHECK(p.error.find("NVSCOPE_TEST_UNSET_VAR is not set") != std::string::npos);
}

TEST_CASE("malformed patterns name the bad part") {
  const char* bad[] = {"a%", "a%x", "a%q", "a%qVAR", "a%q{VAR", "a%q{}", ""};
  const char* says[] = {"at the end", "'%x'", "{VARIABLE}", "{VARIABLE}", "closing", "names no variable", "empty"};
  for (int i = 0; i < 7; ++i) {
    auto p = nvscope::expand_output_path(bad[i]);
    CHECK_FALSE(p);
    CHECK(p.path.empty());
    CHECK_MESSAGE(p.error.find(says[i]) != std::string::npos, p.error);
    CHECK(p.error.find('\n') == std::string::npos);
  }
}

TEST_CASE("write_file writes, and reports failures with path and reason") {
  const std::string path = "nvscope_test_output_" + std::to_string(::getpid()) + ".txt";
  auto w = nvscope::write_file(path, "hello\n");
  REQUIRE(w);
  CHECK(nvscope_test::file_text(path) == "hello\n");
  std::remove(path.c_str());
  auto bad = nvscope::write_file("no_such_dir_nvscope/x.txt", "data");
  CHECK_FALSE(bad);
  CHECK(bad.error.find("no_such_dir_nvscope/x.txt") != std::string::npos);
  CHECK(bad.error.find("No such file") != std::string::npos);
  if (::access("/dev/full", W_OK) == 0) {
    auto full = nvscope::write_file("/dev/full", std::string(1 << 16, 'x'));
    CHECK_FALSE(full);
    CHECK(full.error.find("/dev/full") != std::string::npos);
  }
  auto pat = nvscope::write_output("a%z", "x");
  CHECK_FALSE(pat);
  CHECK(pat.error.find("'%z'") != std::string::npos);
}

// Issue 13: hostile patterns, values and files (items 2, 3, 8 and 9).
namespace {

// A scratch folder under the working folder, removed on exit.
struct scratch {
  std::filesystem::path dir = std::filesystem::absolute("nvscope_output_test_" + std::to_string(::getpid()));
  scratch() {
    std::filesystem::remove_all(dir);
    std::filesystem::create_directory(dir);
  }
  ~scratch() { std::filesystem::remove_all(dir); }
  std::string operator/(const std::string& name) const { return (dir / name).string(); }
  std::size_t entries() const {
    return static_cast<std::size_t>(std::distance(std::filesystem::directory_iterator(dir), {}));
  }
};

void put(const std::string& path, const std::string& content) { std::ofstream(path, std::ios::binary) << content; }

bool one_printable_line(const std::string& s) {
  for (char c : s)
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e) return false;
  return true;
}

} // namespace

TEST_CASE("a NUL byte in a pattern is refused, not cut short") {
  const std::string pattern("safe\0../x.csv", 13);
  const auto p = nvscope::expand_output_path(pattern);
  CHECK_FALSE(p);
  CHECK(p.path.empty());
  CHECK(p.error.find("NUL") != std::string::npos);
  CHECK(p.error.find("position 4") != std::string::npos);
  CHECK(one_printable_line(p.error));
  const auto w = nvscope::write_file(std::string("safe\0x", 6), "data");
  CHECK_FALSE(w);
  CHECK(one_printable_line(w.error));
  CHECK(::access("safe", F_OK) != 0);
}

TEST_CASE("errors quoting a pattern, a value or a path stay on one line") {
  auto p = nvscope::expand_output_path("x\ny%z");
  CHECK_FALSE(p);
  CHECK(p.error.find("x\\x0ay") != std::string::npos);
  CHECK(one_printable_line(p.error));
  ::setenv("NVSCOPE_TEST_NL", "a\nb\x1b[31m", 1);
  auto w = nvscope::write_output("no_such_dir_nvscope/%q{NVSCOPE_TEST_NL}.csv", "x");
  CHECK_FALSE(w);
  CHECK(w.error.find("a\\x0ab\\x1b[31m") != std::string::npos);
  CHECK(one_printable_line(w.error));
  w = nvscope::write_file("no_such_dir_nvscope/x\r\ny.csv", "x");
  CHECK_FALSE(w);
  CHECK(one_printable_line(w.error));
  p = nvscope::expand_output_path(std::string(100000, '\n') + "%z");
  CHECK(one_printable_line(p.error));
  CHECK(p.error.size() < 1400);
  ::unsetenv("NVSCOPE_TEST_NL");
}

TEST_CASE("values cannot move an output out of the folder the pattern names") {
  const char* const refused[][2] = {
      {"../../etc/passwd", "out/%q{NVSCOPE_TEST_V}.csv"}, // a '/' in a value
      {"/abs", "%q{NVSCOPE_TEST_V}"},
      {"..", "out/%q{NVSCOPE_TEST_V}/x.csv"},              // a whole component
      {"..", "%q{NVSCOPE_TEST_V}"},
      {".", "a/%q{NVSCOPE_TEST_V}%q{NVSCOPE_TEST_V}/x"},  // two values making ".."
      {".", "a/.%q{NVSCOPE_TEST_V}/x"},                    // pattern text and a value making ".."
  };
  for (const auto& c : refused) {
    CAPTURE(c[0]);
    CAPTURE(c[1]);
    ::setenv("NVSCOPE_TEST_V", c[0], 1);
    const auto p = nvscope::expand_output_path(c[1]);
    CHECK_FALSE(p);
    CHECK(p.path.empty());
    CHECK(p.error.find("folder") != std::string::npos);
    CHECK(one_printable_line(p.error));
  }
  clear_ranks();
  ::setenv("RANK", "0/../..", 1);
  CHECK_FALSE(nvscope::expand_output_path("r%r.csv"));
  clear_ranks();
  // Allowed: dots inside a name, and the pattern's own folders (the user wrote them).
  ::setenv("NVSCOPE_TEST_V", "..x", 1);
  CHECK(nvscope::expand_output_path("out/%q{NVSCOPE_TEST_V}.csv").path == "out/..x.csv");
  ::setenv("NVSCOPE_TEST_V", "run1", 1);
  CHECK(nvscope::expand_output_path("../%q{NVSCOPE_TEST_V}/./t.json").path == "../run1/./t.json");
  CHECK(nvscope::expand_output_path("a/%%/..").path == "a/%/..");
  ::unsetenv("NVSCOPE_TEST_V");
}

TEST_CASE("a failed write keeps the previous file (file size limit as the failing disk)") {
  scratch s;
  const std::string path = s / "trace.json";
  put(path, "previous good profile\n");
  struct ::rlimit old_limit {};
  REQUIRE(::getrlimit(RLIMIT_FSIZE, &old_limit) == 0);
  struct ::rlimit small = old_limit;
  small.rlim_cur = 4096;
  auto* old_handler = std::signal(SIGXFSZ, SIG_IGN); // EFBIG instead of death
  REQUIRE(::setrlimit(RLIMIT_FSIZE, &small) == 0);
  const auto w = nvscope::write_file(path, std::string(1 << 16, 'x'));
  ::setrlimit(RLIMIT_FSIZE, &old_limit);
  std::signal(SIGXFSZ, old_handler);
  CHECK_FALSE(w);
  CHECK(w.error.find("trace.json") != std::string::npos);
  CHECK(w.error.find("previous file is kept") != std::string::npos);
  CHECK(nvscope_test::file_text(path) == "previous good profile\n");
  CHECK(s.entries() == 1); // no temporary file left behind
  // And a write that succeeds replaces it whole, keeping its permissions.
  REQUIRE(::chmod(path.c_str(), 0600) == 0);
  REQUIRE(nvscope::write_file(path, "new\n"));
  CHECK(nvscope_test::file_text(path) == "new\n");
  struct ::stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  CHECK(s.entries() == 1);
}

TEST_CASE("a symbolic link planted at the output name is not followed") {
  scratch s;
  const std::string victim = s / "victim.txt";
  put(victim, "keep me\n");
  ::setenv("NVSCOPE_TEST_V", "planted", 1);
  const std::string link = s / "trace_planted.json";
  REQUIRE(::symlink(victim.c_str(), link.c_str()) == 0);
  const auto w = nvscope::write_output(s / "trace_%q{NVSCOPE_TEST_V}.json", "{}");
  CHECK_FALSE(w);
  CHECK(w.error.find("symbolic link") != std::string::npos);
  CHECK(nvscope_test::file_text(victim) == "keep me\n");
  // A dangling link (the target does not exist yet) is not followed either.
  const std::string dangling = s / "dangling.json";
  REQUIRE(::symlink((s / "created_by_link.txt").c_str(), dangling.c_str()) == 0);
  CHECK_FALSE(nvscope::write_file(dangling, "x"));
  CHECK(::access((s / "created_by_link.txt").c_str(), F_OK) != 0);
  ::unsetenv("NVSCOPE_TEST_V");
}

TEST_CASE("folders are refused, devices are written in place") {
  scratch s;
  const auto w = nvscope::write_file(s.dir.string(), "x");
  CHECK_FALSE(w);
  CHECK(w.error.find("directory") != std::string::npos);
  CHECK_FALSE(nvscope::write_file(s / "sub/", "x"));
  CHECK(nvscope::write_file("/dev/null", "x"));
  CHECK(s.entries() == 0);
}

TEST_CASE("a NUL inside %q{...} is refused too (found by the fuzzer: getenv read a shorter name)") {
  ::setenv("NVSCOPE_TEST_V", "a/b", 1);
  const auto p = nvscope::expand_output_path(std::string("x_%q{NVSCOPE_TEST_V\0junk}.csv", 29));
  CHECK_FALSE(p);
  CHECK(p.error.find("NUL") != std::string::npos);
  CHECK(one_printable_line(p.error));
  ::unsetenv("NVSCOPE_TEST_V");
}

TEST_CASE("write_file_from: pieces in order; a failed write stops the producer and keeps the old file") {
  scratch s;
  const std::string path = s / "stream.json";
  REQUIRE(nvscope::write_file_from(path, [](auto&& emit) {
    for (int i = 0; i < 1000; ++i) emit(std::to_string(i) + ",");
  }));
  std::string expected;
  for (int i = 0; i < 1000; ++i) expected += std::to_string(i) + ",";
  CHECK(nvscope_test::file_text(path) == expected);
  CHECK(s.entries() == 1);
  // The disk fills (a 4 KiB file size limit) at the fifth 1 KiB piece: emit says so, the
  // producer stops, the message counts what went out (the total is not known), the old file stays.
  struct ::rlimit old_limit {};
  REQUIRE(::getrlimit(RLIMIT_FSIZE, &old_limit) == 0);
  struct ::rlimit small = old_limit;
  small.rlim_cur = 4096;
  auto* old_handler = std::signal(SIGXFSZ, SIG_IGN);
  REQUIRE(::setrlimit(RLIMIT_FSIZE, &small) == 0);
  int pieces = 0;
  const auto w = nvscope::write_file_from(path, [&](auto&& emit) {
    for (int i = 0; i < 64; ++i, ++pieces)
      if (!emit(std::string(1024, 'x'))) return;
  });
  ::setrlimit(RLIMIT_FSIZE, &old_limit);
  std::signal(SIGXFSZ, old_handler);
  CHECK_FALSE(w);
  CHECK(pieces == 4);
  CHECK(w.error.find("failed after 4096 bytes:") != std::string::npos);
  CHECK(w.error.find("previous file is kept") != std::string::npos);
  CHECK(one_printable_line(w.error));
  CHECK(nvscope_test::file_text(path) == expected);
  CHECK(s.entries() == 1);
}

TEST_CASE("write_file_from: a producer that throws leaves the old file and no temporary one") {
  scratch s;
  const std::string path = s / "trace.json";
  put(path, "previous\n");
  CHECK_THROWS_AS(nvscope::write_file_from(path,
                                           [](auto&& emit) {
                                             emit("half a ");
                                             throw std::runtime_error("producer failed");
                                           }),
                  std::runtime_error);
  CHECK(nvscope_test::file_text(path) == "previous\n");
  CHECK(s.entries() == 1);
  // Written in place on a device, the exception goes on too.
  CHECK_THROWS_AS(nvscope::write_file_from("/dev/null", [](auto&&) { throw std::runtime_error("x"); }), std::runtime_error);
}

namespace {
// Runs `body` in a child process (its own copy of the signal dispositions and limits): its
// return value, or 128 + the signal that ended it; SIGALRM ends a child that waits 5 s.
int in_child(const std::function<int()>& body) {
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::alarm(5);
    int status = 125; // it threw
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
} // namespace

TEST_CASE("check_output_pattern: the syntax alone, reading no value; the expansion gives its error (issue 45)") {
  clear_ranks();
  ::unsetenv("NVSCOPE_TEST_UNSET_VAR");
  for (const char* good : {"prof_%p", "r%r_%h", "x_%q{NVSCOPE_TEST_UNSET_VAR}", "%%", "../runs/%p/t", "a%q{A}%q{B}"})
    CHECK_MESSAGE(nvscope::check_output_pattern(good), good);
  struct bad {
    std::string pattern;
    std::size_t position;
    const char* why;
  } cases[] = {
      {"prof_%z", 5, "unknown specifier '%z' (known: %p %h %r %q{VAR} %%)"},
      {"prof_%", 5, "'%' at the end (write '%%' for a percent sign)"},
      {"out_%q{RUN", 4, "'%q{' has no closing '}'"},
      {"%qRUN", 0, "'%q' must be followed by {VARIABLE}"},
      {"x%q{}", 1, "'%q{}' names no variable"},
      {"", 0, "the path is empty"},
      {std::string("a\0b", 3), 1, "a NUL byte (a file name cannot hold one)"},
      {"r%r_%q{NVSCOPE_TEST_UNSET_VAR}_%y", 31, "unknown specifier '%y' (known: %p %h %r %q{VAR} %%)"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.pattern);
    const auto s = nvscope::check_output_pattern(c.pattern);
    CHECK_FALSE(s);
    CHECK(s.position == c.position);
    CHECK(s.why == c.why);
    // The same line from the expansion, even where a value (no rank, an unset variable) fails first.
    const auto e = nvscope::expand_output_path(c.pattern);
    CHECK_FALSE(e);
    CHECK(e.error.find("at position " + std::to_string(c.position) + ": " + c.why) != std::string::npos);
  }
  CHECK(nvscope::expand_output_path("prof_%z").error ==
        "nvscope: bad output path pattern 'prof_%z' at position 5: unknown specifier '%z' (known: %p %h %r %q{VAR} %%)");
}

TEST_CASE("a FIFO planted at the output name is refused at once, never waited on (issue 45)") {
  scratch s;
  const std::string fifo = s / "nvscope_1234.json", said = s / "said";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // In a child: before the fix the open waited for a reader forever (SIGALRM here).
  const int status = in_child([&] {
    const auto a = nvscope::write_file(fifo, "{}");
    const auto b = nvscope::write_file_from(fifo, [](auto&& emit) { emit("{}"); });
    std::ofstream(said) << a.error << "\n" << b.error << "\n";
    return a || b ? 1 : 0;
  });
  CHECK(status == 0);
  const std::string line = "nvscope: cannot write '" + nvscope::detail::escape_input(fifo, 256) +
                           "': it is a FIFO (named pipe), which nvscope does not write: a reader may never come (name a "
                           "regular file)\n";
  CHECK(nvscope_test::file_text(said) == line + line);
  CHECK(s.entries() == 2); // the FIFO and `said`: no temporary file
}

TEST_CASE("a file size limit with SIGXFSZ at its default: the error line, not the signal's death (issue 45)") {
  scratch s;
  const std::string path = s / "trace.json", said = s / "said";
  put(path, "previous good profile\n");
  const int status = in_child([&] {
    std::signal(SIGXFSZ, SIG_DFL); // as every program starts
    struct ::rlimit limit {};
    ::getrlimit(RLIMIT_FSIZE, &limit);
    const struct ::rlimit old = limit;
    limit.rlim_cur = 4096;
    if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) return 3;
    const auto whole = nvscope::write_file(path, std::string(1 << 16, 'x'));
    const auto pieces = nvscope::write_file_from(path, [](auto&& emit) {
      for (int i = 0; i < 64; ++i)
        if (!emit(std::string(1024, 'x'))) return;
    });
    ::setrlimit(RLIMIT_FSIZE, &old);
    struct ::sigaction now {};
    ::sigaction(SIGXFSZ, nullptr, &now);
    sigset_t mask, pending;
    ::pthread_sigmask(SIG_BLOCK, nullptr, &mask);
    ::sigpending(&pending);
    std::ofstream(said) << whole.error << "\n" << pieces.error << "\n"
                        << (now.sa_handler == SIG_DFL ? "default" : "changed") << " "
                        << (sigismember(&mask, SIGXFSZ) ? "blocked" : "unblocked") << " "
                        << (sigismember(&pending, SIGXFSZ) ? "pending" : "none pending") << "\n";
    return 0;
  });
  CHECK(status == 0); // before the fix: 128 + SIGXFSZ, the temporary file left behind
  const std::string shown = nvscope::detail::escape_input(path, 256);
  CHECK(nvscope_test::file_text(said) ==
        "nvscope: writing '" + shown + "' failed after 4096 of 65536 bytes: File too large; the previous file is kept\n"
        "nvscope: writing '" + shown + "' failed after 4096 bytes: File too large; the previous file is kept\n"
        "default unblocked none pending\n");
  CHECK(nvscope_test::file_text(path) == "previous good profile\n");
  CHECK(s.entries() == 2); // trace.json and `said`: no temporary file left
}

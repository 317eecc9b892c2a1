// nvscope-target: nvscope
#pragma once

/// \file export/output_path.hpp
/// Output file names with nsys-style patterns, and file writing that never loses the old
/// file and never follows a planted link.
///
/// Patterns: `%p` process id, `%h` host name, `%r` rank (first set of OMPI_COMM_WORLD_RANK,
/// PMI_RANK, SLURM_PROCID, RANK, LOCAL_RANK; an error when none is), `%q{VAR}` the
/// environment variable VAR (an error when unset), `%%` a percent sign. Anything else after
/// `%` is an error naming the bad part, and so is a NUL byte. Folders come from the pattern
/// alone: a value (`%h`, `%r`, `%q{VAR}`) holding `/`, or making a whole path component `.`
/// or `..`, is refused, so the environment cannot move an output out of the folder the
/// pattern names. docs/output.md has the whole contract.
///
/// `write_file` writes a temporary file beside the target and renames it into place: a
/// failed write (full disk, file size limit) leaves the previous file as it was. It refuses
/// a symbolic link at the final component instead of following it, and a FIFO instead of
/// waiting for its reader. `check_output_pattern` checks a pattern's syntax alone, before
/// any value is known.
///
/// \code
///   auto p = nvscope::expand_output_path("trace_%h_%p_rank%r.json");
///   if (!p) { std::fprintf(stderr, "%s\n", p.error.c_str()); return; }
///   auto w = nvscope::write_file(p.path, json);
///   if (!w) std::fprintf(stderr, "%s\n", w.error.c_str());  // "nvscope: cannot write 'x': No such file or directory"
/// \endcode

#include <nvscope/detail/quote.hpp>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include <csignal>
#include <ctime>

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

namespace nvscope {
inline namespace v1 {

/// An expanded path, or a one-line error.
struct path_result {
  std::string path;
  std::string error; ///< empty on success
  bool ok() const noexcept { return error.empty(); }
  explicit operator bool() const noexcept { return ok(); }
};

/// Success, or a one-line error naming the file and the system's reason.
struct write_result {
  std::string error;
  bool ok() const noexcept { return error.empty(); }
  explicit operator bool() const noexcept { return ok(); }
};

/// The launcher variables `%r` reads, in this order.
inline constexpr const char* rank_variables[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID", "RANK", "LOCAL_RANK"};

/// `rank_variables` in the order `%r` tries them, comma-separated: the one list help and
/// messages print.
inline std::string rank_variable_list() {
  std::string s;
  for (const char* name : rank_variables) s += (s.empty() ? "" : ", ") + std::string(name);
  return s;
}

namespace detail {

// User input quoted in an error line: at most this many characters of it.
inline constexpr std::size_t path_echo_limit = 256;

// One specifier's value, or why it has none; `end` is the last pattern byte it used.
struct specifier_value {
  std::string value;
  std::string why; ///< empty when `value` holds
  std::size_t end = 0;
};

inline specifier_value host_name_value() {
  specifier_value v;
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) v.why = std::string("%h: cannot read the host name: ") + std::strerror(errno);
  else v.value = host;
  return v;
}

inline specifier_value rank_value() {
  specifier_value v;
  for (const char* name : rank_variables)
    if (const char* value = std::getenv(name); value != nullptr && *value) {
      v.value = value;
      return v;
    }
  v.why = "%r: no rank variable is set (" + rank_variable_list() + ")";
  return v;
}

// One specifier of a pattern as the syntax reads it: its letter ('%', 'p', 'h', 'r', 'q'),
// the variable's name for %q{VAR}, the last pattern byte it takes; or why it is malformed.
// The one parser of patterns: check_output_pattern and expand_output_path both read through it.
struct specifier {
  char kind = 0;
  std::string_view variable;
  std::size_t end = 0;
  std::string why; ///< empty when well formed
};

// The specifier whose '%' is at pattern[percent].
inline specifier parse_specifier(std::string_view pattern, std::size_t percent) {
  specifier s;
  const std::size_t k = percent + 1;
  if (k >= pattern.size()) {
    s.why = "'%' at the end (write '%%' for a percent sign)";
    return s;
  }
  s.kind = pattern[k];
  s.end = k;
  if (s.kind == '%' || s.kind == 'p' || s.kind == 'h' || s.kind == 'r') return s;
  if (s.kind != 'q') {
    s.why = "unknown specifier '%" + escape_input(pattern.substr(k, 1), 8) + "' (known: %p %h %r %q{VAR} %%)";
    return s;
  }
  if (k + 1 >= pattern.size() || pattern[k + 1] != '{') {
    s.why = "'%q' must be followed by {VARIABLE}";
    return s;
  }
  const auto close = pattern.find('}', k + 2);
  if (close == std::string_view::npos) {
    s.why = "'%q{' has no closing '}'";
    return s;
  }
  s.variable = pattern.substr(k + 2, close - k - 2);
  s.end = close;
  if (s.variable.empty()) s.why = "'%q{}' names no variable";
  return s;
}

// A well-formed specifier's value, or why it has none (read at the moment of expansion).
inline specifier_value value_of(const specifier& s) {
  specifier_value v;
  switch (s.kind) {
    case '%': v.value = "%"; break;
    case 'p': v.value = std::to_string(static_cast<long long>(::getpid())); break;
    case 'h': v = host_name_value(); break;
    case 'r': v = rank_value(); break;
    default: {
      const std::string name(s.variable);
      if (const char* value = std::getenv(name.c_str())) v.value = value;
      else v.why = "%q{" + escape_input(name, 64) + "}: environment variable " + escape_input(name, 64) + " is not set";
    }
  }
  v.end = s.end;
  return v;
}

// A value may not name a folder: no '/' (folders come from the pattern alone).
inline std::string value_problem(std::string_view spec, std::string_view value) {
  if (value.find('/') == std::string_view::npos) return {};
  return escape_input(spec, 64) + " is '" + escape_input(value, 64) +
         "', which holds '/': a value may not name a folder (put folders in the pattern)";
}

// Tracks the path component being built: whether a value went into it, and where it began.
struct component_check {
  std::size_t begin = 0;
  bool from_value = false;

  // Called at each '/' of the pattern and at the end: a component a value made "." or ".."
  // would climb out of (or stay in) a folder the pattern did not name.
  bool climbs(const std::string& path) const {
    const std::string_view c = std::string_view(path).substr(begin);
    return from_value && (c == "." || c == "..");
  }
};

inline path_result pattern_error(std::string_view pattern, std::size_t at, const std::string& why) {
  return {{}, "nvscope: bad output path pattern '" + escape_input(pattern, path_echo_limit) + "' at position " +
                  std::to_string(at) + ": " + why};
}

} // namespace detail

/// Where a pattern's syntax is wrong and why; `why` is empty when it is well formed.
struct pattern_syntax {
  std::size_t position = 0;
  std::string why;
  bool ok() const noexcept { return why.empty(); }
  explicit operator bool() const noexcept { return ok(); }
};

/// Checks a pattern's syntax alone, through the parser `expand_output_path` uses, reading no
/// value (no pid, host, rank or variable is looked up): so a tool can refuse a bad pattern
/// before a long run instead of losing its files at the end. A pattern it accepts can fail
/// to expand only for a value (`%r` with no rank set, an unset `%q{VAR}`, a value holding
/// `/`, an empty result); one it refuses fails to expand with the same position and reason.
/// \code
///   auto s = nvscope::check_output_pattern("prof_%z");  // s.position == 5
///   if (!s) std::fprintf(stderr, "bad pattern at %zu: %s\n", s.position, s.why.c_str());
/// \endcode
inline pattern_syntax check_output_pattern(std::string_view pattern) {
  // Anywhere, a variable's name included: getenv would read the name only up to it.
  if (const auto nul = pattern.find('\0'); nul != std::string_view::npos)
    return {nul, "a NUL byte (a file name cannot hold one)"};
  if (pattern.empty()) return {0, "the path is empty"};
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%') continue;
    const auto s = detail::parse_specifier(pattern, i);
    if (!s.why.empty()) return {i, s.why};
    i = s.end;
  }
  return {};
}

/// Expands `%p`, `%h`, `%r`, `%q{VAR}` and `%%` in `pattern` (see the file comment); a
/// malformed pattern gives `check_output_pattern`'s error whatever the environment holds.
/// \code
///   setenv("RUN", "a1", 1);
///   assert(nvscope::expand_output_path("out_%q{RUN}.csv").path == "out_a1.csv");
/// \endcode
inline path_result expand_output_path(std::string_view pattern) {
  using detail::pattern_error;
  if (const auto syntax = check_output_pattern(pattern); !syntax) return pattern_error(pattern, syntax.position, syntax.why);
  path_result r;
  detail::component_check part;
  const auto climbs = [&](std::size_t at) {
    return part.climbs(r.path) ? pattern_error(pattern, at, "a value makes a path component '" +
                                                            r.path.substr(part.begin) + "' (values may not name folders)")
                               : path_result{};
  };
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '/') {
      if (auto e = climbs(i); !e.ok()) return e;
      r.path.push_back(c);
      part = {r.path.size(), false};
      continue;
    }
    if (c != '%') { r.path.push_back(c); continue; }
    const auto v = detail::value_of(detail::parse_specifier(pattern, i));
    if (!v.why.empty()) return pattern_error(pattern, i, v.why);
    const std::string spec(pattern.substr(i, v.end + 1 - i));
    if (auto why = detail::value_problem(spec, v.value); !why.empty()) return pattern_error(pattern, i, why);
    r.path += v.value;
    part.from_value = part.from_value || pattern[i + 1] != '%';
    i = v.end;
  }
  if (auto e = climbs(pattern.size()); !e.ok()) return e;
  if (r.path.empty()) return pattern_error(pattern, 0, "the path is empty");
  return r;
}

namespace detail {

inline write_result cannot_write(std::string_view path, const std::string& why) {
  return {"nvscope: cannot write '" + escape_input(path, path_echo_limit) + "': " + why};
}

// Writes all of `content` to `fd`, going on after short writes and signals. Returns 0, or
// the errno that stopped it; `written` grows by what went out.
inline int write_all(int fd, std::string_view content, std::size_t& written) noexcept {
  for (std::size_t done = 0; done < content.size();) {
    const ::ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n < 0 ? errno : EIO;
    done += static_cast<std::size_t>(n);
    written += static_cast<std::size_t>(n);
  }
  return 0;
}

// What a producer's pieces go to: one descriptor, the bytes written so far, and the first
// error (after which pieces are dropped and emit answers false, so a producer may stop).
struct piece_writer {
  int fd;
  std::size_t written = 0;
  int error = 0;
  bool emit(std::string_view piece) noexcept {
    if (error == 0) error = write_all(fd, piece, written);
    return error == 0;
  }
};

// Calls produce(emit) with `fd` as the pieces' destination. If produce throws, `fd` is closed
// and `remove` (a temporary file, or null) removed before the exception goes on.
template <class Produce>
piece_writer produce_into(int fd, Produce& produce, const char* remove) {
  piece_writer w{fd};
  try {
    produce([&w](std::string_view piece) { return w.emit(piece); });
  } catch (...) {
    ::close(fd);
    if (remove != nullptr) ::unlink(remove);
    throw;
  }
  return w;
}

// `total`: the content's size when known beforehand (write_file), else unknown_size.
constexpr std::size_t unknown_size = static_cast<std::size_t>(-1);

inline write_result failed_after(std::string_view path, std::size_t written, std::size_t total, int error) {
  return {"nvscope: writing '" + escape_input(path, path_echo_limit) + "' failed after " + std::to_string(written) +
          (total == unknown_size ? std::string() : " of " + std::to_string(total)) + " bytes: " + std::strerror(error)};
}

// A character device (/dev/null) is written where it is: there is no file to keep and nothing
// to rename. Opened without waiting (O_NONBLOCK: a terminal line or a FIFO swapped in after
// the lstat never holds the open), and refused unless it still is a character device.
template <class Produce>
write_result write_in_place(const std::string& path, Produce& produce, std::size_t total) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) return cannot_write(path, std::strerror(errno));
  struct ::stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISCHR(st.st_mode)) {
    ::close(fd);
    return cannot_write(path, "it changed while being opened and is no longer a device");
  }
  const piece_writer w = produce_into(fd, produce, nullptr);
  const int closed = ::close(fd) == 0 ? 0 : errno;
  if (w.error || closed) return failed_after(path, w.written, total, w.error ? w.error : closed);
  return {};
}

// While alive, SIGXFSZ is blocked in the calling thread: a write past the file size limit
// (RLIMIT_FSIZE, `ulimit -f`) then fails with EFBIG, and the failed-write path (temporary
// file removed, old file kept, one line) runs instead of the signal's default, which kills
// the process mid-write. The signal such a write raised is taken off before the thread's
// mask is restored, unless one was already pending before (that one stays the caller's). A
// per-thread mask, not the process' disposition: another thread's handler is left alone.
class file_size_signal_held {
 public:
  file_size_signal_held() noexcept {
    sigemptyset(&xfsz_);
    sigaddset(&xfsz_, SIGXFSZ);
    ::pthread_sigmask(SIG_BLOCK, &xfsz_, &old_);
    sigset_t pending;
    sigemptyset(&pending);
    pending_before_ = ::sigpending(&pending) == 0 && sigismember(&pending, SIGXFSZ) == 1;
  }
  ~file_size_signal_held() {
    if (!pending_before_) {
      const struct ::timespec now {};
      while (::sigtimedwait(&xfsz_, nullptr, &now) == SIGXFSZ) {}
    }
    ::pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  file_size_signal_held(const file_size_signal_held&) = delete;
  file_size_signal_held& operator=(const file_size_signal_held&) = delete;

 private:
  sigset_t xfsz_, old_;
  bool pending_before_ = false;
};

// "dir/.name.nvscope-PID-N.tmp" beside `path`, created exclusively (never an existing file
// or a link planted at that name). Returns the descriptor, or -1 with errno set.
inline int create_temporary(const std::string& path, std::string& temp) {
  static std::atomic<unsigned> counter{0};
  const auto slash = path.rfind('/');
  const std::string folder = slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
  const std::string base = path.substr(folder.size(), 96); // room for the suffix within NAME_MAX
  for (int attempt = 0; attempt < 64; ++attempt) {
    temp = folder + "." + base + ".nvscope-" + std::to_string(static_cast<long long>(::getpid())) + "-" +
           std::to_string(counter.fetch_add(1)) + ".tmp";
    const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  errno = EEXIST;
  return -1;
}

// Temporary file beside `path`, written, flushed to the disk, then renamed over `path`:
// whatever fails (a producer that throws included: the exception goes on, the temporary file
// is removed), `path` is either the old file or the new one, never a cut one.
template <class Produce>
write_result replace_file(const std::string& path, Produce& produce, std::size_t total, const struct ::stat* old) {
  std::string temp;
  const int fd = create_temporary(path, temp);
  if (fd < 0) return cannot_write(path, std::string("cannot create a temporary file beside it: ") + std::strerror(errno));
  if (old != nullptr) (void)::fchmod(fd, old->st_mode & 07777); // keep the old file's permissions
  const piece_writer w = produce_into(fd, produce, temp.c_str());
  int error = w.error;
  if (!error && ::fsync(fd) != 0) error = errno;
  if (::close(fd) != 0 && !error) error = errno;
  if (!error && ::rename(temp.c_str(), path.c_str()) != 0) {
    const int rename_error = errno;
    ::unlink(temp.c_str());
    return cannot_write(path, std::string("renaming the temporary file into place failed: ") + std::strerror(rename_error));
  }
  if (error) {
    ::unlink(temp.c_str());
    auto r = failed_after(path, w.written, total, error);
    r.error += old != nullptr ? "; the previous file is kept" : "";
    return r;
  }
  return {};
}

// write_file's checks and its choice of how to write, for any producer of the content.
template <class Produce>
write_result write_file_with(const std::string& path, Produce& produce, std::size_t total) {
  const file_size_signal_held no_death_past_the_size_limit;
  if (path.empty()) return cannot_write(path, "the path is empty");
  if (path.find('\0') != std::string::npos) return cannot_write(path, "the path holds a NUL byte");
  if (path.back() == '/') return cannot_write(path, "the path names a folder, not a file");
  struct ::stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno != ENOENT) return cannot_write(path, std::strerror(errno));
    return replace_file(path, produce, total, nullptr);
  }
  if (S_ISLNK(st.st_mode))
    return cannot_write(path, "it is a symbolic link, which nvscope does not follow (remove it or name another file)");
  if (S_ISDIR(st.st_mode)) return cannot_write(path, std::strerror(EISDIR));
  if (S_ISFIFO(st.st_mode))
    return cannot_write(path, "it is a FIFO (named pipe), which nvscope does not write: a reader may never come "
                              "(name a regular file)");
  if (S_ISCHR(st.st_mode)) return write_in_place(path, produce, total);
  if (!S_ISREG(st.st_mode)) return cannot_write(path, "it is neither a regular file nor a device");
  return replace_file(path, produce, total, &st);
}

} // namespace detail

/// Writes `content` to `path`: a new file, or an existing regular file replaced whole
/// (through a temporary file beside it and a rename, so a failed write keeps the old one).
/// A character device (/dev/null) is written in place. Refused with a one-line error: a
/// symbolic link at the final component (never followed), a FIFO (nothing may wait for a
/// reader), a folder, a path holding a NUL byte. A file size limit gives the error line,
/// never SIGXFSZ's death. Any failure
/// (open, write, flush, rename) names the path and the system's reason.
/// \code
///   if (auto w = nvscope::write_file("kern.csv", csv); !w) std::fputs(w.error.c_str(), stderr);
/// \endcode
inline write_result write_file(const std::string& path, std::string_view content) {
  auto whole = [content](auto&& emit) { emit(content); };
  return detail::write_file_with(path, whole, content.size());
}

/// The same, the content made piece by piece as it is written, never whole in memory:
/// `produce(emit)` calls `emit(std::string_view)` for each piece in order; emit returns false
/// once the write has failed (the pieces after it are dropped: produce may stop early). If
/// produce throws, the exception goes on and the file is as it was (no temporary file left).
/// \code
///   auto w = nvscope::write_file_from("big.csv", [&](auto&& emit) {
///     for (const auto& line : lines) if (!emit(line)) return;
///   });
/// \endcode
template <class Produce>
write_result write_file_from(const std::string& path, Produce&& produce) {
  return detail::write_file_with(path, produce, detail::unknown_size);
}

/// Expands `pattern`, then writes `content` there; the error names whichever step failed.
/// \code
///   auto w = nvscope::write_output("stacks_%p.folded", folded);
/// \endcode
inline write_result write_output(std::string_view pattern, std::string_view content) {
  auto p = expand_output_path(pattern);
  if (!p) return write_result{p.error};
  return write_file(p.path, content);
}

} // namespace v1
} // namespace nvscope

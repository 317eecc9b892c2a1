// nvscope-target: nvscope
#pragma once

/// \file export/output_path.hpp
/// Output file names with nsys-style patterns, and file writing that reports failure.
///
/// Patterns: `%p` process id, `%h` host name, `%r` rank (first set of OMPI_COMM_WORLD_RANK,
/// PMI_RANK, SLURM_PROCID, RANK, LOCAL_RANK; an error when none is), `%q{VAR}` the
/// environment variable VAR (an error when unset), `%%` a percent sign. Anything else after
/// `%` is an error naming the bad part.
///
/// \code
///   auto p = nvscope::expand_output_path("trace_%h_%p_rank%r.json");
///   if (!p) { std::fprintf(stderr, "%s\n", p.error.c_str()); return; }
///   auto w = nvscope::write_file(p.path, json);
///   if (!w) std::fprintf(stderr, "%s\n", w.error.c_str());  // "nvscope: cannot write 'x': No such file or directory"
/// \endcode

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

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

/// Expands `%p`, `%h`, `%r`, `%q{VAR}` and `%%` in `pattern` (see the file comment).
/// \code
///   setenv("RUN", "a1", 1);
///   assert(nvscope::expand_output_path("out_%q{RUN}.csv").path == "out_a1.csv");
/// \endcode
inline path_result expand_output_path(std::string_view pattern) {
  path_result r;
  auto fail = [&](std::size_t at, const std::string& why) {
    r.path.clear();
    r.error = "nvscope: bad output path pattern '" + std::string(pattern) + "' at position " + std::to_string(at) + ": " + why;
    return r;
  };
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c != '%') { r.path.push_back(c); continue; }
    if (i + 1 == pattern.size()) return fail(i, "'%' at the end (write '%%' for a percent sign)");
    const char k = pattern[++i];
    switch (k) {
      case '%': r.path.push_back('%'); break;
      case 'p': r.path += std::to_string(static_cast<long long>(::getpid())); break;
      case 'h': {
        char host[256] = {};
        if (::gethostname(host, sizeof host - 1) != 0) return fail(i - 1, std::string("%h: cannot read the host name: ") + std::strerror(errno));
        r.path += host;
        break;
      }
      case 'r': {
        const char* value = nullptr;
        for (const char* v : rank_variables)
          if ((value = std::getenv(v)) != nullptr && *value) break;
        if (!value || !*value)
          return fail(i - 1, "%r: no rank variable is set (OMPI_COMM_WORLD_RANK, PMI_RANK, SLURM_PROCID, RANK, LOCAL_RANK)");
        r.path += value;
        break;
      }
      case 'q': {
        if (i + 1 >= pattern.size() || pattern[i + 1] != '{') return fail(i - 1, "'%q' must be followed by {VARIABLE}");
        const auto close = pattern.find('}', i + 2);
        if (close == std::string_view::npos) return fail(i - 1, "'%q{' has no closing '}'");
        const std::string name(pattern.substr(i + 2, close - i - 2));
        if (name.empty()) return fail(i - 1, "'%q{}' names no variable");
        const char* value = std::getenv(name.c_str());
        if (!value) return fail(i - 1, "%q{" + name + "}: environment variable " + name + " is not set");
        r.path += value;
        i = close;
        break;
      }
      default: return fail(i - 1, std::string("unknown specifier '%") + k + "' (known: %p %h %r %q{VAR} %%)");
    }
  }
  if (r.path.empty()) return fail(0, "the path is empty");
  return r;
}

/// Writes `content` to `path`, replacing it. Reports any failure (open, write, close) with the
/// path and the system's reason; never loses data silently.
/// \code
///   if (auto w = nvscope::write_file("kern.csv", csv); !w) std::fputs(w.error.c_str(), stderr);
/// \endcode
inline write_result write_file(const std::string& path, std::string_view content) {
  write_result r;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) {
    r.error = "nvscope: cannot write '" + path + "': " + std::strerror(errno);
    return r;
  }
  const auto written = content.empty() ? 0 : std::fwrite(content.data(), 1, content.size(), f);
  const int write_errno = errno;
  const bool short_write = written != content.size();
  const bool close_failed = std::fclose(f) != 0;
  if (short_write || close_failed) {
    r.error = "nvscope: writing '" + path + "' failed after " + std::to_string(written) + " of " +
              std::to_string(content.size()) + " bytes: " + std::strerror(short_write ? write_errno : errno);
  }
  return r;
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

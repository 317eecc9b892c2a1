// nvscope-target: nvscope
#pragma once

/// \file annotate/message.hpp
/// Names of ranges, marks, domains, categories and threads.
///
/// Every name goes through the same rules, so misuse never reaches a tool as undefined
/// behaviour:
/// - a null `const char*` becomes `"(null)"`, an empty name `"(unnamed)"`;
/// - a byte that is not part of valid UTF-8 (and an embedded NUL) becomes `'?'`;
/// - a name longer than `max_name_length` bytes is cut at a character boundary and ends
///   with `"..."`, so the cut is visible.
///
/// `formatted_name` builds a name printf-style in a bounded buffer on the stack (no heap).
///
/// \code
///   nvscope::formatted_name n("layer_%d_attention", layer);   // on the stack
///   nvscope::scoped_range r{n, nvscope::colors::blue};
/// \endcode

#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

#include <nvscope/annotate/detail/mode.hpp>
#include <nvscope/detail/utf8.hpp>

namespace nvscope {
inline namespace v1 {

/// The longest name, in bytes, that nvscope passes to NVTX; longer ones are truncated.
inline constexpr std::size_t max_name_length = 255;

/// A borrowed name: from a `const char*` (null allowed), a `std::string_view` or a
/// `std::string`. Cheap to copy; must not outlive what it points to.
/// \code
///   void traced(nvscope::name_ref what);   // accepts "x", std::string, std::string_view
/// \endcode
class name_ref {
 public:
  constexpr name_ref(const char* s) noexcept // NOLINT: implicit by design
      : data_(s), size_(s ? std::char_traits<char>::length(s) : 0), null_(s == nullptr) {}
  constexpr name_ref(std::string_view s) noexcept // NOLINT
      : data_(s.data()), size_(s.size()), null_(s.data() == nullptr) {}
  name_ref(const std::string& s) noexcept : data_(s.c_str()), size_(s.size()), null_(false) {} // NOLINT

  constexpr const char* data() const noexcept { return data_; }
  constexpr std::size_t size() const noexcept { return size_; }
  constexpr bool is_null() const noexcept { return null_; }

 private:
  const char* data_;
  std::size_t size_;
  bool null_;
};

namespace detail {

/// True when `s` can go to NVTX as it is: not empty, valid UTF-8, no NUL, not too long.
inline bool name_is_clean(const char* s, std::size_t n) noexcept {
  if (n == 0 || n > max_name_length) return false;
  const auto* u = reinterpret_cast<const unsigned char*>(s);
  for (std::size_t i = 0; i < n;) {
    if (u[i] >= 0x20 && u[i] < 0x80) { ++i; continue; }
    const std::size_t len = u[i] == 0 ? 0 : utf8_sequence(u + i, n - i);
    if (len == 0) return false;
    i += len;
  }
  return true;
}

/// Writes the cleaned form of `name` (rules in this file's comment) to `out`,
/// NUL-terminated; `out` holds max_name_length + 1 bytes. Returns the length written.
inline std::size_t sanitize_name(name_ref name, char* out) noexcept {
  const char* s = name.data();
  std::size_t n = name.size();
  if (name.is_null()) { s = "(null)"; n = 6; }
  else if (n == 0) { s = "(unnamed)"; n = 9; }
  const auto* u = reinterpret_cast<const unsigned char*>(s);
  std::size_t o = 0;
  bool truncated = false;
  for (std::size_t i = 0; i < n;) {
    std::size_t len = u[i] == 0 ? 0 : utf8_sequence(u + i, n - i); // a NUL would end the name early
    const bool bad = len == 0;
    if (bad) len = 1;
    if (o + (bad ? 1 : len) > max_name_length) { truncated = true; break; }
    if (bad) out[o++] = '?';
    else { std::memcpy(out + o, s + i, len); o += len; }
    i += len;
  }
  if (truncated) {
    // Make room for "...". Only whole characters were copied, so `o` is a boundary; when it
    // has to move back, step back over the continuation bytes of the character it lands in
    // (bytes out[keep..o) were written: never look at out[o] itself, which was not).
    const std::size_t keep = max_name_length - 3;
    if (o > keep) {
      o = keep;
      while (o > 0 && (static_cast<unsigned char>(out[o]) & 0xC0u) == 0x80u) --o;
    }
    std::memcpy(out + o, "...", 3);
    o += 3;
  }
  out[o] = '\0';
  return o;
}

// GCC: "... [with T = int; U = float]"; Clang: "... [T = int]": the template arguments
// dropped.
inline std::string_view without_template_arguments(std::string_view s) noexcept {
  if (s.empty() || s.back() != ']') return s;
  std::size_t depth = 0;
  for (std::size_t i = s.size(); i-- > 0;) {
    if (s[i] == ']') ++depth;
    else if (s[i] == '[' && --depth == 0) return i > 0 && s[i - 1] == ' ' ? s.substr(0, i - 1) : s;
  }
  return s;
}

// Where the name starts: after the last space at depth 0 that comes before the parameter
// list at depth 0. "operator" spellings (operator<, operator(), operator new) are skipped whole.
inline std::size_t function_name_start(std::string_view s) noexcept {
  std::size_t start = 0;
  int depth = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (s.compare(i, 8, "operator") == 0 && (i == 0 || s[i - 1] == ':' || s[i - 1] == ' ')) {
      std::size_t j = i + 8;
      if (s.compare(j, 2, "()") == 0) j += 2;
      while (j < s.size() && s[j] != '(') ++j;
      i = j - 1;
      continue;
    }
    if (c == '(' || c == '<' || c == '[' || c == '{') {
      if (c == '(' && depth == 0) break; // the outermost parameter list
      ++depth;
    } else if (c == ')' || c == '>' || c == ']' || c == '}') {
      if (depth > 0) --depth;
    } else if (c == ' ' && depth == 0) {
      start = i + 1;
    }
  }
  return start;
}

// Copies `name` to `out` (at most `cap` bytes) with nvcc's spelling of an anonymous
// namespace, "_GLOBAL__N__<hash>_<file>_<n>_main::", shown as GCC shows it, "{anonymous}::".
inline std::size_t copy_with_anonymous_namespaces(std::string_view name, char* out, std::size_t cap) noexcept {
  std::size_t n = 0;
  for (std::size_t i = 0; i < name.size() && n < cap;) {
    if (name.compare(i, 12, "_GLOBAL__N__") == 0) {
      const std::size_t colons = name.find("::", i);
      if (colons != std::string_view::npos && n + 13 <= cap) {
        std::memcpy(out + n, "{anonymous}::", 13);
        n += 13;
        i = colons + 2;
        continue;
      }
    }
    out[n++] = name[i++];
  }
  return n;
}

/// A readable name from __PRETTY_FUNCTION__ (GCC/Clang) or __FUNCSIG__: return type,
/// `static`/`virtual` and template argument lists (`[with T = ...]`) dropped, qualified
/// name and parameter list kept (so overloads differ); lambdas get ` [line N]` so two
/// lambdas of one function differ. Writes at most max_name_length bytes plus a NUL.
inline std::size_t function_name(const char* pretty, int line, char* out) noexcept {
  std::string_view s = pretty ? std::string_view(pretty) : std::string_view("(unknown function)");
  s = without_template_arguments(s);
  const std::string_view name = s.substr(function_name_start(s));
  // A lambda (GCC "<lambda(...)>", Clang "(lambda at ...)" / "(anonymous class)"):
  // the rest of the string is kept; the line tells two lambdas of a function apart.
  const bool lambda = name.find("<lambda") != std::string_view::npos ||
                      name.find("lambda at ") != std::string_view::npos ||
                      name.find("(anonymous class)") != std::string_view::npos;
  char tmp[max_name_length * 2 + 32];
  std::size_t n = copy_with_anonymous_namespaces(name, tmp, max_name_length * 2);
  if (lambda) {
    const int w = std::snprintf(tmp + n, 32, " [line %d]", line);
    if (w > 0) n += static_cast<std::size_t>(w);
  }
  return sanitize_name(name_ref(std::string_view(tmp, n)), out);
}

/// vsnprintf into `out` (max_name_length + 1 bytes), then this file's rules: a result too
/// long is cut with "...", invalid UTF-8 becomes '?'; a null format gives "(null)", a
/// failed one "(bad format)". Returns the length; sets *truncated.
inline std::size_t format_name(char* out, bool* truncated, const char* format, va_list args) noexcept {
  *truncated = false;
  if (format == nullptr) return sanitize_name(name_ref(nullptr), out);
  char raw[max_name_length + 2]; // one byte more than a name: tells "exactly full" from "cut"
  const int written = std::vsnprintf(raw, sizeof(raw), format, args);
  if (written < 0) return sanitize_name(name_ref("(bad format)"), out);
  const auto w = static_cast<std::size_t>(written);
  *truncated = w > max_name_length;
  return sanitize_name(name_ref(std::string_view(raw, w < sizeof(raw) ? w : sizeof(raw) - 1)), out);
}

} // namespace detail

/// A name formatted printf-style into a buffer on the stack (max_name_length + 1 bytes; no
/// heap). A result that does not fit is cut and ends with `"..."`; the cleaning rules of
/// this file apply (invalid UTF-8 becomes `'?'`). The format string is checked by the
/// compiler like printf's.
/// \code
///   nvscope::formatted_name n("step_%d", step);
///   std::puts(n.c_str());
/// \endcode
class formatted_name {
 public:
  explicit formatted_name(const char* format, ...) noexcept NVSCOPE_DETAIL_PRINTF(2, 3) {
    va_list args;
    va_start(args, format);
    size_ = detail::format_name(buffer_, &truncated_, format, args);
    va_end(args);
  }
  formatted_name(const formatted_name&) = delete;
  formatted_name& operator=(const formatted_name&) = delete;

  const char* c_str() const noexcept { return buffer_; }
  std::size_t size() const noexcept { return size_; }
  /// True when the formatted text was longer than max_name_length and was cut.
  bool truncated() const noexcept { return truncated_; }
  operator name_ref() const noexcept { return name_ref(std::string_view(buffer_, size_)); } // NOLINT

 private:
  char buffer_[max_name_length + 1];
  std::size_t size_ = 0;
  bool truncated_ = false;
};

} // namespace v1
} // namespace nvscope

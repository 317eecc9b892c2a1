#pragma once
// Internal, shared by every layer: the one UTF-8 validator. Not promised.

#include <cstddef>
#include <cstdint>

namespace nvscope {
inline namespace v1 {
namespace detail {

// Length (1 to 4) of the well-formed UTF-8 sequence at s[0..n), or 0 when there is none
// (n == 0, a stray or cut continuation byte, an overlong form, a surrogate, a code point
// beyond U+10FFFF). U+0000 is well formed: callers that cannot carry a NUL (NVTX names,
// file names) reject it themselves, callers that can (JSON text) escape it.
constexpr std::size_t utf8_sequence(const unsigned char* s, std::size_t n) noexcept {
  if (n == 0) return 0;
  const unsigned char c = s[0];
  if (c < 0x80) return 1;
  std::size_t len = 0;
  std::uint32_t cp = 0;
  if (c >= 0xC2 && c <= 0xDF) { len = 2; cp = c & 0x1Fu; }
  else if (c >= 0xE0 && c <= 0xEF) { len = 3; cp = c & 0x0Fu; }
  else if (c >= 0xF0 && c <= 0xF4) { len = 4; cp = c & 0x07u; }
  else return 0;
  if (n < len) return 0;
  for (std::size_t i = 1; i < len; ++i) {
    if ((s[i] & 0xC0u) != 0x80u) return 0;
    cp = (cp << 6) | (s[i] & 0x3Fu);
  }
  if ((len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
    return 0;
  return len;
}

// Columns a terminal gives the code point `cp`: 0 for combining marks and zero-width
// characters, 2 for East Asian wide and fullwidth forms and emoji, 1 for the rest (a short
// table of the common blocks, as wcwidth's, not every Unicode property).
constexpr std::size_t code_point_columns(std::uint32_t cp) noexcept {
  if ((cp >= 0x300 && cp <= 0x36F) || (cp >= 0x200B && cp <= 0x200F) || (cp >= 0x20D0 && cp <= 0x20FF) ||
      (cp >= 0xFE00 && cp <= 0xFE0F))
    return 0;
  if ((cp >= 0x1100 && cp <= 0x115F) || (cp >= 0x2E80 && cp <= 0x303E) || (cp >= 0x3041 && cp <= 0x33FF) ||
      (cp >= 0x3400 && cp <= 0x4DBF) || (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0xA000 && cp <= 0xA4CF) ||
      (cp >= 0xAC00 && cp <= 0xD7A3) || (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0xFE30 && cp <= 0xFE4F) ||
      (cp >= 0xFF00 && cp <= 0xFF60) || (cp >= 0xFFE0 && cp <= 0xFFE6) || (cp >= 0x1F300 && cp <= 0x1F64F) ||
      (cp >= 0x1F900 && cp <= 0x1F9FF) || (cp >= 0x20000 && cp <= 0x3FFFD))
    return 2;
  return 1;
}

// The code point of the well-formed sequence of `len` bytes at `s` (utf8_sequence's length).
constexpr std::uint32_t utf8_code_point(const unsigned char* s, std::size_t len) noexcept {
  std::uint32_t cp = len == 1 ? s[0] : len == 2 ? (s[0] & 0x1Fu) : len == 3 ? (s[0] & 0x0Fu) : (s[0] & 0x07u);
  for (std::size_t i = 1; i < len; ++i) cp = (cp << 6) | (s[i] & 0x3Fu);
  return cp;
}

// Display columns of s[0..n): each well-formed character as code_point_columns says, each
// byte that starts none (a stray or cut byte, shown by terminals as one replacement mark) 1.
inline std::size_t display_width(const char* s, std::size_t n) noexcept {
  const auto* u = reinterpret_cast<const unsigned char*>(s);
  std::size_t columns = 0;
  for (std::size_t i = 0; i < n;) {
    const std::size_t len = utf8_sequence(u + i, n - i);
    columns += len == 0 ? 1 : code_point_columns(utf8_code_point(u + i, len));
    i += len == 0 ? 1 : len;
  }
  return columns;
}

} // namespace detail
} // namespace v1
} // namespace nvscope

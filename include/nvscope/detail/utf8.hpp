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

} // namespace detail
} // namespace v1
} // namespace nvscope

#pragma once
// Internal, shared by every layer: user input (a spec, a path, a variable's value) echoed
// in a one-line error message. Not promised.

#include <cstddef>
#include <string>
#include <string_view>

namespace nvscope {
inline namespace v1 {
namespace detail {

// `s` as printable ASCII on one line: bytes 0x20..0x7e kept except '"' and '\', every other
// byte (control characters, DEL, anything non-ASCII) as \xNN, so that a log reader sees one
// line whatever the input holds and can tell each byte. At most `limit` characters of `s`'s
// echo, then "..." (a 1 MB value does not make a 4 MB line).
inline std::string escape_input(std::string_view s, std::size_t limit) {
  std::string out;
  out.reserve(s.size() < limit ? s.size() : limit);
  for (const char ch : s) {
    if (out.size() >= limit) {
      out += "...";
      break;
    }
    const auto c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
      out += static_cast<char>(c);
      continue;
    }
    constexpr const char* hex = "0123456789abcdef";
    out += "\\x";
    out += hex[c >> 4];
    out += hex[c & 15];
  }
  return out;
}

} // namespace detail
} // namespace v1
} // namespace nvscope

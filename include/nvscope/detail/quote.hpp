#pragma once
// Internal, shared by every layer: user input (a spec, a path, a variable's value) echoed
// in a one-line error message. Not promised.

#include <nvscope/detail/utf8.hpp>

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

// `s` for a column of a text table a terminal shows: well-formed UTF-8 kept (names in any
// script), but control characters (C0, DEL, the C1 range U+0080..U+009F), bytes that are not
// UTF-8 and '\' written \xNN, so that a name cannot split a row or send the terminal an escape
// sequence, and every byte stays readable. Machine formats (CSV, JSON) quote names instead.
inline std::string printable_name(std::string_view s) {
  constexpr const char* hex = "0123456789abcdef";
  std::string out;
  out.reserve(s.size());
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = utf8_sequence(p + i, s.size() - i);
    const bool control = n == 1 ? p[i] < 0x20 || p[i] == 0x7f || p[i] == '\\' : n == 2 && p[i] == 0xC2 && p[i + 1] < 0xA0;
    if (n != 0 && !control) {
      out.append(s.data() + i, n);
      i += n;
      continue;
    }
    const std::size_t bytes = n == 0 ? 1 : n;
    for (std::size_t k = 0; k < bytes; ++k, ++i) {
      out += "\\x";
      out += hex[p[i] >> 4];
      out += hex[p[i] & 15];
    }
  }
  return out;
}

} // namespace detail
} // namespace v1
} // namespace nvscope

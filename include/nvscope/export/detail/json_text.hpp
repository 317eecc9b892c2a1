#pragma once
// Internal: JSON text helpers shared by the JSON exports. Not promised.

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include <nvscope/detail/utf8.hpp>

namespace nvscope {
inline namespace v1 {
namespace detail {

// Appends s as a quoted JSON string: quotes, backslashes and control characters escaped,
// invalid UTF-8 replaced by U+FFFD.
inline void append_json_string(std::string& out, std::string_view s) {
  out.push_back('"');
  for (std::size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        case '\b': out += "\\b"; break;
        case '\f': out += "\\f"; break;
        default:
          if (c < 0x20 || c == 0x7f) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out += buf;
          } else {
            out.push_back(static_cast<char>(c));
          }
      }
      ++i;
      continue;
    }
    const auto n = utf8_sequence(reinterpret_cast<const unsigned char*>(s.data()) + i, s.size() - i);
    if (n == 0) {
      out += "\\ufffd";
      ++i;
    } else {
      out.append(s.data() + i, n);
      i += n;
    }
  }
  out.push_back('"');
}

inline std::string json_string(std::string_view s) {
  std::string out;
  append_json_string(out, s);
  return out;
}

// A JSON number for a time in microseconds from nanoseconds, exact to the nanosecond.
inline void append_u(std::string& out, std::uint64_t v) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

inline void append_i(std::string& out, std::int64_t v) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

inline void append_us(std::string& out, std::uint64_t ns) {
  append_u(out, ns / 1000);
  const auto frac = static_cast<unsigned>(ns % 1000);
  const char digits[4] = {'.', static_cast<char>('0' + frac / 100), static_cast<char>('0' + frac / 10 % 10),
                          static_cast<char>('0' + frac % 10)};
  out.append(digits, 4);
}

inline void append_f(std::string& out, double v) {
  char buf[64];
  if (!(v == v) || v > 1e300 || v < -1e300) v = 0.0; // no NaN or infinity in JSON
  std::snprintf(buf, sizeof buf, "%.6g", v);
  out += buf;
}

} // namespace detail
} // namespace v1
} // namespace nvscope

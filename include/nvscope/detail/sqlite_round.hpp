#pragma once
// Internal, shared by every layer: a figure rounded as SQLite's round() rounds it, the rule
// nsys's report scripts and recipe rules print and sort by. Not promised.

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

namespace nvscope {
inline namespace v1 {
namespace detail {

// `v` to `decimals` places as SQLite's round() gives it, as text. SQLite rounds the double's
// exact value, and a value exactly halfway (1.25 to one decimal: its binary value is the tie
// itself) away from zero, where printf rounds such a tie to even (1.2). A tie is seen in the
// exact expansion (glibc prints every digit): the digit after the last kept one is 5 and every
// digit after it 0; it is then printed from the next double away from zero, which lies past
// the tie and rounds as SQLite does.
inline std::string sqlite_round_text(double v, int decimals) {
  char buf[400];
  std::snprintf(buf, sizeof buf, "%.*f", decimals + 60, v);
  const char* point = std::strchr(buf, '.');
  bool tie = point != nullptr && point[decimals + 1] == '5';
  for (const char* d = point ? point + decimals + 2 : buf; tie && *d != '\0'; ++d) tie = *d == '0';
  if (tie) v = std::nextafter(v, v < 0 ? -HUGE_VAL : HUGE_VAL);
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

} // namespace detail
} // namespace v1
} // namespace nvscope

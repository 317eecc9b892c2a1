// Name cleaning at its edges: the cut before a multi-byte character, NUL bytes, and the one
// UTF-8 validator every layer shares.
#include <doctest/doctest.h>
#include <nvscope/annotate/message.hpp>
#include <nvscope/detail/utf8.hpp>

#include <cstring>
#include <string>

namespace {

// sanitize_name into a buffer filled with `poison` first: the result must not depend on it.
std::string sanitized(const std::string& name, unsigned char poison) {
  char out[nvscope::max_name_length + 1];
  std::memset(out, poison, sizeof out);
  const auto n = nvscope::detail::sanitize_name(nvscope::name_ref(name), out);
  REQUIRE(n <= nvscope::max_name_length);
  CHECK(out[n] == '\0');
  return std::string(out, n);
}

std::string bytes(std::initializer_list<unsigned char> b) { return std::string(b.begin(), b.end()); }

} // namespace

TEST_CASE("a cut just before a 4-byte character reads only bytes it wrote") {
  const std::string emoji = bytes({0xF0, 0x9F, 0x98, 0x80}); // U+1F600
  // 252 ASCII bytes fill the buffer up to where "..." must go; the next character does not
  // fit, so the loop stops with nothing written at out[252].
  for (std::size_t prefix = 248; prefix <= 254; ++prefix) {
    CAPTURE(prefix);
    const std::string name = std::string(prefix, 'a') + emoji + std::string(40, 'b');
    const std::string zero = sanitized(name, 0x00);
    const std::string cont = sanitized(name, 0x80); // a continuation byte: the old code stepped back over it
    const std::string ff = sanitized(name, 0xFF);
    CHECK(zero == cont);
    CHECK(zero == ff);
    CHECK(zero.size() >= nvscope::max_name_length - 3);
    CHECK(zero.compare(zero.size() - 3, 3, "...") == 0);
    CHECK(nvscope::detail::name_is_clean(zero.data(), zero.size()));
  }
  // The exact cut: 252 'a' then "..." (255 bytes).
  const std::string name = std::string(252, 'a') + emoji + "tail";
  CHECK(sanitized(name, 0x80) == std::string(252, 'a') + "...");
}

TEST_CASE("a cut inside a character steps back to its first byte") {
  const std::string euro = bytes({0xE2, 0x82, 0xAC}); // U+20AC, 3 bytes
  std::string name = std::string(251, 'a') + euro + euro + "zz";
  const std::string s = sanitized(name, 0x80);
  CHECK(s == std::string(251, 'a') + "...");
  name = std::string(249, 'a') + euro + euro + "zz";
  CHECK(sanitized(name, 0x80) == std::string(249, 'a') + euro + "...");
}

TEST_CASE("NUL and invalid bytes become '?', control characters stay") {
  const std::string name = std::string("a\0b", 3) + bytes({0xC0, 0xAF}) + "\tc";
  CHECK(sanitized(name, 0x80) == "a?b??\tc");
  CHECK_FALSE(nvscope::detail::name_is_clean(name.data(), name.size()));
  const std::string nul("x\0y", 3);
  CHECK_FALSE(nvscope::detail::name_is_clean(nul.data(), nul.size()));
  CHECK(nvscope::detail::name_is_clean("x\ty", 3));
}

TEST_CASE("one UTF-8 validator: boundaries of every length") {
  using nvscope::detail::utf8_sequence;
  struct row { std::string s; std::size_t len; };
  const row rows[] = {
      {std::string(1, '\0'), 1},              // NUL is well formed; callers decide
      {bytes({0x7F}), 1},
      {bytes({0xC2, 0x80}), 2},               // U+0080
      {bytes({0xC1, 0xBF}), 0},               // overlong
      {bytes({0xE0, 0x9F, 0xBF}), 0},         // overlong 3-byte
      {bytes({0xE0, 0xA0, 0x80}), 3},         // U+0800
      {bytes({0xED, 0x9F, 0xBF}), 3},         // U+D7FF
      {bytes({0xED, 0xA0, 0x80}), 0},         // surrogate
      {bytes({0xEF, 0xBF, 0xBF}), 3},         // U+FFFF
      {bytes({0xF0, 0x8F, 0xBF, 0xBF}), 0},   // overlong 4-byte
      {bytes({0xF4, 0x8F, 0xBF, 0xBF}), 4},   // U+10FFFF
      {bytes({0xF4, 0x90, 0x80, 0x80}), 0},   // beyond Unicode
      {bytes({0xF5, 0x80, 0x80, 0x80}), 0},
      {bytes({0x80}), 0},                     // stray continuation
      {bytes({0xE2, 0x82}), 0},               // cut
      {bytes({0xE2, 0x28, 0xA1}), 0},         // bad continuation
  };
  for (const auto& r : rows) {
    CAPTURE(r.s.size());
    CHECK(utf8_sequence(reinterpret_cast<const unsigned char*>(r.s.data()), r.s.size()) == r.len);
  }
  const unsigned char one = 'a';
  CHECK(utf8_sequence(&one, 0) == 0);
}

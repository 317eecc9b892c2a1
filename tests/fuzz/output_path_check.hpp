// The properties every output path pattern must keep, whatever the pattern and the values
// of the variables it reads; shared by the libFuzzer target and the corpus replay.
//
// Input layout: "A\0B\0pattern" sets NVSCOPE_FUZZ_A to A and RANK to B (the other rank
// variables unset) and expands the pattern, which may hold NUL bytes itself; an input with
// fewer than two NULs is a pattern alone, with both variables unset.
#pragma once

#include <nvscope/export/output_path.hpp>

#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

namespace fuzz_check {

inline void set_variables(std::string_view input, std::string_view& pattern) {
  for (const char* v : nvscope::rank_variables) ::unsetenv(v);
  ::unsetenv("NVSCOPE_FUZZ_A");
  const auto first = input.find('\0');
  const auto second = first == std::string_view::npos ? first : input.find('\0', first + 1);
  pattern = input;
  if (second == std::string_view::npos) return;
  ::setenv("NVSCOPE_FUZZ_A", std::string(input.substr(0, first)).c_str(), 1);
  ::setenv("RANK", std::string(input.substr(first + 1, second - first - 1)).c_str(), 1);
  pattern = input.substr(second + 1);
}

// The pattern's components as the pattern itself writes them: split at each '/' outside a
// specifier, each specifier replaced by '%' (a stand-in for "a value goes here").
inline std::vector<std::string> pattern_components(std::string_view p) {
  std::vector<std::string> parts(1);
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (p[i] == '/') { parts.emplace_back(); continue; }
    if (p[i] != '%' || i + 1 == p.size()) { parts.back() += p[i]; continue; }
    if (p[i + 1] == 'q' && i + 2 < p.size() && p[i + 2] == '{') {
      const auto close = p.find('}', i + 3);
      i = close == std::string_view::npos ? p.size() : close;
    } else {
      ++i;
    }
    parts.back() += '%';
  }
  return parts;
}

inline std::vector<std::string> split(std::string_view s) {
  std::vector<std::string> parts(1);
  for (const char c : s) {
    if (c == '/') parts.emplace_back();
    else parts.back() += c;
  }
  return parts;
}

// Empty when expand_output_path behaved; otherwise what went wrong.
inline std::string check_output_path(std::string_view input) {
  std::string_view pattern;
  set_variables(input, pattern);
  nvscope::path_result r;
  try {
    r = nvscope::expand_output_path(pattern);
  } catch (...) {
    return "expand_output_path threw";
  }
  // The syntax check and the expansion read through one parser: a refused pattern fails to
  // expand with the same line whatever the values; an accepted one only for a value.
  const auto syntax = nvscope::check_output_pattern(pattern);
  if (!syntax.ok()) {
    if (r.ok()) return "a pattern the syntax check refuses was expanded";
    if (r.error.find("at position " + std::to_string(syntax.position) + ": " + syntax.why) == std::string::npos)
      return "the expansion's error is not the syntax check's";
  } else if (!r.ok()) {
    // The reason ends the line (the pattern, echoed before it, may hold any of these words).
    for (const char* syntax_reason : {"(known: %p %h %r %q{VAR} %%)", "(write '%%' for a percent sign)",
                                      "must be followed by {VARIABLE}", "has no closing '}'", "names no variable",
                                      "(a file name cannot hold one)"}) {
      const std::string tail = syntax_reason;
      if (r.error.size() >= tail.size() && r.error.compare(r.error.size() - tail.size(), tail.size(), tail) == 0)
        return "a pattern the syntax check accepts failed on its syntax";
    }
  }
  if (!r.ok()) {
    if (!r.path.empty()) return "an error with a path";
    if (r.error.rfind("nvscope: ", 0) != 0) return "error does not start with 'nvscope: '";
    for (const char c : r.error)
      if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e) return "error holds a non-printable byte";
    if (r.error.size() > 1500) return "error longer than 1500 bytes";
    return {};
  }
  if (r.path.empty()) return "an empty path accepted";
  if (r.path.find('\0') != std::string::npos) return "a NUL in the path";
  const auto want = pattern_components(pattern);
  const auto got = split(r.path);
  if (got.size() != want.size()) return "values changed the number of folders";
  for (std::size_t k = 0; k < got.size(); ++k)
    if ((got[k] == "." || got[k] == "..") && want[k] != got[k]) return "a value made the component '" + got[k] + "'";
  return {};
}

} // namespace fuzz_check

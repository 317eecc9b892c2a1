// nvscope-target: nvscope
#pragma once

/// \file analyze/step_names.hpp
/// Which range names mark one step of the program (a training iteration, a forward pass).
///
/// \code
///   bool s = nvscope::is_step_name("step_7");           // true
/// \endcode

#include <nvscope/analyze/report.hpp>

#include <string_view>

namespace nvscope {
inline namespace v1 {
namespace detail {

inline bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }

inline bool is_default_step_name(std::string_view s) noexcept {
  if (s.size() < 4) return false;
  auto lower = [](char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; };
  if (lower(s[0]) != 's' || lower(s[1]) != 't' || lower(s[2]) != 'e' || lower(s[3]) != 'p') return false;
  std::size_t i = 4;
  if (i == s.size()) return true;
  if (s[i] == '_' || s[i] == ' ' || s[i] == '-') ++i;
  if (i == s.size()) return false;
  for (; i < s.size(); ++i)
    if (!is_digit(s[i])) return false;
  return true;
}

} // namespace detail

/// True when `name` names a step: equal to `options.step_range`, or, when that is empty,
/// `step`, `step_N`, `step N`, `stepN` in any case.
/// \code
///   nvscope::analysis_options o;
///   o.step_range = "forward";
///   bool s = nvscope::is_step_name("forward", o);      // true
/// \endcode
inline bool is_step_name(std::string_view name, const analysis_options& options = {}) noexcept {
  return options.step_range.empty() ? detail::is_default_step_name(name) : name == options.step_range;
}

} // namespace v1
} // namespace nvscope

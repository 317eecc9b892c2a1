// nvscope-target: nvscope
#pragma once

/// \file analyze/step_names.hpp
/// Which range names mark one step of the program (a training iteration, a forward pass).
/// By default: a step word (`step`, `iteration`, `iter`) and a number, in any case, with an
/// optional separator (`_`, ` `, `#`, `-`, `:`) and any leading words: `step_7`, `step 7`,
/// `Step#3`, `iteration 12`, `Train step 4`, `step7`, and `step` alone. Or exactly
/// `analysis_options::step_range`, or a regular expression (`analysis_options::step_pattern`,
/// ECMAScript, case-insensitive, matching the whole name).
///
/// \code
///   bool s = nvscope::is_step_name("Train step 4");      // true
///   nvscope::step_matcher m(options);                     // compile once, match many
/// \endcode

#include <nvscope/analyze/report.hpp>
#include <nvscope/trace.hpp>

#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

namespace nvscope {
inline namespace v1 {
namespace detail {

inline bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }
inline char ascii_lower(char c) noexcept { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

// `word` at s[i..] in any case.
inline bool has_word_at(std::string_view s, std::size_t i, std::string_view word) noexcept {
  if (s.size() - i < word.size()) return false;
  for (std::size_t k = 0; k < word.size(); ++k)
    if (ascii_lower(s[i + k]) != word[k]) return false;
  return true;
}

// A step word then a number: "step7", "step_7", "Step#3", "iteration 12"; or "step" alone.
inline bool is_step_tail(std::string_view s) noexcept {
  for (std::string_view word : {"iteration", "step", "iter"}) {
    if (!has_word_at(s, 0, word)) continue;
    std::size_t i = word.size();
    if (i == s.size()) return word == "step";
    const char c = s[i];
    if (c == '_' || c == ' ' || c == '#' || c == '-' || c == ':') ++i;
    if (i == s.size()) return false;
    for (; i < s.size(); ++i)
      if (!is_digit(s[i])) return false;
    return true;
  }
  return false;
}

// Every run of digits becomes one 'N': "step_12" -> "step_N", "layer_3.mlp" -> "layer_N.mlp".
inline std::string strip_numbers(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    if (is_digit(s[i])) {
      out.push_back('N');
      while (i < s.size() && is_digit(s[i])) ++i;
    } else {
      out.push_back(s[i++]);
    }
  }
  return out;
}

// The default rule: a step tail, alone or after leading words ("Train step 4", "eval_step_2"),
// or after a lower-case letter where the tail's word begins upper-case (torch.profiler's
// "ProfilerStep#5", "TrainStep12"; not "Footstep3").
inline bool is_default_step_name(std::string_view s) noexcept {
  if (is_step_tail(s)) return true;
  for (std::size_t i = 0; i + 1 < s.size(); ++i) {
    if ((s[i] == ' ' || s[i] == '_' || s[i] == '/') && is_step_tail(s.substr(i + 1))) return true;
    const bool camel = s[i] >= 'a' && s[i] <= 'z' && s[i + 1] >= 'A' && s[i + 1] <= 'Z';
    if (camel && is_step_tail(s.substr(i + 1))) return true;
  }
  return false;
}

} // namespace detail

/// Decides which names are steps under `options`, compiled once. A `step_pattern` that is
/// not a valid regular expression leaves the default rule in force and says so (`error`).
/// \code
///   nvscope::analysis_options o;
///   o.step_pattern = "Epoch \\d+ batch \\d+";
///   nvscope::step_matcher m(o);
///   bool s = m("epoch 2 batch 17");                        // true
/// \endcode
class step_matcher {
 public:
  explicit step_matcher(const analysis_options& options) : exact_(options.step_range) {
    if (!exact_.empty() || options.step_pattern.empty()) return;
    try {
      pattern_.emplace(options.step_pattern, std::regex::ECMAScript | std::regex::icase | std::regex::optimize);
    } catch (const std::regex_error&) {
      error_ = true;
    }
  }
  bool operator()(std::string_view name) const {
    if (!exact_.empty()) return name == exact_;
    if (pattern_) return std::regex_match(name.begin(), name.end(), *pattern_);
    return detail::is_default_step_name(name);
  }
  /// True when `step_pattern` was not a valid regular expression.
  bool error() const noexcept { return error_; }

 private:
  std::string exact_;
  std::optional<std::regex> pattern_;
  bool error_ = false;
};

/// True when `name` names a step under `options` (see step_matcher; compiles the pattern on
/// every call, so prefer a `step_matcher` in loops).
/// \code
///   bool s = nvscope::is_step_name("iteration 12");       // true
/// \endcode
inline bool is_step_name(std::string_view name, const analysis_options& options = {}) { return step_matcher(options)(name); }

/// Per range of `t`: 1 when it is a step range (marks never are). Each distinct name is
/// matched once.
/// \code
///   auto steps = nvscope::step_ranges(t, options);
/// \endcode
inline std::vector<char> step_ranges(const trace& t, const analysis_options& options) {
  const step_matcher match(options);
  std::vector<char> by_name(t.strings.size(), 2), out(t.ranges.size(), 0); // 2: not matched yet
  for (std::size_t i = 0; i < t.ranges.size(); ++i) {
    const auto& r = t.ranges[i];
    if (r.is_mark) continue;
    if (r.name >= by_name.size()) { out[i] = match(t.strings[r.name]); continue; }
    if (by_name[r.name] == 2) by_name[r.name] = match(t.strings[r.name]);
    out[i] = by_name[r.name];
  }
  return out;
}

} // namespace v1
} // namespace nvscope

// nvscope-target: nvscope
#pragma once

/// \file capture/env.hpp
/// A capture schedule from an environment variable, so that a run can be re-targeted
/// without a rebuild. Accepted values (spaces around items are allowed):
///
/// | value                               | meaning                                            |
/// | ----------------------------------- | -------------------------------------------------- |
/// | `skip=5,warmup=1,active=10,repeat=2`| keys `skip` (or `skip_first`), `wait`, `warmup`, `active`, `repeat`; each at most once; `active` required; `repeat` defaults to 1, 0 = forever |
/// | `10-20`                             | steps 10 to 20, both included, once                |
/// | `7`                                 | step 7 alone                                       |
/// | `off`                               | never capture                                      |
///
/// The parser is strict: anything else is reported in one line naming the bad part, and
/// the schedule is off (it never silently captures everything).
///
/// \code
///   // NVSCOPE_CAPTURE="skip=5,warmup=1,active=10,repeat=2" ./train
///   nvscope::capture_schedule schedule(nvscope::capture_options_from_env(
///       "NVSCOPE_CAPTURE", nvscope::schedule_options{}.skip_first(10).active(5)));
/// \endcode

#include <nvscope/capture/backend.hpp>
#include <nvscope/capture/schedule.hpp>
#include <nvscope/capture/detail/state.hpp>
#include <nvscope/detail/quote.hpp>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

namespace nvscope {
inline namespace v1 {

/// The outcome of parsing a capture spec: options, or a reason.
struct capture_spec {
  bool ok = false;
  schedule_options options;   ///< meaningful when ok (disabled for "off")
  std::string error;          ///< when !ok: the bad part, in a few words, one line
};

namespace detail {

inline bool spec_space(char c) noexcept { return c == ' ' || c == '\t'; }

inline std::string_view spec_trim(std::string_view s) noexcept {
  while (!s.empty() && spec_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && spec_space(s.back())) s.remove_suffix(1);
  return s;
}

// Echoes (part of) user input on one line (the SDK's one rule, detail/quote.hpp): printable
// ASCII kept, the rest \xNN, `limit` characters of output at most, then "...".
inline std::string spec_echo(std::string_view s, std::size_t limit = 48) { return escape_input(s, limit); }

// A whole number 0..max_schedule_count, digits only: the schedule's own reading of a count.
inline bool spec_number(std::string_view s, std::uint64_t& out) noexcept { return parse_schedule_count(s, out); }

inline capture_spec spec_fail(std::string why) {
  capture_spec r;
  r.error = std::move(why);
  return r;
}

inline capture_spec parse_step_range(std::string_view s) {
  const std::size_t dash = s.find('-');
  std::uint64_t first = 0, last = 0;
  const std::string_view a = spec_trim(s.substr(0, dash));
  if (!spec_number(a, first))
    return spec_fail("bad step number '" + spec_echo(a) + "' (want a whole number 0.." +
                     std::to_string(max_schedule_count) + ")");
  if (dash == std::string_view::npos) {
    last = first;
  } else {
    const std::string_view b = spec_trim(s.substr(dash + 1));
    if (!spec_number(b, last))
      return spec_fail("bad last step '" + spec_echo(b) + "' in range (want FIRST-LAST, e.g. 10-20)");
    if (last < first)
      return spec_fail("range " + std::to_string(first) + "-" + std::to_string(last) +
                       " ends before it starts");
  }
  if (last - first + 1 > max_schedule_count)
    return spec_fail("range " + std::to_string(first) + "-" + std::to_string(last) +
                     " is longer than " + std::to_string(max_schedule_count) + " steps");
  capture_spec r;
  r.ok = true;
  r.options = schedule_options{}.skip_first(first).active(last - first + 1).repeat(1);
  return r;
}

// The one line a malformed value gives.
inline std::string bad_spec_message(std::string_view var, std::string_view value,
                                    const std::string& why) {
  return "nvscope: " + spec_echo(var, 64) + "=\"" + spec_echo(value, 80) + "\": " + why +
         "; capture is off";
}

} // namespace detail

/// Parses a capture spec (the grammar is in this file's comment). Never throws on bad
/// input: `ok` is false and `error` names the bad part.
///
/// \code
///   auto r = nvscope::parse_capture_spec("skip=5,active=10");
///   if (!r.ok) std::puts(r.error.c_str());
/// \endcode
inline capture_spec parse_capture_spec(std::string_view text) {
  using detail::spec_echo;
  using detail::spec_fail;
  const std::string_view s = detail::spec_trim(text);
  if (s.empty()) return spec_fail("empty value");
  if (s == "off") {
    capture_spec r;
    r.ok = true;
    r.options.enabled(false);
    return r;
  }
  if (s.find('=') == std::string_view::npos) {
    if (s.find_first_not_of("0123456789- \t") != std::string_view::npos)
      return spec_fail("'" + spec_echo(s) + "' is neither KEY=N,... nor FIRST-LAST nor N nor off");
    return detail::parse_step_range(s);
  }

  const char* keys[] = {"skip", "wait", "warmup", "active", "repeat"};
  std::uint64_t values[] = {0, 0, 0, 0, 1};
  bool seen[] = {false, false, false, false, false};
  std::size_t pos = 0;
  while (true) {
    const std::size_t comma = s.find(',', pos);
    const std::string_view item =
        detail::spec_trim(s.substr(pos, comma == std::string_view::npos ? s.npos : comma - pos));
    if (item.empty())
      return spec_fail(comma == std::string_view::npos ? "empty item at the end (trailing ',')"
                                                       : "empty item (two ',' in a row, or a leading ',')");
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos)
      return spec_fail("'" + spec_echo(item) + "' lacks '=N' (want KEY=N)");
    std::string_view key = detail::spec_trim(item.substr(0, eq));
    const std::string_view value = detail::spec_trim(item.substr(eq + 1));
    if (key == "skip_first") key = "skip";
    int k = -1;
    for (int i = 0; i < 5; ++i)
      if (key == keys[i]) k = i;
    if (k < 0)
      return spec_fail("unknown key '" + spec_echo(key) +
                       "' (want skip, wait, warmup, active, repeat)");
    if (seen[k]) return spec_fail("'" + std::string(keys[k]) + "' given twice");
    seen[k] = true;
    if (!detail::spec_number(value, values[k]))
      return spec_fail("bad value '" + spec_echo(value) + "' for " + keys[k] +
                       " (want a whole number 0.." + std::to_string(max_schedule_count) + ")");
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  if (!seen[3]) return spec_fail("no 'active=N' (how many steps to record)");
  if (values[3] == 0) return spec_fail("active=0 records nothing (want active>=1, or 'off')");
  capture_spec r;
  r.ok = true;
  r.options = schedule_options{}.skip_first(values[0]).wait(values[1]).warmup(values[2])
                  .active(values[3]).repeat(values[4]);
  return r;
}

/// The canonical spec of `o` (parses back to the same options, step_ranges aside).
///
/// \code
///   nvscope::to_spec(nvscope::schedule_options{}.active(3)); // "skip=0,wait=0,warmup=0,active=3,repeat=1"
/// \endcode
inline std::string to_spec(const schedule_options& o) {
  if (!o.enabled()) return "off";
  return "skip=" + std::to_string(o.skip_first()) + ",wait=" + std::to_string(o.wait()) +
         ",warmup=" + std::to_string(o.warmup()) + ",active=" + std::to_string(o.active()) +
         ",repeat=" + std::to_string(o.repeat());
}

/// Options from the environment variable `var`: `fallback` when it is unset; the parsed
/// options when it is valid; and when it is malformed, one line on the capture error
/// handler (stderr by default) naming the bad part, and options that never capture.
/// `fallback`'s step_ranges setting is kept in every case.
///
/// \code
///   nvscope::capture_schedule s(nvscope::capture_options_from_env("NVSCOPE_CAPTURE",
///       nvscope::schedule_options{}.enabled(false)));    // off unless the variable says
/// \endcode
inline schedule_options capture_options_from_env(const char* var = "NVSCOPE_CAPTURE",
                                                 schedule_options fallback = {}) {
  const char* value = var ? std::getenv(var) : nullptr;
  if (!value) return fallback;
  capture_spec r = parse_capture_spec(value);
  if (r.ok) return r.options.step_ranges(fallback.step_ranges());
  detail::report_capture_error(
      {capture_errc::bad_schedule, 0, detail::bad_spec_message(var, value, r.error)});
  return schedule_options{}.enabled(false).step_ranges(fallback.step_ranges());
}

} // namespace v1
} // namespace nvscope

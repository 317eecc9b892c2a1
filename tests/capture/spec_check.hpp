// The properties every input to the NVSCOPE_CAPTURE parser must keep; shared by the
// doctest cases, the corpus replay and the libFuzzer fuzzer.
#pragma once

#include <nvscope/capture/env.hpp>

#include <string>
#include <string_view>

namespace capture_test {

// Empty when the parser behaved for `input`; otherwise what went wrong.
inline std::string check_spec(std::string_view input) {
  nvscope::capture_spec r;
  try {
    r = nvscope::parse_capture_spec(input);
  } catch (...) {
    return "parser threw";
  }
  if (r.ok) {
    if (!r.error.empty()) return "ok with an error text";
    const auto& o = r.options;
    if (o.enabled()) {
      if (!o.problem().empty()) return "accepted options that make no sense: " + o.problem();
      if (o.active() < 1) return "accepted active=0";
    }
    const std::string canonical = nvscope::to_spec(o);
    const auto again = nvscope::parse_capture_spec(canonical);
    if (!again.ok) return "canonical form '" + canonical + "' rejected: " + again.error;
    if (again.options != o) return "canonical form '" + canonical + "' parses differently";
    return {};
  }
  if (r.error.empty()) return "rejected without a reason";
  const std::string line = nvscope::detail::bad_spec_message("NVSCOPE_CAPTURE", input, r.error);
  for (char c : line) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 || u > 0x7e) return "error line holds a non-printable byte";
  }
  if (line.size() > 400) return "error line too long";
  if (line.find("capture is off") == std::string::npos) return "error line does not say capture is off";
  return {};
}

} // namespace capture_test

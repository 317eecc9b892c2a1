// nvscope-target: nvscope
#pragma once

// Kernel names in the three forms `nsys stats` offers: demangled as NVIDIA's demangler spells
// it (`__cu_demangle`, from the toolkit's libcufilt.a: what nsys prints), the base name (the
// function's own identifier: no namespace, template arguments, parameters or return type),
// and mangled. libcufilt is a static library: a target that links it defines
// NVSCOPE_HAS_CUFILT=1 (tests/collect/CMakeLists.txt shows how); elsewhere the names are
// spelled as NVIDIA's demangler spells them by nvscope's own reader (nsys_spelling.hpp), and
// a name outside its rules by the C++ runtime's `abi::__cxa_demangle` (`float const*` for
// `const T1 *`, `4` for `(int)4`); the trace says that libcufilt was not there.
//
// The choice lives in an inline namespace named after it, so that units built with and
// without libcufilt never give one inline function two bodies.

#include <nvscope/collect/detail/nsys_spelling.hpp>
#include <nvscope/trace.hpp>

#include <cxxabi.h>

#include <cstddef>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#if defined(NVSCOPE_HAS_CUFILT) && NVSCOPE_HAS_CUFILT
extern "C" char* __cu_demangle(const char* id, char* output_buffer, std::size_t* length, int* status);
#define NVSCOPE_DETAIL_DEMANGLER with_cufilt
#else
#define NVSCOPE_DETAIL_DEMANGLER without_cufilt
#endif

namespace nvscope {
inline namespace v1 {
namespace detail {

// `name` demangled by the C++ runtime, or nullptr; free() the result.
inline char* itanium_demangle(const char* name) noexcept {
  int status = 0;
  char* out = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  if (status != 0 && out != nullptr) {
    std::free(out);
    return nullptr;
  }
  return out;
}

// The spelling without libcufilt: NVIDIA's, where nsys_spelling.hpp's rules read the whole
// name, else the C++ runtime's; a name neither reads comes back as it is.
inline std::string fallback_demangle(const char* mangled) {
  if (std::optional<std::string> nsys = demangle_nsys_spelling(mangled)) return *nsys;
  char* out = itanium_demangle(mangled);
  if (out == nullptr) return mangled;
  std::string s(out);
  std::free(out);
  return s;
}

inline namespace NVSCOPE_DETAIL_DEMANGLER {

// Which demangler this unit's kernel names go through.
inline constexpr name_spelling kernel_name_spelling() noexcept {
#if defined(NVSCOPE_HAS_CUFILT) && NVSCOPE_HAS_CUFILT
  return name_spelling::nvidia;
#else
  return name_spelling::itanium;
#endif
}

// `mangled` demangled; a name that is not mangled (an extern "C" kernel) comes back as it is.
inline std::string demangle_kernel_name(const char* mangled) {
  if (mangled == nullptr) return {};
  if (mangled[0] != '_' || mangled[1] != 'Z') return mangled;
#if defined(NVSCOPE_HAS_CUFILT) && NVSCOPE_HAS_CUFILT
  int status = 0;
  char* out = __cu_demangle(mangled, nullptr, nullptr, &status);
  if (status != 0 || out == nullptr) {
    std::free(out);
    return mangled;
  }
  std::string s(out);
  std::free(out);
  return s;
#else
  return fallback_demangle(mangled);
#endif
}

} // namespace NVSCOPE_DETAIL_DEMANGLER

inline bool opens(char c) noexcept { return c == '(' || c == '<' || c == '['; }
inline bool closes(char c) noexcept { return c == ')' || c == '>' || c == ']'; }

// The position of the bracket that opens the group closing at `close`, or npos. Brackets of
// every kind count as one nesting: in a demangled name they pair up.
inline std::size_t group_start(std::string_view s, std::size_t close) noexcept {
  int depth = 0;
  for (std::size_t i = close + 1; i-- > 0;) {
    if (closes(s[i])) ++depth;
    else if (opens(s[i]) && --depth == 0) return i;
  }
  return std::string_view::npos;
}

// `s` without a bracketed group at its end (parameters, then template arguments).
inline std::string_view drop_trailing_group(std::string_view s, char close) noexcept {
  if (s.empty() || s.back() != close) return s;
  const std::size_t open = group_start(s, s.size() - 1);
  return open == std::string_view::npos || open == 0 ? s : s.substr(0, open);
}

// What follows the last "::" or space outside brackets: the identifier itself.
inline std::string_view last_component(std::string_view s) noexcept {
  int depth = 0;
  std::size_t begin = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (opens(s[i])) ++depth;
    else if (closes(s[i])) --depth;
    else if (depth == 0 && s[i] == ' ') begin = i + 1;
    else if (depth == 0 && s[i] == ':' && i + 1 < s.size() && s[i + 1] == ':') begin = i + 2;
  }
  return s.substr(begin);
}

// The base form of a demangled kernel name, as `nsys stats --report cuda_gpu_kern_sum:base`
// prints it: `void ns::k<float, (int)4>(T1 *, int)` -> `k`. Any spelling of the demangled
// form gives the same base. A name that does not parse comes back whole.
inline std::string_view kernel_base_name(std::string_view demangled) noexcept {
  std::string_view s = demangled;
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  s = drop_trailing_group(s, ')');
  s = drop_trailing_group(s, '>');
  const std::string_view base = last_component(s);
  return base.empty() ? demangled : base;
}

} // namespace detail
} // namespace v1
} // namespace nvscope

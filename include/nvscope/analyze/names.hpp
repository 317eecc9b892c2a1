// nvscope-target: nvscope
#pragma once

/// \file analyze/names.hpp
/// The keys nsys prints in its tables, spelled as nsys spells them: copy operations
/// (`[CUDA memcpy Host-to-Device]`), range styles (`PushPop`, `StartEnd`), range labels
/// (`domain:name`), and kernel names in the chosen `name_form`.
///
/// \code
///   std::string op = nvscope::detail::copy_operation_name(nvscope::copy_kind::host_to_device);
/// \endcode

#include <nvscope/trace.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace nvscope {
inline namespace v1 {
namespace detail {

inline const char* copy_operation_name(copy_kind k) noexcept {
  switch (k) {
    case copy_kind::host_to_device: return "[CUDA memcpy Host-to-Device]";
    case copy_kind::device_to_host: return "[CUDA memcpy Device-to-Host]";
    case copy_kind::host_to_array: return "[CUDA memcpy Host-to-Array]";
    case copy_kind::array_to_host: return "[CUDA memcpy Array-to-Host]";
    case copy_kind::array_to_array: return "[CUDA memcpy Array-to-Array]";
    case copy_kind::array_to_device: return "[CUDA memcpy Array-to-Device]";
    case copy_kind::device_to_array: return "[CUDA memcpy Device-to-Array]";
    case copy_kind::device_to_device: return "[CUDA memcpy Device-to-Device]";
    case copy_kind::host_to_host: return "[CUDA memcpy Host-to-Host]";
    case copy_kind::peer_to_peer: return "[CUDA memcpy Peer-to-Peer]";
    case copy_kind::unknown: break;
  }
  return "[CUDA memcpy Unknown]";
}

inline constexpr const char* memset_operation_name = "[CUDA memset]";

// The TID nsys prints: the thread's OS id, or the index for a thread the trace does not describe.
inline std::uint64_t os_thread_id(const trace& t, std::uint32_t thread) noexcept {
  return thread < t.threads.size() ? t.threads[thread].os_id : thread;
}

inline const char* style_name(const range_record& r) noexcept { return r.is_push_pop ? "PushPop" : "StartEnd"; }

// nsys's label for a range in nvtx_sum, nvtx_kern_sum and nvtx_gpu_proj_sum: "domain:name",
// ":name" in the default domain, for both styles (reports/nvtx_sum.py of nsys 2025.3 writes
// `coalesce(domain, '') || ':' || text`; checked against nsys in bench/results/fidelity.json).
inline std::string range_label(const trace& t, const range_record& r) {
  const auto domain = r.domain ? t.strings[r.domain] : std::string_view{};
  const auto name = t.strings[r.name];
  std::string s;
  s.reserve(domain.size() + 1 + name.size());
  s.append(domain.data(), domain.size());
  s.push_back(':');
  s.append(name.data(), name.size());
  return s;
}

// Per string id, the id kernels are grouped under in `form`: the identity for `demangled`,
// else the base or mangled spelling's id (equal spellings share one id).
inline std::vector<string_id> kernel_name_ids(const trace& t, name_form form) {
  std::vector<string_id> ids(t.strings.size());
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<string_id>(i);
  if (form == name_form::demangled) return ids;
  for (const auto& [demangled, forms] : t.kernel_names) {
    const auto id = form == name_form::base ? forms.base : forms.mangled;
    if (demangled < ids.size() && id) ids[demangled] = id;
  }
  return ids;
}

} // namespace detail
} // namespace v1
} // namespace nvscope

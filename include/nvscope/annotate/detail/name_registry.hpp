#pragma once

// Internal: the names of the NVTX domains and registered strings nvscope created, by handle,
// so that a tool that began listening late (the collector) can name what was registered
// before it listened. Handles are kept as integers: no NVTX type, no NVTX call, and the same
// body whatever NVSCOPE_DISABLE says (so it lives outside the mode namespace), which makes
// it one registry per shared object for translation units built in either mode.

#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>

namespace nvscope {
inline namespace v1 {
namespace detail {

struct nvtx_name_registry {
  std::mutex mutex;
  std::unordered_map<std::uint64_t, std::string> domains; // domain handle -> name
  std::unordered_map<std::uint64_t, std::string> strings; // string handle -> text
};

// Leaked on purpose: names are registered and looked up until the process ends.
inline nvtx_name_registry& nvtx_names() noexcept {
  static auto* r = new nvtx_name_registry();
  return *r;
}

inline std::uint64_t nvtx_handle_key(const void* handle) noexcept {
  return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(handle));
}

// Adds (or renames) `handle` in `map`; a null handle (NVTX with no tool) names nothing.
// Out of memory: the name is not kept, and reads as unknown later.
inline void remember_nvtx_name(std::unordered_map<std::uint64_t, std::string>& map, const void* handle,
                               const char* name) noexcept {
  if (handle == nullptr || name == nullptr) return;
  auto& r = nvtx_names();
  try {
    std::lock_guard<std::mutex> lock(r.mutex);
    map[nvtx_handle_key(handle)] = name;
  } catch (...) {
  }
}

} // namespace detail
} // namespace v1
} // namespace nvscope

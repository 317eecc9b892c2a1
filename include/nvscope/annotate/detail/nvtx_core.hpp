#pragma once

// Internal: everything that talks to NVTX. Included only when annotations are compiled in.

#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>

#include <nvtx3/nvToolsExt.h>

#include <nvscope/annotate/attributes.hpp>
#include <nvscope/annotate/color.hpp>
#include <nvscope/annotate/detail/name_registry.hpp>
#include <nvscope/annotate/switch.hpp>
#include <nvscope/annotate/message.hpp>

namespace nvscope {
inline namespace v1 {
namespace detail {
inline namespace NVSCOPE_DETAIL_MODE {

/// False once NVTX has initialised and found no tool for the entry point `fn` (e.g.
/// nvtxDomainRangePushEx): every call to it is then a no-op, so nvscope skips its own work
/// too (no lookup, no formatting, no pop). This is the very test NVTX's inline functions make
/// before calling through; before initialisation the pointer is NVTX's init stub (non-null).
#define NVSCOPE_DETAIL_NVTX_LIVE(fn) (NVTX_VERSIONED_IDENTIFIER(nvtxGlobals).fn##_impl_fnptr != nullptr)

/// How many distinct run-time names one domain registers; past it, names are still shown
/// but sent as plain (unregistered) strings, so that an unbounded set of names (a step
/// counter) cannot grow memory without bound.
inline constexpr std::size_t max_registered_names_per_domain = 16384;

// One NVTX domain: its handle (created at first use while enabled) and its registered
// strings. Entries are never destroyed: handles may be in use until the process ends.
struct domain_entry {
  std::string name; // empty for NVTX's default domain
  bool is_default = false;
  std::atomic<bool> created{false};
  std::atomic<nvtxDomainHandle_t> handle{nullptr};
  std::mutex mutex;
  struct registered {
    nvtxStringHandle_t handle;
    std::uint32_t fnv; // fnv1a of the name: its automatic colour
  };
  std::unordered_map<std::string, registered> strings;
  std::atomic<std::uint64_t> unregistered{0}; // names sent unregistered (over the cap)

  nvtxDomainHandle_t get() noexcept {
    if (is_default) return nullptr;
    if (NVSCOPE_DETAIL_LIKELY(created.load(std::memory_order_acquire)))
      return handle.load(std::memory_order_relaxed);
    std::lock_guard<std::mutex> lock(mutex);
    if (!created.load(std::memory_order_relaxed)) {
      const nvtxDomainHandle_t h = nvtxDomainCreateA(name.c_str());
      remember_nvtx_name(nvtx_names().domains, h, name.c_str());
      handle.store(h, std::memory_order_relaxed);
      created.store(true, std::memory_order_release);
    }
    return handle.load(std::memory_order_relaxed);
  }
};

struct domain_registry {
  std::mutex mutex;
  domain_entry default_entry;
  std::unordered_map<std::string, std::unique_ptr<domain_entry>> named;
  domain_registry() { default_entry.is_default = true; }
};

// Leaked on purpose: ranges may still close from static destructors at exit.
inline domain_registry& registry() noexcept {
  static domain_registry* r = new domain_registry();
  return *r;
}

inline domain_entry& default_domain_entry() noexcept { return registry().default_entry; }

/// The entry of the domain called `name` (null or empty: the default domain). Cheap after
/// the first call for a name; calls no NVTX function. Out of memory: the default domain.
inline domain_entry& domain_entry_named(name_ref name) noexcept {
  if (name.is_null() || name.size() == 0) return default_domain_entry();
  char clean[max_name_length + 1];
  const std::size_t n = sanitize_name(name, clean);
  auto& r = registry();
  try {
    std::lock_guard<std::mutex> lock(r.mutex);
    std::string key(clean, n);
    auto it = r.named.find(key);
    if (it == r.named.end()) {
      auto e = std::make_unique<domain_entry>();
      e->name = key;
      it = r.named.emplace(std::move(key), std::move(e)).first;
    }
    return *it->second;
  } catch (...) {
    return default_domain_entry();
  }
}

/// How a name reaches NVTX: a registered handle, else a stable C string.
struct resolved_name {
  nvtxStringHandle_t handle = nullptr;
  const char* text = nullptr;
  std::uint32_t fnv = 0; // fnv1a of text (for the automatic colour)
};

// The front cache's hash: a word at a time (FNV-1a, a byte at a time, is the colour's and
// is computed once per name, when it is registered).
inline std::uint64_t quick_hash(const char* s, std::size_t n) noexcept {
  std::uint64_t h = 0x9E3779B97F4A7C15ull ^ n;
  const char* end = s + n;
  std::uint64_t w = 0;
  if (n >= 8) {
    for (; end - s > 8; s += 8) {
      std::memcpy(&w, s, 8);
      h = (h ^ w) * 0xFF51AFD7ED558CCDull;
      h ^= h >> 32;
    }
    std::memcpy(&w, end - 8, 8); // the last 8 bytes (overlapping): no partial load
  } else {
    for (std::size_t i = 0; i < n; ++i) w |= std::uint64_t{static_cast<unsigned char>(s[i])} << (8 * i);
  }
  h = (h ^ w) * 0xC4CEB9FE1A85EC53ull;
  return h ^ (h >> 29);
}

// Per-thread front cache of registered names, so a name seen before costs a hash and a
// compare, with no lock. Plain data, zero-initialised: no TLS constructor.
struct name_cache_slot {
  const domain_entry* domain;
  std::uint64_t hash;
  const std::string* key;
  nvtxStringHandle_t handle;
  std::uint32_t fnv;
};
inline constexpr std::size_t name_cache_slots = 128;
inline name_cache_slot* thread_name_cache() noexcept {
  thread_local name_cache_slot slots[name_cache_slots] = {};
  return slots;
}

// Looks `s` (clean, n bytes) up in, or adds it to, the domain's registered strings.
// `bounded`: refuse to grow past max_registered_names_per_domain (run-time names); call
// sites never are. The unregistered fallback copies `s` into `buffer` (NUL-terminated).
inline resolved_name registered_clean(domain_entry& d, const char* s, std::size_t n, bool bounded,
                                      char* buffer) noexcept {
  const std::uint64_t h = quick_hash(s, n);
  name_cache_slot& slot = thread_name_cache()[h % name_cache_slots];
  if (slot.domain == &d && slot.hash == h && slot.key->size() == n && std::memcmp(slot.key->data(), s, n) == 0)
    return {slot.handle, slot.key->c_str(), slot.fnv};
  auto fallback = [&]() noexcept -> resolved_name {
    if (s != buffer) {
      std::memcpy(buffer, s, n);
      buffer[n] = '\0';
    }
    return {nullptr, buffer, fnv1a(std::string_view(buffer, n))};
  };
  nvtxDomainHandle_t dh = d.get();
  try {
    std::lock_guard<std::mutex> lock(d.mutex);
    std::string key(s, n);
    auto it = d.strings.find(key);
    if (it == d.strings.end()) {
      if (bounded && d.strings.size() >= max_registered_names_per_domain) {
        d.unregistered.fetch_add(1, std::memory_order_relaxed);
        return fallback();
      }
      nvtxStringHandle_t sh = nvtxDomainRegisterStringA(dh, key.c_str());
      remember_nvtx_name(nvtx_names().strings, sh, key.c_str());
      const std::uint32_t fnv = fnv1a(key);
      it = d.strings.emplace(std::move(key), domain_entry::registered{sh, fnv}).first;
    }
    slot = {&d, h, &it->first, it->second.handle, it->second.fnv};
    return {it->second.handle, it->first.c_str(), it->second.fnv};
  } catch (...) {
    return fallback();
  }
}

/// Resolves a run-time name: cleans it (into `buffer`, max_name_length + 1 bytes, when it
/// needs cleaning) and registers it in `d` once.
inline resolved_name resolve_name(domain_entry& d, name_ref name, char* buffer, bool bounded) noexcept {
  const char* s = name.data();
  std::size_t n = name.size();
  if (name.is_null() || !name_is_clean(s, n)) {
    n = sanitize_name(name, buffer);
    s = buffer;
  }
  return registered_clean(d, s, n, bounded, buffer);
}

inline nvtxEventAttributes_t make_attributes(const resolved_name& name, auto_colors mode) noexcept {
  nvtxEventAttributes_t a;
  std::memset(&a, 0, sizeof(a));
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  if (name.handle != nullptr) {
    a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    a.message.registered = name.handle;
  } else {
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = name.text;
  }
  if (mode != auto_colors::off) {
    a.colorType = NVTX_COLOR_ARGB;
    a.color = color_from_hash(name.fnv, mode).argb;
  }
  return a;
}

inline void apply_option(nvtxEventAttributes_t& a, color c) noexcept {
  a.colorType = NVTX_COLOR_ARGB;
  a.color = c.argb;
}
inline void apply_option(nvtxEventAttributes_t& a, category c) noexcept { a.category = c.id; }
inline void apply_option(nvtxEventAttributes_t& a, const payload& p) noexcept {
  switch (p.type()) {
    case payload::kind::none: a.payloadType = NVTX_PAYLOAD_UNKNOWN; break;
    case payload::kind::int32: a.payloadType = NVTX_PAYLOAD_TYPE_INT32; a.payload.iValue = p.as_int32(); break;
    case payload::kind::int64: a.payloadType = NVTX_PAYLOAD_TYPE_INT64; a.payload.llValue = p.as_int64(); break;
    case payload::kind::uint32: a.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT32; a.payload.uiValue = p.as_uint32(); break;
    case payload::kind::uint64: a.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64; a.payload.ullValue = p.as_uint64(); break;
    case payload::kind::float32: a.payloadType = NVTX_PAYLOAD_TYPE_FLOAT; a.payload.fValue = p.as_float(); break;
    case payload::kind::float64: a.payloadType = NVTX_PAYLOAD_TYPE_DOUBLE; a.payload.dValue = p.as_double(); break;
  }
}

// Arithmetic values are payloads (check_options has refused everything else).
template <class T>
inline void apply_option(nvtxEventAttributes_t& a, const T& value) noexcept {
  static_assert(std::is_arithmetic<T>::value, "nvscope: checked by check_options");
  apply_option(a, payload(value));
}

} // namespace NVSCOPE_DETAIL_MODE
} // namespace detail
} // namespace v1
} // namespace nvscope

// nvscope-target: nvscope
#pragma once

/// \file annotate/switch.hpp
/// The two kill switches of the annotation layer.
///
/// - Compile time: define `NVSCOPE_DISABLE` (for example `-DNVSCOPE_DISABLE`) and every
///   `NVSCOPE_*` annotation macro expands to nothing (its arguments are not evaluated); the
///   types and functions stay, with empty bodies, and NVTX's headers are not included, so
///   the translation unit references no NVTX symbol. Translation units built with and
///   without it may be linked together (the two modes live in different inline namespaces).
/// - Run time: `nvscope::set_enabled(false)`, or the environment variable
///   `NVSCOPE_DISABLE=1` (read at the first annotation unless `set_enabled` came first).
///   While disabled nothing reaches NVTX: no range, mark, name or string registration.
///   A range opened while enabled is still closed when it ends.
///
/// \code
///   nvscope::set_enabled(std::getenv("MY_APP_TRACE") != nullptr);
///   if (nvscope::enabled()) { ... }
/// \endcode

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include <nvscope/annotate/detail/mode.hpp>

namespace nvscope {
inline namespace v1 {
namespace detail {
// The run-time switch's state: 0 not decided yet, 1 enabled, -1 disabled. The same body in
// both compile modes, so it lives outside the mode namespace. Constant-initialised: no guard
// on the hot path.
inline std::atomic<int>& enabled_state() noexcept {
  static std::atomic<int> state{0};
  return state;
}
inline bool decide_enabled() noexcept {
  const char* env = std::getenv("NVSCOPE_DISABLE");
  const bool off = env != nullptr && env[0] != '\0' && std::strcmp(env, "0") != 0;
  int expected = 0;
  enabled_state().compare_exchange_strong(expected, off ? -1 : 1, std::memory_order_relaxed);
  return enabled_state().load(std::memory_order_relaxed) > 0;
}
// The run-time switch alone, whatever this translation unit's compile mode: for the ranges
// nvscope opens itself outside the macros (a capture schedule's step_N and warmup).
inline bool runtime_switch_on() noexcept {
  const int s = enabled_state().load(std::memory_order_relaxed);
  return s > 0 || (s == 0 && decide_enabled());
}
} // namespace detail

#if NVSCOPE_DETAIL_ENABLED
namespace detail {
inline namespace NVSCOPE_DETAIL_MODE {
// Every macro call site that has emitted is on this list, so that set_enabled(false) can
// clear their `active` flags: the hot path of a macro range then tests one flag, not the
// switch and the site. Sites are function-local statics, constant-initialised.
struct site_flag {
  std::atomic<bool> active{false};
  bool linked = false; // under site_list().mutex
  site_flag* next = nullptr;
  constexpr site_flag() noexcept = default;
};
struct site_list_t {
  std::mutex mutex;
  site_flag* head = nullptr;
};
inline site_list_t& site_list() noexcept {
  static site_list_t* list = new site_list_t(); // leaked: sites live until the process ends
  return *list;
}
} // namespace NVSCOPE_DETAIL_MODE
} // namespace detail
#endif

inline namespace NVSCOPE_DETAIL_MODE {

#if NVSCOPE_DETAIL_ENABLED
/// True when annotations reach NVTX (see the rules above).
/// \code
///   if (nvscope::enabled()) expensive_label_computation();
/// \endcode
inline bool enabled() noexcept {
  const int s = detail::enabled_state().load(std::memory_order_relaxed);
  if (NVSCOPE_DETAIL_LIKELY(s > 0)) return true;
  return s < 0 ? false : detail::decide_enabled();
}

/// Turns annotation on or off for the whole shared object (each shared object that
/// includes nvscope has its own switch). Overrides `NVSCOPE_DISABLE` from the environment.
/// \code
///   nvscope::set_enabled(false);   // from here on, ranges and marks emit nothing
/// \endcode
inline void set_enabled(bool on) noexcept {
  detail::enabled_state().store(on ? 1 : -1, std::memory_order_relaxed);
  if (!on) {
    auto& list = detail::site_list();
    std::lock_guard<std::mutex> lock(list.mutex);
    for (detail::site_flag* s = list.head; s != nullptr; s = s->next) s->active.store(false, std::memory_order_relaxed);
  }
}
#else
inline bool enabled() noexcept { return false; }
inline void set_enabled(bool on) noexcept { (void)on; }
#endif

/// True when this translation unit was compiled with annotations (no NVSCOPE_DISABLE).
inline constexpr bool compiled_in() noexcept { return NVSCOPE_DETAIL_ENABLED != 0; }

} // namespace NVSCOPE_DETAIL_MODE
} // namespace v1
} // namespace nvscope

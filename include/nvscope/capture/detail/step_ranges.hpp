#pragma once
// The NVTX ranges a capture schedule opens itself: `step_N` around each step and `warmup`
// around each run of warm-up steps. Push/pop ranges in NVTX's default domain, the domain of
// NVSCOPE_RANGE, so that a step nests with the program's own forward/backward ranges (and
// shows as one level of the NVTX stack, as flame-graph scripts expect).
// Internal: the public switch is schedule_options::step_ranges(); annotation's run-time switch
// (nvscope::set_enabled(false), or NVSCOPE_DISABLE=1 in the environment) turns them off too.

#include <nvscope/annotate/switch.hpp>

#include <nvtx3/nvToolsExt.h>

#include <cstdint>
#include <cstdio>

namespace nvscope {
inline namespace v1 {
namespace detail {

// Follows annotation's run-time switch, not its compile mode: a schedule keeps its step ranges
// in a translation unit built with NVSCOPE_DISABLE, as it keeps its capture mechanisms.
inline bool capture_ranges_allowed() noexcept { return runtime_switch_on(); }

// Returns whether a range was pushed (the caller pops only those).
inline bool push_step_range(const char* name) noexcept {
  if (!capture_ranges_allowed()) return false;
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = name;
  nvtxDomainRangePushEx(nullptr, &a);   // nullptr: the default domain
  return true;
}

// "step_<n>" without a heap allocation.
inline bool push_numbered_step_range(std::uint64_t n) noexcept {
  char name[32];
  std::snprintf(name, sizeof name, "step_%llu", static_cast<unsigned long long>(n));
  return push_step_range(name);
}

inline void pop_step_range() noexcept { nvtxDomainRangePop(nullptr); }

} // namespace detail
} // namespace v1
} // namespace nvscope

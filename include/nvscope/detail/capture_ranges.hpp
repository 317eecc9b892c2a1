#pragma once
// The NVTX calls capture makes itself: the `step_N` / `warmup` ranges of a schedule, and
// the registered-string capture range that `nsys --capture-range=nvtx` waits for.
// Internal: the public API is capture_schedule.hpp and capture_nvtx.hpp.

#include <nvtx3/nvToolsExt.h>

#include <cstdint>
#include <cstdio>

namespace nvscope {
inline namespace v1 {
namespace detail {

// The domain of the schedule's step ranges.
inline nvtxDomainHandle_t capture_step_domain() noexcept {
  static nvtxDomainHandle_t d = nvtxDomainCreateA("nvscope");
  return d;
}

inline nvtxEventAttributes_t capture_range_attributes() noexcept {
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  return a;
}

// Push/pop: step ranges nest with the user's own ranges on the loop's thread.
inline void push_step_range(const char* name) noexcept {
  nvtxEventAttributes_t a = capture_range_attributes();
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = name;
  nvtxDomainRangePushEx(capture_step_domain(), &a);
}

// "step_<n>" without a heap allocation.
inline void push_numbered_step_range(std::uint64_t n) noexcept {
  char name[32];
  std::snprintf(name, sizeof name, "step_%llu", static_cast<unsigned long long>(n));
  push_step_range(name);
}

inline void pop_step_range() noexcept { nvtxDomainRangePop(capture_step_domain()); }

} // namespace detail
} // namespace v1
} // namespace nvscope

// nvscope-target: nvscope
#pragma once

// analyze/detail/prefetch.hpp: asks for a record a loop will read `prefetch_ahead` iterations
// later, where the records it reads lie far apart (a range's kernels, a kernel name's ranges)
// and each would otherwise wait for memory. A hint: nothing where the compiler has none.

#include <cstddef>

namespace nvscope {
inline namespace v1 {
namespace detail {

inline constexpr std::size_t prefetch_ahead = 16; // iterations ahead

inline void prefetch(const void* p) noexcept {
#if defined(__GNUC__)
  __builtin_prefetch(p);
#else
  (void)p;
#endif
}

} // namespace detail
} // namespace v1
} // namespace nvscope

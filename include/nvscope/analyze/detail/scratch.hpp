// nvscope-target: nvscope
#pragma once

// analyze/detail/scratch.hpp: the allocator of the analysis' large temporary arrays (internal
// to the analyze layer).
//
// A pass over millions of records allocates arrays of tens of megabytes; first touching fresh
// pages, one page fault per 4 KiB, then costs more than the pass itself (measured: 60 % of
// `analyze` at 4 M kernels on a virtual machine). Arrays of 4 MiB or more are mapped directly
// and offered transparent huge pages (one fault per 2 MiB) on Linux; everything else, and
// every build under AddressSanitizer or ThreadSanitizer (which must see the memory), uses the
// standard allocator.

#include <cstddef>
#include <memory>
#include <new>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define NVSCOPE_DETAIL_PLAIN_SCRATCH 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define NVSCOPE_DETAIL_PLAIN_SCRATCH 1
#endif
#endif

namespace nvscope {
inline namespace v1 {
namespace detail {

inline constexpr std::size_t scratch_map_bytes = std::size_t{4} << 20;

template <class T>
struct scratch_allocator {
  using value_type = T;
  scratch_allocator() noexcept = default;
  template <class U>
  scratch_allocator(const scratch_allocator<U>&) noexcept {}

  T* allocate(std::size_t n) {
#if defined(__linux__) && !defined(NVSCOPE_DETAIL_PLAIN_SCRATCH)
    if (n * sizeof(T) >= scratch_map_bytes && n <= static_cast<std::size_t>(-1) / sizeof(T)) {
      void* p = mmap(nullptr, n * sizeof(T), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (p == MAP_FAILED) throw std::bad_alloc();
#if defined(MADV_HUGEPAGE)
      madvise(p, n * sizeof(T), MADV_HUGEPAGE); // advice only: refused, the pages stay small
#endif
      return static_cast<T*>(p);
    }
#endif
    return std::allocator<T>().allocate(n);
  }
  void deallocate(T* p, std::size_t n) noexcept {
#if defined(__linux__) && !defined(NVSCOPE_DETAIL_PLAIN_SCRATCH)
    if (n * sizeof(T) >= scratch_map_bytes) {
      munmap(p, n * sizeof(T));
      return;
    }
#endif
    std::allocator<T>().deallocate(p, n);
  }
  template <class U>
  bool operator==(const scratch_allocator<U>&) const noexcept { return true; }
  template <class U>
  bool operator!=(const scratch_allocator<U>&) const noexcept { return false; }
};

// A vector of the analysis' temporaries.
template <class T>
using scratch_vector = std::vector<T, scratch_allocator<T>>;

} // namespace detail
} // namespace v1
} // namespace nvscope

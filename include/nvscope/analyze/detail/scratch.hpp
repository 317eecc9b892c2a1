// nvscope-target: nvscope
#pragma once

// analyze/detail/scratch.hpp: the allocator of the analysis' large temporary arrays (internal
// to the analyze layer).
//
// A pass over millions of records allocates arrays of tens of megabytes; first touching fresh
// pages, one page fault per 4 KiB, can cost more than the pass itself. Arrays of 4 MiB or more
// are mapped directly, whole huge pages from a huge-page boundary, and offered transparent huge
// pages (one fault per 2 MiB) on Linux; the per-record indexes of `attribution` and
// `trace_index` live there too (`record_indexes`). Inside a scratch_scope (analyze and diagnose
// open one) a freed array's block serves the next array instead of going back to the kernel: a
// pass reuses the pages the one before touched, for a higher peak while it runs (what one pass
// frees waits for the next). A kept block larger than an array needs keeps the huge pages
// beyond it apart for the next array, and blocks too small for a new array are moved into its
// front: the pages mapped fresh then grow to the peak of what is live, not past it. Everything
// else, and every build under AddressSanitizer or ThreadSanitizer (which must see the memory),
// uses the standard allocator.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>
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
inline constexpr std::size_t scratch_huge = std::size_t{2} << 20; // blocks are whole huge pages

// Mapped blocks carry their mapped size in a header in front of the array, so that a block
// can serve any smaller array and still be unmapped whole, on any thread.
inline constexpr std::size_t scratch_header = 64;

// Inside a scratch_scope on a thread, blocks that arrays free are kept and handed to the next
// arrays of that thread (smallest that fits), so that pass after pass reuses pages already
// touched instead of faulting in fresh ones; the scope's end unmaps what is kept.
struct scratch_pool {
  static constexpr std::size_t most_kept = 32;
  int scopes = 0;
  std::size_t kept_count = 0;
  struct block {
    void* base;
    std::size_t bytes;
  } kept[most_kept]{};

  static scratch_pool& of_this_thread() noexcept {
    thread_local scratch_pool pool;
    return pool;
  }
  // The smallest kept block that holds `bytes`, taken out of the pool; null if none. Huge pages
  // it has beyond what `bytes` needs stay kept as a block of their own (its header at its front).
  void* take(std::size_t bytes) noexcept {
    const block taken = take_best([bytes](std::size_t have) { return have >= bytes; }, [](std::size_t x, std::size_t y) { return x < y; });
    char* base = static_cast<char*>(taken.base);
    const std::size_t need = (bytes + scratch_huge - 1) / scratch_huge * scratch_huge;
    if (base != nullptr && need < taken.bytes) {
      *reinterpret_cast<std::size_t*>(base) = need;
      *reinterpret_cast<std::size_t*>(base + need) = taken.bytes - need;
      kept[kept_count++] = {base + need, taken.bytes - need}; // take_best just freed a slot
    }
    return base;
  }
  // The largest kept block of at most `bytes`, taken out of the pool; null if none.
  void* take_largest(std::size_t bytes) noexcept {
    return take_best([bytes](std::size_t have) { return have <= bytes; }, [](std::size_t x, std::size_t y) { return x > y; }).base;
  }
  bool keep(void* base, std::size_t bytes) noexcept {
    if (scopes == 0 || kept_count == most_kept) return false;
    kept[kept_count++] = {base, bytes};
    return true;
  }
  void release() noexcept;

 private:
  // Takes out of the pool the kept block that `fits` and that `before` ranks first of those that
  // fit (before(its bytes, another's)); {} if none fits.
  template <class Fits, class Before>
  block take_best(Fits fits, Before before) noexcept {
    std::size_t best = kept_count;
    for (std::size_t i = 0; i < kept_count; ++i)
      if (fits(kept[i].bytes) && (best == kept_count || before(kept[i].bytes, kept[best].bytes))) best = i;
    if (best == kept_count) return {};
    const block taken = kept[best];
    kept[best] = kept[--kept_count];
    return taken;
  }
};
// Nothing to destroy: a pass run from an exit handler (the injected collector's) after this
// thread's thread_local objects are gone still finds a usable pool.
static_assert(std::is_trivially_destructible<scratch_pool>::value, "scratch_pool must stay trivially destructible");

// While one lives on a thread (scopes nest), that thread's large scratch arrays reuse each
// other's pages (see scratch_pool). `analyze` and `diagnose` open one around their passes.
class scratch_scope {
 public:
  scratch_scope() noexcept { ++scratch_pool::of_this_thread().scopes; }
  ~scratch_scope() {
    auto& pool = scratch_pool::of_this_thread();
    if (--pool.scopes == 0) pool.release();
  }
  scratch_scope(const scratch_scope&) = delete;
  scratch_scope& operator=(const scratch_scope&) = delete;
};

#if defined(__linux__) && !defined(NVSCOPE_DETAIL_PLAIN_SCRATCH)
// A block of at least `bytes`, whole huge pages at a huge-page boundary: a mapping that starts
// or ends inside a huge page gets small pages there, one fault each 4 KiB (up to 1,022 a block).
// Kept blocks too small to serve it alone are moved into its front, largest first while they
// fit (mremap moves their pages, touched already, without copying or clearing them), so that
// only the rest is fresh.
inline void* scratch_map(std::size_t bytes, scratch_pool* donors = nullptr) {
  constexpr std::size_t huge = scratch_huge;
  const std::size_t size = (bytes + huge - 1) / huge * huge;
  if (size < bytes || size + huge < size) throw std::bad_alloc();
  void* raw = mmap(nullptr, size + huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  const auto at = reinterpret_cast<std::uintptr_t>(raw), aligned = (at + huge - 1) / huge * huge;
  if (aligned > at) munmap(raw, aligned - at);                                // the head before the boundary
  munmap(reinterpret_cast<void*>(aligned + size), at + huge - aligned);        // the tail: never empty
  char* base = reinterpret_cast<char*>(aligned);
#if defined(MADV_HUGEPAGE)
  madvise(base, size, MADV_HUGEPAGE); // advice only: refused, the pages stay small
#endif
#if defined(MREMAP_FIXED)
  for (std::size_t filled = 0; donors != nullptr;) {
    void* donor = donors->take_largest(size - filled);
    if (donor == nullptr) break;
    const std::size_t donor_bytes = *static_cast<std::size_t*>(donor);
    if (mremap(donor, donor_bytes, donor_bytes, MREMAP_MAYMOVE | MREMAP_FIXED, base + filled) == MAP_FAILED) {
      munmap(donor, donor_bytes); // not moved: the region keeps its fresh pages there
      continue;
    }
    filled += donor_bytes;
  }
#endif
  *reinterpret_cast<std::size_t*>(base) = size;
  return base;
}
#endif

template <class T>
struct scratch_allocator {
  using value_type = T;
  scratch_allocator() noexcept = default;
  template <class U>
  scratch_allocator(const scratch_allocator<U>&) noexcept {}

  T* allocate(std::size_t n) {
#if defined(__linux__) && !defined(NVSCOPE_DETAIL_PLAIN_SCRATCH)
    if (n * sizeof(T) >= scratch_map_bytes && n <= (static_cast<std::size_t>(-1) - scratch_header) / sizeof(T)) {
      const std::size_t bytes = n * sizeof(T) + scratch_header;
      auto& pool = scratch_pool::of_this_thread();
      void* base = pool.take(bytes);
      if (base == nullptr) base = scratch_map(bytes, &pool);
      return reinterpret_cast<T*>(static_cast<char*>(base) + scratch_header);
    }
#endif
    return std::allocator<T>().allocate(n);
  }
  void deallocate(T* p, std::size_t n) noexcept {
#if defined(__linux__) && !defined(NVSCOPE_DETAIL_PLAIN_SCRATCH)
    if (n * sizeof(T) >= scratch_map_bytes) {
      void* base = reinterpret_cast<char*>(p) - scratch_header;
      const std::size_t bytes = *static_cast<std::size_t*>(base);
      if (!scratch_pool::of_this_thread().keep(base, bytes)) munmap(base, bytes);
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

inline void scratch_pool::release() noexcept {
#if defined(__linux__) && !defined(NVSCOPE_DETAIL_PLAIN_SCRATCH)
  for (std::size_t i = 0; i < kept_count; ++i) munmap(kept[i].base, kept[i].bytes);
#endif
  kept_count = 0;
}

// A vector of the analysis' temporaries.
template <class T>
using scratch_vector = std::vector<T, scratch_allocator<T>>;

// scratch_allocator whose construction without a value leaves the element unset, so that
// resize(n) writes nothing: for columns whose elements are each written before they are read,
// which would otherwise be written twice (a zero fill of tens of megabytes first).
template <class T>
struct unset_scratch_allocator : scratch_allocator<T> {
  template <class U>
  struct rebind {
    using other = unset_scratch_allocator<U>;
  };
  unset_scratch_allocator() noexcept = default;
  template <class U>
  unset_scratch_allocator(const unset_scratch_allocator<U>&) noexcept {}
  template <class U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible<U>::value) {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

// A column of the analysis' temporaries: a scratch_vector whose resize leaves trivial elements
// unset (every one must be written before it is read).
template <class T>
using scratch_column = std::vector<T, unset_scratch_allocator<T>>;

} // namespace detail
} // namespace v1
} // namespace nvscope

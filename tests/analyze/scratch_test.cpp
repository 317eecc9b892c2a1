// The analysis' scratch arrays (analyze/detail/scratch.hpp): inside a scratch_scope a freed
// large array's pages serve the next one (the smallest kept block that fits, its huge pages
// beyond the array's kept apart; blocks too small are moved into the front of a new one), contents are
// the vector's own, a block may be freed on another thread or after its scope, nothing is
// kept outside a scope, and a block is whole huge pages from a huge-page boundary. Under the sanitizers every array comes from the heap.

#include <nvscope/analyze/detail/scratch.hpp>

#include <doctest/doctest.h>
#include "test_seed.hpp"

#include <cstdint>
#include <numeric>
#include <random>
#include <thread>

namespace {

using nvscope::detail::scratch_pool;
using nvscope::detail::scratch_scope;
using nvscope::detail::scratch_vector;

constexpr std::size_t mib = std::size_t{1} << 20;

} // namespace

#if !defined(NVSCOPE_DETAIL_PLAIN_SCRATCH) && defined(__linux__)

TEST_CASE("inside a scope a freed large array serves the next one that fits, the smallest block first") {
  const scratch_scope scope;
  const std::uint32_t* big = nullptr;
  const std::uint32_t* small = nullptr;
  {
    scratch_vector<std::uint32_t> a(16 * mib / 4, 7), b(6 * mib / 4, 9);
    big = a.data(), small = b.data();
  }
  CHECK(scratch_pool::of_this_thread().kept_count == 2);
  scratch_vector<std::uint32_t> c(5 * mib / 4); // fits both: takes the 6 MiB one
  CHECK(c.data() == small);
  scratch_vector<std::uint64_t> d(12 * mib / 8); // only the 16 MiB one fits
  CHECK(reinterpret_cast<const void*>(d.data()) == big);
  scratch_vector<std::uint32_t> e(32 * mib / 4, 3); // none fits: a fresh block
  CHECK(e.data() != big);
  CHECK(scratch_pool::of_this_thread().kept_count == 0);
  NVSCOPE_SEEDED_RNG(std::mt19937_64, g);
  for (auto& v : c) v = static_cast<std::uint32_t>(g());
  const auto sum = std::accumulate(c.begin(), c.end(), std::uint64_t{0});
  scratch_vector<std::uint32_t> f(c); // a copy reads what was written, not the old block's 7s and 9s
  CHECK(std::accumulate(f.begin(), f.end(), std::uint64_t{0}) == sum);
  CHECK(e[e.size() - 1] == 3);
}

TEST_CASE("a kept block larger than an array needs gives it the huge pages it needs and keeps the rest") {
  const scratch_scope scope;
  const char* front = nullptr;
  {
    scratch_vector<char> a(20 * mib, 'a'); // a 22 MiB block
    front = a.data();
  }
  scratch_vector<char> b(5 * mib, 'b'); // 6 MiB of it
  CHECK(b.data() == front);
  REQUIRE(scratch_pool::of_this_thread().kept_count == 1);
  const auto& rest = scratch_pool::of_this_thread().kept[0];
  CHECK(rest.bytes == 16 * mib);
  CHECK(static_cast<const char*>(rest.base) == front - nvscope::detail::scratch_header + 6 * mib);
  CHECK(*static_cast<const std::size_t*>(rest.base) == 16 * mib); // each part's size in its own header
  CHECK(*reinterpret_cast<const std::size_t*>(front - nvscope::detail::scratch_header) == 6 * mib);
  scratch_vector<char> c(15 * mib, 'c'); // the rest serves the next array
  CHECK(c.data() == static_cast<const char*>(rest.base) + nvscope::detail::scratch_header);
  CHECK(scratch_pool::of_this_thread().kept_count == 0);
  CHECK(b.back() == 'b');
  CHECK(c.front() == 'c');
}

TEST_CASE("kept blocks too small for a new array are moved into its front, largest first, their pages not fresh") {
  const scratch_scope scope;
  NVSCOPE_SEEDED_RNG(std::mt19937, g);
  const std::uint32_t mark_a = g() | 1, mark_b = g() | 1;
  {
    scratch_vector<std::uint32_t> a(6 * mib / 4, mark_a), b(4 * mib / 4, mark_b); // blocks of 8 and 6 MiB
  }
  REQUIRE(scratch_pool::of_this_thread().kept_count == 2);
  nvscope::detail::scratch_allocator<std::uint32_t> alloc;
  const std::size_t n = 20 * mib / 4; // a 22 MiB block: neither fits alone, both fit in it
  std::uint32_t* c = alloc.allocate(n);
  CHECK(scratch_pool::of_this_thread().kept_count == 0);
  // The 8 MiB block first, at the front: a's values where a's were; then the 6 MiB block
  // (its header, then b's values), 8 MiB in. What the array holds before it is written is
  // not the allocator's promise; these pages' contents show that they were moved, not made.
  CHECK(c[0] == mark_a);
  CHECK(c[6 * mib / 4 - 1] == mark_a);
  CHECK(c[8 * mib / 4] == mark_b);
  CHECK(c[8 * mib / 4 + 4 * mib / 4 - 1] == mark_b);
  const auto* base = reinterpret_cast<const char*>(c) - nvscope::detail::scratch_header;
  CHECK(*reinterpret_cast<const std::size_t*>(base) == 22 * mib); // the header says the whole block
  CHECK(reinterpret_cast<std::uintptr_t>(base) % (2 * mib) == 0);
  for (std::size_t i = 0; i < n; i += 1024) c[i] = static_cast<std::uint32_t>(i); // every page writable
  CHECK(c[n - 1024] == n - 1024);
  alloc.deallocate(c, n);
  CHECK(scratch_pool::of_this_thread().kept_count == 1);
}

TEST_CASE("a large array's block is whole huge pages from a huge-page boundary, its size in the header") {
  for (std::size_t bytes : {4 * mib, 4 * mib + 1, 6 * mib - 64, 6 * mib - 63, 33 * mib + 12345}) {
    scratch_vector<char> v(bytes, 1);
    const auto* base = v.data() - nvscope::detail::scratch_header;
    const auto mapped = *reinterpret_cast<const std::size_t*>(base);
    CAPTURE(bytes);
    CHECK(reinterpret_cast<std::uintptr_t>(base) % (2 * mib) == 0);
    CHECK(mapped % (2 * mib) == 0);
    CHECK(mapped >= bytes + nvscope::detail::scratch_header);
    CHECK(mapped < bytes + nvscope::detail::scratch_header + 2 * mib);
    CHECK(v[bytes - 1] == 1);
  }
}

TEST_CASE("scopes nest, and what an inner scope frees stays kept until the outermost ends") {
  {
    const scratch_scope outer;
    {
      const scratch_scope inner;
      scratch_vector<char> a(8 * mib, 'x');
    }
    CHECK(scratch_pool::of_this_thread().kept_count == 1);
  }
  CHECK(scratch_pool::of_this_thread().kept_count == 0); // unmapped at the end
  scratch_vector<char> b(8 * mib, 'y');
  b = scratch_vector<char>(); // freed with no scope open
  CHECK(scratch_pool::of_this_thread().kept_count == 0); // no scope: nothing kept
}

TEST_CASE("a block from a scope may outlive it and be freed on another thread") {
  scratch_vector<std::uint64_t> escaped;
  {
    const scratch_scope scope;
    scratch_vector<std::uint64_t> tmp(8 * mib / 8, 1); // kept, then reused by `escaped`
    const auto* kept_block = tmp.data();
    tmp = scratch_vector<std::uint64_t>(); // freed: its block kept
    escaped.assign(5 * mib / 8 + 1000, 5); // 6 MiB of the 10 MiB block; its last 4 MiB stay kept
    CHECK(escaped.data() == kept_block);
    CHECK(scratch_pool::of_this_thread().kept_count == 1);
  }
  std::thread([v = std::move(escaped)]() mutable {
    CHECK(v.back() == 5);
    v = scratch_vector<std::uint64_t>(); // unmapped whole (its block's size is in its header), no scope here
    CHECK(scratch_pool::of_this_thread().kept_count == 0);
  }).join();
}

#else

TEST_CASE("under the sanitizers scratch arrays come from the heap and keep their contents") {
  const scratch_scope scope;
  scratch_vector<std::uint32_t> a(8 * mib / 4);
  std::iota(a.begin(), a.end(), 0u);
  a.resize(a.size() * 2, 1);
  CHECK(a[12345] == 12345u);
  CHECK(a.back() == 1u);
  CHECK(scratch_pool::of_this_thread().kept_count == 0);
}

#endif

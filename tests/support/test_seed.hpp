// Random test inputs a failure can replay. Every randomized test takes its seed here and names
// it, so that a failing run prints the seed and NVSCOPE_TEST_SEED=<that number> draws the same
// inputs again (with `-tc` to run that test alone):
//
//   NVSCOPE_SEEDED_RNG(std::mt19937_64, rng); // declares rng_seed, CAPTUREd, and the engine rng
//
// Helpers that share one engine across a file take `announced_engine`, which says its seed
// once, when first used. A NVSCOPE_TEST_SEED that is not a decimal number stops the run with a
// one-line error rather than falling back to a random seed the user did not ask for.
#pragma once

#include <doctest/doctest.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>

namespace nvscope_test {

// NVSCOPE_TEST_SEED when set, else 64 fresh random bits.
inline std::uint64_t fresh_seed() {
  if (const char* s = std::getenv("NVSCOPE_TEST_SEED")) {
    char* end = nullptr;
    errno = 0;
    const unsigned long long v = std::strtoull(s, &end, 10);
    if (*s == '\0' || *s == '-' || *end != '\0' || errno == ERANGE) {
      std::fprintf(stderr, "nvscope tests: NVSCOPE_TEST_SEED must be a decimal number below 2^64, not '%s'\n", s);
      std::exit(2);
    }
    return v;
  }
  std::random_device device;
  return (static_cast<std::uint64_t>(device()) << 32) ^ device();
}

// An engine seeded by fresh_seed(), its seed in the test's output (a helper's engine, shared by
// every test of a file: a CAPTURE would name it only inside the helper).
template <class Engine>
Engine announced_engine() {
  const std::uint64_t seed = fresh_seed();
  MESSAGE("random seed (NVSCOPE_TEST_SEED replays it): ", seed);
  return Engine(static_cast<typename Engine::result_type>(seed));
}

} // namespace nvscope_test

#define NVSCOPE_SEEDED_RNG(Engine, name)                        \
  const std::uint64_t name##_seed = ::nvscope_test::fresh_seed(); \
  CAPTURE(name##_seed);                                         \
  Engine name(static_cast<Engine::result_type>(name##_seed))

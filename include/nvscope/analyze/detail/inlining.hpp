// nvscope-target: nvscope
#pragma once

// analyze/detail/inlining.hpp: where a step the passes take millions of times should be
// inlined. NVSCOPE_DETAIL_COLD keeps its rare branch out of line (a new range name in a tally,
// a copy met by the kernels' union); NVSCOPE_DETAIL_INLINE asks that a small step be inlined
// into each loop that takes it, where the compiler would make it a call. Both checked by
// instruction counts (bench/analyze/instructions.sh). Hints: nothing where the compiler has none.

#if defined(__GNUC__) || defined(__clang__)
#define NVSCOPE_DETAIL_COLD __attribute__((noinline, cold))
#define NVSCOPE_DETAIL_INLINE inline __attribute__((always_inline))
#else
#define NVSCOPE_DETAIL_COLD
#define NVSCOPE_DETAIL_INLINE inline
#endif

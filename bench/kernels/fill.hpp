#pragma once
// Device-side random fill for the benchmark's multi-gigabyte inputs (host generation would
// dominate the run). Uniform in [lo, hi), never exactly zero.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

template <class T> cudaError_t fill_uniform(T* p, std::size_t n, std::uint64_t seed, float lo, float hi);

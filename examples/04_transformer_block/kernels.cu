// The reference kernels, compiled once for this program; main.cpp is plain C++.
#include <kernels/instantiate.cuh>

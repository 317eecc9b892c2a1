// The kernels under test, compiled for float and bf16; the test logic (kernels_test.cpp) is C++.
#include <kernels/instantiate.cuh>

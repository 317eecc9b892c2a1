// A stand-in libcuda.so.1 with no CUDA entry points, for the run tests: `nvscope run` finds a
// driver file and arranges its injection; the CUDA runtime finds nothing usable in it.
extern "C" int nvscope_fake_cuda_driver() { return 0; }

"""A CuPy program for `nvscope run`: 20 steps of a matmul, a reduction and an elementwise
kernel, each step an NVTX range (cupy.cuda.nvtx), so that a non-PyTorch framework is covered."""
import cupy as cp
from cupy.cuda import nvtx

a = cp.random.rand(1024, 1024, dtype=cp.float32)
b = cp.random.rand(1024, 1024, dtype=cp.float32)
for s in range(20):
    nvtx.RangePush("step")
    c = a @ b
    n = cp.linalg.norm(c)
    a = cp.tanh(c / n)
    nvtx.RangePop()
cp.cuda.Device().synchronize()
print("cupy_program: done", float(n))

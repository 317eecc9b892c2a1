"""A PyTorch training loop for `nvscope run` comparisons: transformer encoder layers,
torch.cuda.nvtx ranges step/forward/backward/optimizer, median step time printed last.

python3 train.py [--steps 30] [--compile] [--warmup 5]
"""
import argparse
import statistics
import time

import torch
import torch.nn as nn

p = argparse.ArgumentParser()
p.add_argument("--steps", type=int, default=30)
p.add_argument("--warmup", type=int, default=5)
p.add_argument("--compile", action="store_true", help='torch.compile(mode="reduce-overhead"): CUDA graphs')
p.add_argument("--layers", type=int, default=4)
a = p.parse_args()

torch.manual_seed(0)
dev = "cuda"
layer = nn.TransformerEncoderLayer(d_model=512, nhead=8, dim_feedforward=2048, batch_first=True)
model = nn.TransformerEncoder(layer, num_layers=a.layers, enable_nested_tensor=False).to(dev)
head = nn.Linear(512, 10).to(dev)
params = list(model.parameters()) + list(head.parameters())
opt = torch.optim.AdamW(params, lr=1e-4)
x = torch.randn(32, 128, 512, device=dev)
y = torch.randint(0, 10, (32,), device=dev)
loss_fn = nn.CrossEntropyLoss()


def forward(inp):
    return head(model(inp).mean(dim=1))


fwd = torch.compile(forward, mode="reduce-overhead") if a.compile else forward

times = []
for s in range(a.warmup + a.steps):
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    torch.cuda.nvtx.range_push("step")
    torch.cuda.nvtx.range_push("forward")
    out = fwd(x)
    loss = loss_fn(out, y)
    torch.cuda.nvtx.range_pop()
    torch.cuda.nvtx.range_push("backward")
    loss.backward()
    torch.cuda.nvtx.range_pop()
    torch.cuda.nvtx.range_push("optimizer")
    opt.step()
    opt.zero_grad(set_to_none=True)
    torch.cuda.nvtx.range_pop()
    torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()
    if s >= a.warmup:
        times.append(time.perf_counter() - t0)
print(f"median_step_ms {statistics.median(times) * 1e3:.3f}")

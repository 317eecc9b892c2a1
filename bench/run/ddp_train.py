"""A two-process (or more) DistributedDataParallel training loop for `nvscope run` under
torchrun: one output per rank (`--name=train_r%r`). Gloo carries the gradients, so every
rank may share one GPU (ranks pick cuda:LOCAL_RANK modulo the GPUs present).

torchrun --nproc_per_node=2 bench/run/ddp_train.py [--steps 10] [--backend nccl]
                                                  [--delay-rank R --delay-ms M]
--backend nccl: NCCL carries the gradients (one GPU a rank); --delay-rank: that rank sleeps M ms
in each step before its backward pass, so that it comes late to every all-reduce (the
straggler `nvscope merge` names; bench/run/ddp_merge.sh).
"""
import time
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn

p = argparse.ArgumentParser()
p.add_argument("--steps", type=int, default=10)
p.add_argument("--backend", default="gloo", choices=["gloo", "nccl"])
p.add_argument("--delay-rank", type=int, default=-1)
p.add_argument("--delay-ms", type=float, default=0.0)
a = p.parse_args()

dist.init_process_group(a.backend)
rank = dist.get_rank()
dev = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")) % torch.cuda.device_count())
torch.cuda.set_device(dev)
torch.manual_seed(rank)
model = nn.parallel.DistributedDataParallel(
    nn.Sequential(nn.Linear(512, 2048), nn.GELU(), nn.Linear(2048, 512)).to(dev), device_ids=[dev.index])
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
x = torch.randn(64, 512, device=dev)
for s in range(a.steps):
    torch.cuda.nvtx.range_push("step_%d" % s)
    opt.zero_grad(set_to_none=True)
    loss = model(x).square().mean()
    if rank == a.delay_rank:
        torch.cuda.synchronize()
        time.sleep(a.delay_ms / 1000.0)
    loss.backward()
    opt.step()
    torch.cuda.nvtx.range_pop()
torch.cuda.synchronize()
print("rank %d of %d: %d steps" % (rank, dist.get_world_size(), a.steps))
dist.destroy_process_group()

"""A two-process (or more) DistributedDataParallel training loop for `nvscope run` under
torchrun: one output per rank (`--name=train_r%r`). Gloo carries the gradients, so every
rank may share one GPU (ranks pick cuda:LOCAL_RANK modulo the GPUs present).

torchrun --nproc_per_node=2 bench/run/ddp_train.py [--steps 10] [--backend nccl]
                                                  [--delay-rank R --delay-ms M]
                                                  [--hosts-per-rank]
--backend nccl: NCCL carries the gradients (one GPU a rank); --delay-rank: that rank sleeps M ms
in each step before its backward pass, so that it comes late to every all-reduce (the
straggler `nvscope merge` names; bench/run/ddp_merge.sh).
--hosts-per-rank (with --backend nccl): NCCL on a machine of one GPU. NCCL refuses two ranks of
one host on one device ("Duplicate GPU detected"); each rank is given its own NCCL_HOSTID, so NCCL
takes the ranks for separate hosts and joins them by its socket transport over the loopback
interface. The collectives are then NCCL's own kernels on every rank, as on two GPUs, the two
processes time-sharing the one device.
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
p.add_argument("--hosts-per-rank", action="store_true")
a = p.parse_args()
if a.hosts_per_rank:
    os.environ["NCCL_HOSTID"] = "nvscope-rank-%s" % os.environ.get("RANK", "0")
    for k, v in (("NCCL_NET", "Socket"), ("NCCL_SOCKET_IFNAME", "lo"), ("NCCL_P2P_DISABLE", "1"),
                 ("NCCL_SHM_DISABLE", "1"), ("NCCL_IB_DISABLE", "1")):
        os.environ.setdefault(k, v)

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

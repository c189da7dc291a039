"""DDP training speed: weft vs gloo vs no communication, in the same run.

Two processes train an MLP with DistributedDataParallel; each round runs every
backend for --steps steps (after --warmup), rounds alternate the backends to
spread machine noise, and the median ms/step per backend is printed. "none"
is DDP with a communication hook that returns the gradients untouched: the
compute floor that no backend can beat. "sync" sends one 4-byte weft allreduce
per bucket and leaves the gradients untouched: the floor plus the wait for the
slower rank, which every real backend pays.

usage: bench_ddp.py [--params 137k|547k] [--steps N] [--rounds R] [--batch B]"""
import argparse
import os
import statistics
import sys
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "tests"))
import harness  # noqa: E402

import weft_torch  # noqa: E402,F401

# (input width, hidden width): 10->256 gives 136,970 parameters, 32->512 547,338.
SHAPES = {"137k": (10, 256), "547k": (32, 512)}


def mlp(shape):
    torch.manual_seed(0)
    d_in, w = shape
    return torch.nn.Sequential(torch.nn.Linear(d_in, w), torch.nn.ReLU(),
                               torch.nn.Linear(w, w), torch.nn.ReLU(),
                               torch.nn.Linear(w, w), torch.nn.ReLU(),
                               torch.nn.Linear(w, 10))


def no_comm_hook(state, bucket):
    fut = torch.futures.Future()
    fut.set_result(bucket.buffer())
    return fut


def sync_only_hook(group, bucket):
    # One 4-byte allreduce per bucket, gradients left untouched: the floor for
    # any backend, since a real one must also wait for the slower rank.
    flag = torch.zeros(1)
    fut = dist.all_reduce(flag, group=group, async_op=True).get_future()
    return fut.then(lambda _: bucket.buffer())


def timed_steps(ddp, opt, rank, args):
    d_in = SHAPES[args.params][0]
    g = torch.Generator().manual_seed(rank)
    xs = [torch.randn(args.batch, d_in, generator=g) for _ in range(4)]
    ys = [torch.randint(0, 10, (args.batch,), generator=g) for _ in range(4)]
    times = []
    for i in range(args.warmup + args.steps):
        t0 = time.perf_counter()
        loss = torch.nn.functional.cross_entropy(ddp(xs[i % 4]), ys[i % 4])
        opt.zero_grad()
        loss.backward()
        opt.step()
        if i >= args.warmup:
            times.append((time.perf_counter() - t0) * 1e3)
    return times


def body(rank, world, args):
    torch.set_num_threads(args.threads)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    weft = dist.new_group(backend="weft")
    groups = {"gloo": None, "weft": weft, "none": None, "sync": None}
    models = {}
    for name, group in groups.items():
        ddp = DDP(mlp(SHAPES[args.params]), process_group=group)
        if name == "none":
            ddp.register_comm_hook(None, no_comm_hook)
        if name == "sync":
            ddp.register_comm_hook(weft, sync_only_hook)
        models[name] = (ddp, torch.optim.SGD(ddp.parameters(), lr=0.01))
    per = {name: [] for name in groups}
    for r in range(args.rounds):
        order = list(groups) if r % 2 == 0 else list(reversed(groups))
        for name in order:
            dist.barrier()
            per[name] += timed_steps(*models[name], rank, args)
    if rank == 0:
        n = sum(p.numel() for p in models["weft"][0].module.parameters())
        med = {k: statistics.median(v) for k, v in per.items()}
        print(f"# DDP, {world} processes, {n} parameters, batch {args.batch}, "
              f"{args.rounds} rounds x {args.steps} steps, torch threads {args.threads}")
        for k in groups:
            print(f"{k:>5}: median {med[k]:7.2f} ms/step")
        gap_w, gap_g = med["weft"] - med["none"], med["gloo"] - med["none"]
        print(f"weft/gloo = {med['weft'] / med['gloo']:.2f}; above the floor: weft "
              f"{gap_w:+.2f} ms, gloo {gap_g:+.2f} ms, sync only {med['sync'] - med['none']:+.2f} ms")
    dist.destroy_process_group()


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--params", choices=SHAPES, default="137k")
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    harness.run(body, 2, a, timeout=1800)

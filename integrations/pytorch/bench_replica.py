"""What a replica commit in flight costs a DDP training step.

    weft-run -n 4 python3 bench_replica.py --hidden 1024 --steps 20 --rounds 3

Each rank trains an MLP (--layers layers of --hidden x --hidden) with
DistributedDataParallel over a weft group. Rounds alternate two modes, to
spread machine noise: "plain" steps, and steps that start a commit of the
model and optimizer state (weft_torch.StateReplica, commit(wait=False)) right
after the optimizer and wait for it just before the next commit, so that the
transfer runs during the next step's forward and backward. Rank 0 prints the
median ms/step of each mode and their ratio.
"""
import argparse
import statistics
import time

import torch
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

import weft_torch


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--hidden", type=int, default=1024)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    layers = []
    for _ in range(args.layers):
        layers += [torch.nn.Linear(args.hidden, args.hidden), torch.nn.Tanh()]
    model = torch.nn.Sequential(*layers)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    for q in model.parameters():
        opt.state[q]["momentum_buffer"] = torch.zeros_like(q)
    group = weft_torch.init_from_env()
    state = list(model.parameters()) + [opt.state[q]["momentum_buffer"] for q in model.parameters()]
    replica = weft_torch.StateReplica(group, state)
    replica.commit()
    ddp = DDP(model, process_group=group)
    x = torch.randn(args.batch, args.hidden)

    def steps(commit):
        in_flight = False
        t0 = time.perf_counter()
        for _ in range(args.steps):
            opt.zero_grad()
            F.mse_loss(ddp(x), x).backward()
            opt.step()
            if commit:
                if in_flight:
                    replica.wait()
                replica.commit(wait=False)
                in_flight = True
        if in_flight:
            replica.wait()
        return (time.perf_counter() - t0) / args.steps * 1e3

    steps(False)  # warm-up
    times = {"plain": [], "commit": []}
    for _ in range(args.rounds):
        times["plain"].append(steps(False))
        times["commit"].append(steps(True))
    if group.rank() == 0:
        plain, commit = statistics.median(times["plain"]), statistics.median(times["commit"])
        mib = sum(t.numel() * t.element_size() for t in state) / 2**20
        print("%d ranks, %.0f MiB of state per rank: %.1f ms/step plain, %.1f ms/step with a "
              "commit in flight each step: %.2fx" % (group.size(), mib, plain, commit,
                                                     commit / plain))


if __name__ == "__main__":
    main()

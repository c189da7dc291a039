"""DDP training that survives `kill -9` of a rank, with a standby and replicas.

    weft-run -n 4 --standby 1 python3 ddp_recovery.py --kill-rank 1 --kill-step 7

Every rank trains a small model with DistributedDataParallel over a weft group
and commits its model and optimizer state (and the step) to a replica every
--every steps. When a rank dies, the survivors' next collective raises; they
call weft_torch.replace (the standby takes the dead rank's number), and every
rank, the standby included, restores the last version whole on every rank and
goes on from its step with a new DDP over the new group. The parameters at the
end equal, bitwise, those of a run without the failure (--out saves rank 0's).
The survivors ask the launcher which rank died (weft_torch.replace without a
list); --kill-rank only says whom to kill.
"""
import argparse
import os
import signal

import torch
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

import weft_torch


def build():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.Tanh(), torch.nn.Linear(32, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    for p in model.parameters():  # momentum state exists from the start, so it can be replicated
        opt.state[p]["momentum_buffer"] = torch.zeros_like(p)
    step = torch.zeros(1, dtype=torch.int64)
    state = list(model.parameters()) + [opt.state[p]["momentum_buffer"]
                                        for p in model.parameters()] + [step]
    return model, opt, step, state


def batch(rank, step):
    g = torch.Generator().manual_seed(1000 * step + rank)
    x = torch.randn(8, 16, generator=g)
    return x, x.sum(dim=1, keepdim=True).tanh()


def train(args, group, model, opt, step, replica, original):
    rank = group.rank()
    ddp = DDP(model, process_group=group)
    while int(step) < args.steps:
        s = int(step)
        if original and rank == args.kill_rank and s == args.kill_step:
            os.kill(os.getpid(), signal.SIGKILL)
        try:
            x, y = batch(rank, s)
            opt.zero_grad()
            F.mse_loss(ddp(x), y).backward()
            opt.step()
            step += 1
            if int(step) % args.every == 0:
                replica.commit()
        except RuntimeError as failure:
            print("rank %d: step %d failed: %s" % (rank, s, str(failure).splitlines()[0]), flush=True)
            group, replaced = weft_torch.replace(group)  # the launcher says who died
            if replaced != 1:
                raise RuntimeError("no standby took the dead rank's place") from failure
            version = replica.restore(group)
            print("rank %d: restored version %d, step %d" % (rank, version, int(step)), flush=True)
            ddp = DDP(model, process_group=group)
    return group


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--every", type=int, default=2, help="commit every this many steps")
    p.add_argument("--kill-rank", type=int, default=-1)
    p.add_argument("--kill-step", type=int, default=-1)
    p.add_argument("--out", help="rank 0 saves the final parameters here")
    args = p.parse_args()
    torch.set_num_threads(1)
    model, opt, step, state = build()
    if os.environ.get("WEFT_STANDBY"):
        try:
            group = weft_torch.standby_wait()
        except RuntimeError:
            return  # the job ended without needing this standby
        replica = weft_torch.StateReplica(group, state)
        version = replica.restore(group)
        print("standby as rank %d: restored version %d, step %d" % (group.rank(), version,
                                                                    int(step)), flush=True)
        original = False
    else:
        group = weft_torch.init_from_env()
        replica = weft_torch.StateReplica(group, state)
        replica.commit()  # version 1: the state before any step
        original = True
    group = train(args, group, model, opt, step, replica, original)
    if group.rank() == 0 and args.out:
        torch.save([t.detach().clone() for t in model.parameters()], args.out)
    print("rank %d: done at step %d" % (group.rank(), int(step)), flush=True)


if __name__ == "__main__":
    main()

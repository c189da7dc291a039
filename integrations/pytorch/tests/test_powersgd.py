"""DistributedDataParallel with torch's PowerSGD communication hook over weft.

The hook's Future callbacks issue a new allreduce on the same group and block
in Future.wait() on it, so the group must complete that allreduce while one of
its callbacks is still running. A small MLP (one DDP bucket, so every rank
issues the hook's collectives in one order) trains from a fixed seed, with
PowerSGD compressing from iteration 2 on, over gloo and then over weft in the
same run: the final parameters must agree to rounding (with 3 ranks the two
backends may add the three contributions in different orders)."""
import sys
import time

import harness
import torch
import torch.distributed as dist
from torch.distributed.algorithms.ddp_comm_hooks import powerSGD_hook as powerSGD
from torch.nn.parallel import DistributedDataParallel as DDP

import weft_torch  # noqa: F401

STEPS = 8


def model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(),
                               torch.nn.Linear(32, 32), torch.nn.ReLU(),
                               torch.nn.Linear(32, 4))


def train(rank, group):
    ddp = DDP(model(), process_group=group)
    state = powerSGD.PowerSGDState(process_group=group, matrix_approximation_rank=1,
                                   start_powerSGD_iter=2)
    ddp.register_comm_hook(state, powerSGD.powerSGD_hook)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.05, momentum=0.9)
    g = torch.Generator().manual_seed(100 + rank)
    for _ in range(STEPS):
        x = torch.randn(8, 16, generator=g)
        y = torch.randint(0, 4, (8,), generator=g)
        loss = torch.nn.functional.cross_entropy(ddp(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert state.p_memory_dict, "PowerSGD never compressed a gradient"
    return [p.detach().clone() for p in ddp.module.parameters()]


def body(rank, world):
    dist.init_process_group("gloo", rank=rank, world_size=world)
    weft = dist.new_group(backend="weft")
    start = time.monotonic()
    ref = train(rank, None)
    mid = time.monotonic()
    got = train(rank, weft)
    end = time.monotonic()
    worst = max(float((a - b).abs().max()) for a, b in zip(ref, got))
    print(f"rank {rank}: gloo {mid - start:.2f} s, weft {end - mid:.2f} s, "
          f"largest difference {worst:.3g}", flush=True)
    for a, b in zip(ref, got):
        assert torch.allclose(a, b, rtol=1e-5, atol=1e-6), \
            f"PowerSGD over weft diverged from gloo (largest difference {worst})"
    assert not all(torch.equal(a, b) for a, b in zip(model().parameters(), got)), "no training"
    dist.destroy_process_group(weft)
    dist.destroy_process_group()


if __name__ == "__main__":
    harness.main(body, "POWERSGD", default_world=2,
                 timeout=int(sys.argv[2]) if len(sys.argv) > 2 else 120)

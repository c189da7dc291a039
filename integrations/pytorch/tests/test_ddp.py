"""DistributedDataParallel over the weft backend: a small MLP trained for 100
steps on 2 processes from a fixed seed must end with exactly the parameters
that the same training over gloo gives in the same run. Exact equality holds
because with 2 ranks every gradient element is a single a+b (IEEE addition is
commutative), whichever algorithm either backend uses."""
import harness
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

import weft_torch  # noqa: F401


def model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(),
                               torch.nn.Linear(256, 256), torch.nn.ReLU(),
                               torch.nn.Linear(256, 10))


def train(rank, group, steps=100):
    ddp = DDP(model(), process_group=group, bucket_cap_mb=0.25)  # several buckets in flight
    opt = torch.optim.SGD(ddp.parameters(), lr=0.05, momentum=0.9)
    g = torch.Generator().manual_seed(100 + rank)
    for _ in range(steps):
        x = torch.randn(32, 64, generator=g)
        y = torch.randint(0, 10, (32,), generator=g)
        loss = torch.nn.functional.cross_entropy(ddp(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return [p.detach().clone() for p in ddp.module.parameters()]


def body(rank, world):
    dist.init_process_group("gloo", rank=rank, world_size=world)
    weft = dist.new_group(backend="weft")
    ref = train(rank, None)
    got = train(rank, weft)
    same = all(torch.equal(a, b) for a, b in zip(ref, got))
    checksum = sum(float(p.double().sum()) for p in got)
    print(f"rank {rank}: weft checksum {checksum:.12f}, gloo "
          f"{sum(float(p.double().sum()) for p in ref):.12f}, bitwise equal: {same}")
    assert same, "DDP over weft diverged from DDP over gloo"
    start = model()  # and the run moved the parameters at all
    assert not all(torch.equal(a, b) for a, b in zip(start.parameters(), got))
    dist.destroy_process_group()


if __name__ == "__main__":
    harness.run(body, 2)

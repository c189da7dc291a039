"""all_reduce of sparse COO tensors over weft, against gloo in the same run.

Each case gives every rank a sparse tensor of its own (different nnz, indices
that overlap between ranks, duplicates within a rank, no entries at all on
some ranks), runs the same all_reduce over gloo and over weft, and requires
the same tensor back from both: sparse, coalesced, equal indices and values,
and equal to the sum computed here from every rank's input. Values are small
integers, so every order of addition gives the same bits. Last, DDP trains a
model whose nn.Embedding has sparse gradients (which DDP all_reduces as sparse
tensors) over both backends; the parameters must agree to rounding."""
import sys

import harness
import torch
import torch.distributed as dist

from torch.nn.parallel import DistributedDataParallel as DDP

import weft_torch  # noqa: F401


def coo(indices, values, size):
    return torch.sparse_coo_tensor(torch.tensor(indices, dtype=torch.int64), values, size)


def vector(rank, world, dtype):
    """1-D, nnz rank+2, overlapping across ranks, one duplicate index."""
    n = rank + 2
    idx = [[(rank * 3 + 2 * k) % 17 for k in range(n)] + [rank]]
    vals = torch.arange(1, n + 2, dtype=dtype) * (rank + 1)
    return coo(idx, vals, (17,))


def empty_on_one(rank, world, dtype):
    """Rank 1 has no entries; the others have some."""
    if rank == 1:
        return torch.sparse_coo_tensor(torch.zeros((1, 0), dtype=torch.int64),
                                       torch.zeros(0, dtype=dtype), (9,))
    return coo([[rank, 4, 8]], torch.tensor([1, 2, 3], dtype=dtype) + rank, (9,))


def empty_everywhere(rank, world, dtype):
    return torch.sparse_coo_tensor(torch.zeros((2, 0), dtype=torch.int64),
                                   torch.zeros(0, dtype=dtype), (4, 5))


def hybrid(rank, world, dtype):
    """2-D with one sparse and one dense dimension: rows of 3 values."""
    rows = [r for r in range(rank, 10, rank + 2)]
    vals = torch.arange(len(rows) * 3, dtype=dtype).reshape(-1, 3) + 10 * rank
    return coo([rows], vals, (10, 3))


def matrix(rank, world, dtype):
    """2-D, both dimensions sparse, uncoalesced input."""
    idx = [[rank, 2, 0, rank], [1, rank + 1, 3, 1]]
    return coo(idx, torch.tensor([5, 6, 7, 8], dtype=dtype) * (rank + 1), (4, 5))


CASES = [(vector, torch.float32), (vector, torch.int64), (vector, torch.float64),
         (empty_on_one, torch.float32), (empty_on_one, torch.int64),
         (empty_everywhere, torch.float32), (hybrid, torch.float32), (hybrid, torch.int64),
         (matrix, torch.float32), (matrix, torch.int64)]


def check_case(rank, world, weft, make, dtype):
    name = f"{make.__name__}/{dtype}"
    expected = make(0, world, dtype)
    for r in range(1, world):
        expected = expected + make(r, world, dtype)
    expected = expected.coalesce()
    ref = make(rank, world, dtype)
    dist.all_reduce(ref)
    got = make(rank, world, dtype)
    work = dist.all_reduce(got, group=weft, async_op=True)
    work.wait()
    for label, t in (("gloo", ref), ("weft", got)):
        assert t.is_sparse and t.is_coalesced(), f"{name}: {label} result not sparse and coalesced"
        assert t.dtype == dtype and t.shape == expected.shape, f"{name}: {label} dtype or shape"
    assert torch.equal(got._indices(), ref._indices()), \
        f"{name}: indices {got._indices().tolist()} vs gloo {ref._indices().tolist()}"
    assert torch.equal(got._values(), ref._values()), \
        f"{name}: values {got._values().tolist()} vs gloo {ref._values().tolist()}"
    assert torch.equal(got._indices(), expected._indices()), f"{name}: indices vs expected"
    assert torch.equal(got._values(), expected._values()), f"{name}: values vs expected"
    value = work.get_future().value()[0]
    assert torch.equal(value.to_dense(), expected.to_dense()), f"{name}: future value"


def refusals(rank, world, weft):
    t = vector(rank, world, torch.float32)
    try:
        dist.all_reduce(t, op=dist.ReduceOp.MAX, group=weft)
        raise AssertionError("a sparse MAX was accepted")
    except RuntimeError as e:
        assert "SUM" in str(e), str(e)
    mismatched = coo([[0]], torch.ones(1), (5 + rank,))
    try:
        dist.all_reduce(mismatched, group=weft)
        raise AssertionError("sparse tensors of different sizes were accepted")
    except RuntimeError as e:
        assert "size" in str(e), str(e)
    after = torch.ones(3)
    dist.all_reduce(after, group=weft)  # the group still works
    assert torch.equal(after, torch.full((3,), float(world)))


class Bag(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.emb = torch.nn.Embedding(50, 8, sparse=True)
        self.out = torch.nn.Linear(8, 3)

    def forward(self, x):
        return self.out(self.emb(x).mean(1))


def train_sparse_embedding(rank, group):
    ddp = DDP(Bag(), process_group=group)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
    g = torch.Generator().manual_seed(100 + rank)
    for _ in range(10):
        x = torch.randint(0, 50, (4, 5), generator=g)
        y = torch.randint(0, 3, (4,), generator=g)
        loss = torch.nn.functional.cross_entropy(ddp(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return [p.detach().clone() for p in ddp.module.parameters()]


def ddp_sparse_embedding(rank, world, weft):
    ref = train_sparse_embedding(rank, None)
    got = train_sparse_embedding(rank, weft)
    for a, b in zip(ref, got):
        assert torch.allclose(a, b, rtol=1e-5, atol=1e-6), "DDP with sparse gradients diverged"
    assert not torch.equal(got[0], Bag().emb.weight.detach()), "the embedding never moved"


def body(rank, world):
    dist.init_process_group("gloo", rank=rank, world_size=world)
    weft = dist.new_group(backend="weft")
    for make, dtype in CASES:
        check_case(rank, world, weft, make, dtype)
    refusals(rank, world, weft)
    ddp_sparse_embedding(rank, world, weft)
    print(f"rank {rank}: {len(CASES)} sparse cases and DDP with sparse gradients "
          "equal to gloo's", flush=True)
    dist.destroy_process_group(weft)
    dist.destroy_process_group()


if __name__ == "__main__":
    harness.main(body, "SPARSE", default_world=int(sys.argv[1]) if len(sys.argv) > 1 else 2,
                 timeout=120)

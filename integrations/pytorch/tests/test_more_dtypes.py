"""Dtypes weft has no type for, through the weft backend. Calls that only move
data take any dtype (bool, int16 and complex here travel as bytes); gloo takes
complex send/recv, so scripts pass them. Reductions: complex SUM and AVG as
pairs of reals (torch itself turns a complex all_reduce into one on real
pairs; reduce reaches weft as complex), bool as uint8 with SUM as logical or
and PRODUCT as logical and, as torch's NCCL backend does. What has no meaning
(complex MAX, bool AVG, any int16 reduction) is refused with a sentence, and
the group still works after. Expected values come from every rank's known
inputs.

usage: test_more_dtypes.py NPROCS"""
import harness
import torch
import torch.distributed as dist

import weft_torch  # noqa: F401  (registers the backend)


def cvalues(rank, n=6, dtype=torch.complex64):
    re = torch.arange(n, dtype=torch.float64) + 10 * rank
    return torch.complex(re, -2 * re - 1).to(dtype)


def bvalues(rank, n=8):
    """Bits chosen so that or, and, min and max differ across ranks."""
    return torch.tensor([((i >> (rank % 3)) & 1) == 1 for i in range(n)])


def ivalues(rank, n=5):
    return (torch.arange(n, dtype=torch.int16) - 300) * (rank + 1)


def expect(what, got, want):
    if got.dtype == torch.bool and want.dtype == torch.bool:
        # Compare the bytes: a bool holding 2 or 3 (a plain uint8 sum) still reads as True.
        got, want = got.view(torch.uint8), want.view(torch.uint8)
    if got.dtype != want.dtype or not torch.equal(got, want):
        raise AssertionError(f"{what}: got {got.tolist()}, want {want.tolist()}")


def refused(what, fn, words):
    try:
        fn()
    except (RuntimeError, ValueError) as e:
        assert words in str(e), f"{what}: {e}"
        return
    raise AssertionError(f"{what} was accepted")


def body(rank, world):
    dist.init_process_group("weft", init_method="env://")
    nxt, prv = (rank + 1) % world, (rank - 1) % world
    for dtype in (torch.complex64, torch.complex128):
        csum = sum(cvalues(r, dtype=dtype) for r in range(world))
        t = cvalues(rank, dtype=dtype)
        dist.all_reduce(t)
        expect(f"all_reduce {dtype}", t, csum)
        t = cvalues(rank, dtype=dtype)
        dist.reduce(t, dst=world - 1)
        if rank == world - 1:
            expect(f"reduce {dtype}", t, csum)
        t = cvalues(rank, dtype=dtype)
        dist.broadcast(t, src=1)
        expect(f"broadcast {dtype}", t, cvalues(1, dtype=dtype))
        outs = [torch.zeros(6, dtype=dtype) for _ in range(world)]
        dist.all_gather(outs, cvalues(rank, dtype=dtype))
        for r in range(world):
            expect(f"all_gather {dtype} from {r}", outs[r], cvalues(r, dtype=dtype))
        got = torch.zeros(6, dtype=dtype)
        ops = [dist.P2POp(dist.isend, cvalues(rank, dtype=dtype), nxt), dist.P2POp(dist.irecv, got, prv)]
        for w in dist.batch_isend_irecv(ops):
            w.wait()
        expect(f"isend/irecv {dtype}", got, cvalues(prv, dtype=dtype))
        refused(f"reduce MAX {dtype}",
                lambda: dist.reduce(cvalues(rank, dtype=dtype), dst=0, op=dist.ReduceOp.MAX),
                "complex")

    bs = [bvalues(r) for r in range(world)]
    for name, op, want in [("SUM", dist.ReduceOp.SUM, torch.stack(bs).any(0)),
                           ("PRODUCT", dist.ReduceOp.PRODUCT, torch.stack(bs).all(0)),
                           ("MIN", dist.ReduceOp.MIN, torch.stack(bs).all(0)),
                           ("MAX", dist.ReduceOp.MAX, torch.stack(bs).any(0))]:
        t = bvalues(rank)
        dist.all_reduce(t, op=op)
        expect(f"all_reduce bool {name}", t, want)
    t = bvalues(rank)
    dist.reduce(t, dst=0, op=dist.ReduceOp.SUM)
    if rank == 0:
        expect("reduce bool SUM", t, torch.stack(bs).any(0))
    t = bvalues(rank)
    dist.broadcast(t, src=world - 1)
    expect("broadcast bool", t, bvalues(world - 1))
    out = torch.zeros(world * 8, dtype=torch.bool)
    dist.all_gather_into_tensor(out, bvalues(rank))
    expect("all_gather_into_tensor bool", out, torch.cat(bs))
    refused("all_reduce bool AVG", lambda: dist.all_reduce(bvalues(rank), op=dist.ReduceOp.AVG),
            "AVG of bool")

    # int16: moved as bytes, refused in reductions.
    a2a_out = torch.zeros(world * 5, dtype=torch.int16)
    dist.all_to_all_single(a2a_out, torch.cat([ivalues(rank) + p for p in range(world)]))
    expect("all_to_all_single int16", a2a_out, torch.cat([ivalues(r) + rank for r in range(world)]))
    got = torch.zeros(5, dtype=torch.int16)
    if rank % 2 == 0:
        dist.send(ivalues(rank), nxt)
        dist.recv(got, prv)
    else:
        dist.recv(got, prv)
        dist.send(ivalues(rank), nxt)
    expect("send/recv int16", got, ivalues(prv))
    outs = [torch.zeros(5, dtype=torch.int16) for _ in range(world)] if rank == 0 else None
    dist.gather(ivalues(rank), outs, dst=0)
    if rank == 0:
        for r in range(world):
            expect(f"gather int16 from {r}", outs[r], ivalues(r))
    out = torch.zeros(5, dtype=torch.int16)
    dist.scatter(out, [ivalues(1) + p for p in range(world)] if rank == 1 else None, src=1)
    expect("scatter int16", out, ivalues(1) + rank)
    refused("all_reduce int16", lambda: dist.all_reduce(ivalues(rank)), "cannot reduce")
    harness.check_still_works(world)
    dist.destroy_process_group()


if __name__ == "__main__":
    harness.main(body, "MORE-DTYPES")

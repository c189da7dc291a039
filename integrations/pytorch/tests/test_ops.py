"""Reduction ops beyond SUM/PRODUCT/MIN/MAX/AVG through the weft backend:
BAND, BOR and BXOR on every integer dtype and bool (all_reduce, reduce,
reduce_scatter), against torch's own bitwise ops over every rank's known
inputs, and all_reduce also against gloo's result (gloo has no
reduce_scatter and refuses bool); and
PREMUL_SUM (torch's _make_nccl_premul_sum, which gloo refuses) with a float
factor and a tensor factor, against the sum each rank computes from every
rank's known inputs. BAND on a float tensor is refused with a sentence, and
the group still works after.

usage: test_ops.py NPROCS"""
import harness
import torch
import torch.distributed as dist

import weft_torch  # noqa: F401  (registers the backend)

BITWISE = (dist.ReduceOp.BAND, dist.ReduceOp.BOR, dist.ReduceOp.BXOR)
INT_TYPES = (torch.int8, torch.uint8, torch.int32, torch.int64, torch.bool)
FUNCS = {dist.ReduceOp.BAND: torch.bitwise_and, dist.ReduceOp.BOR: torch.bitwise_or,
         dist.ReduceOp.BXOR: torch.bitwise_xor}


def bits(rank, dtype, n=37):
    """Bits that differ across ranks and positions; negative values for signed types."""
    i = torch.arange(n, dtype=torch.int64)
    v = (i * 37 + rank * 101) % 251
    if dtype == torch.bool:
        return ((v >> (rank % 3)) & 1).to(torch.bool)
    if dtype in (torch.int8, torch.int32, torch.int64):
        v = v - 125
    return v.to(dtype)


def reference(op, tensors):
    out = tensors[0]
    for t in tensors[1:]:
        out = FUNCS[op](out, t)
    return out


def expect(what, got, want):
    if got.dtype != want.dtype or not torch.equal(got, want):
        raise AssertionError(f"{what}: got {got.tolist()}, want {want.tolist()}")


def check_bitwise(rank, world, weft):
    for dtype in INT_TYPES:
        for op in BITWISE:
            what = f"{op} {dtype}"
            want = reference(op, [bits(r, dtype) for r in range(world)])
            b = bits(rank, dtype)
            dist.all_reduce(b, op=op, group=weft)
            expect(f"all_reduce {what}", b, want)
            if dtype != torch.bool:  # gloo takes no bool here ("Invalid scalar type")
                a = bits(rank, dtype)
                dist.all_reduce(a, op=op)
                expect(f"all_reduce {what} (gloo)", b, a)
            b = bits(rank, dtype)
            dist.reduce(b, dst=world - 1, op=op, group=weft)
            if rank == world - 1:
                expect(f"reduce {what}", b, want)
            # gloo has no reduce_scatter: the reference is computed here.
            ins = [bits(rank * world + j, dtype, 5) for j in range(world)]
            want = reference(op, [bits(r * world + rank, dtype, 5) for r in range(world)])
            b = torch.empty(5, dtype=dtype)
            dist.reduce_scatter(b, ins, op=op, group=weft)
            expect(f"reduce_scatter {what}", b, want)


def values(rank, dtype, n=1001):
    return ((torch.arange(n) * 7 + rank * 13) % 41 - 20).to(dtype)


def check_premul(rank, world, weft):
    for dtype in (torch.float32, torch.float64, torch.bfloat16, torch.int32):
        for factor in (0.5, [torch.tensor([2.0])]):  # torch 1.13 takes a list of tensors
            f = factor if isinstance(factor, float) else factor[0].item()
            want = sum(values(r, dtype) * torch.tensor(f).to(dtype) for r in range(world))
            t = values(rank, dtype)
            dist.all_reduce(t, op=dist._make_nccl_premul_sum(factor), group=weft)
            expect(f"premul all_reduce {dtype} x {f}", t, want)
            t = values(rank, dtype)
            dist.reduce(t, dst=0, op=dist._make_nccl_premul_sum(factor), group=weft)
            if rank == 0:
                expect(f"premul reduce {dtype} x {f}", t, want)
            out = torch.empty(1001, dtype=dtype)
            dist.reduce_scatter(out, [values(rank, dtype) for _ in range(world)],
                                op=dist._make_nccl_premul_sum(factor), group=weft)
            expect(f"premul reduce_scatter {dtype} x {f}", out, want)


def body(rank, world):
    dist.init_process_group("gloo", init_method="env://")
    weft = dist.new_group(backend="weft")
    check_bitwise(rank, world, weft)
    check_premul(rank, world, weft)
    try:
        dist.all_reduce(torch.ones(3), op=dist.ReduceOp.BAND, group=weft)
        raise AssertionError("BAND on float32 was accepted")
    except RuntimeError as e:
        assert "integer datatypes only" in str(e), e
    t = torch.ones(3)
    dist.all_reduce(t, group=weft)
    expect("sum after a refusal", t, torch.full((3,), float(world)))


if __name__ == "__main__":
    import sys
    harness.run(body, int(sys.argv[1]))

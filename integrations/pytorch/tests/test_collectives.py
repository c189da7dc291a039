"""torch.distributed collectives on CPU tensors through the weft backend,
compared in the same run with gloo's results (and, where gloo lacks an op or a
dtype, with a float64 reference computed from every rank's known inputs).

usage: test_collectives.py NPROCS"""
import sys

import harness
import torch
import torch.distributed as dist

import weft_torch  # noqa: F401  (registers the backend)

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16,
          torch.int8, torch.uint8, torch.int32, torch.int64]
OPS = {"sum": dist.ReduceOp.SUM, "product": dist.ReduceOp.PRODUCT,
       "min": dist.ReduceOp.MIN, "max": dist.ReduceOp.MAX}


def inputs(rank, dtype, n, op="sum"):
    """Rank `rank`'s input: small values so that products and int8 sums stay in range."""
    g = torch.Generator().manual_seed(1000 + 17 * rank + n)
    if dtype.is_floating_point:
        lo, hi = (0.5, 1.5) if op == "product" else (-1.0, 1.0)
        return (torch.rand(n, generator=g, dtype=torch.float64) * (hi - lo) + lo).to(dtype)
    lo = 0 if dtype == torch.uint8 else -3
    hi = 3 if op != "product" else 2
    return torch.randint(lo, hi + 1, (n,), generator=g, dtype=torch.int64).to(dtype)


def reference(world, dtype, n, op):
    vals = torch.stack([inputs(r, dtype, n, op).to(torch.float64) for r in range(world)])
    red = {"sum": vals.sum(0), "product": vals.prod(0), "min": vals.min(0).values,
           "max": vals.max(0).values, "avg": vals.mean(0)}[op]
    return red


def tolerance(dtype, world):
    """Float sums in a different order differ in the last bits; fp16/bf16
    accumulate in float32 in weft and round once, gloo rounds every step."""
    if not dtype.is_floating_point:
        return 0.0
    eps = {torch.float16: 2e-3, torch.bfloat16: 1.6e-2, torch.float32: 1e-6,
           torch.float64: 1e-12}[dtype]
    return 4 * eps * world


def expect_close(what, got, want, tol):
    got64, want64 = got.to(torch.float64), want.to(torch.float64)
    err = (got64 - want64).abs().max().item() if got.numel() else 0.0
    scale = max(1.0, want64.abs().max().item() if want.numel() else 1.0)
    if err > tol * scale:
        raise AssertionError(f"{what}: max error {err} > {tol * scale}\n got {got}\n want {want}")


def check_allreduce(rank, world, weft, counts):
    for dtype in DTYPES:
        for name, op in list(OPS.items()) + [("avg", dist.ReduceOp.AVG)]:
            if name == "avg" and not dtype.is_floating_point:
                continue
            for n in counts:
                x = inputs(rank, dtype, n, name)
                mine = x.clone()
                dist.all_reduce(mine, op=op, group=weft)
                want = reference(world, dtype, n, name).to(dtype)
                theirs = x.clone()
                try:
                    gop = dist.ReduceOp.SUM if name == "avg" else op
                    dist.all_reduce(theirs, op=gop)
                    if name == "avg":
                        theirs = (theirs.to(torch.float64) / world).to(dtype)
                    want = theirs  # gloo ran: compare with it
                except RuntimeError:
                    pass  # gloo lacks this dtype/op: the float64 reference stands
                tol = tolerance(dtype, world)
                if world == 2 and name == "sum" and dtype in (torch.float32, torch.float64):
                    tol = 0.0  # a+b is commutative: both backends must agree bit for bit
                expect_close(f"allreduce {name} {dtype} n={n}", mine, want, tol)


def check_rooted(rank, world, weft):
    for root in range(world):
        for dtype in (torch.float32, torch.int64, torch.bfloat16):
            x = inputs(rank, dtype, 1000)
            mine, theirs = x.clone(), x.clone()
            dist.broadcast(mine, root, group=weft)
            try:
                dist.broadcast(theirs, root)
            except RuntimeError:  # gloo lacks bfloat16 here: the root's input is the answer
                theirs = inputs(root, dtype, 1000)
            assert torch.equal(mine, theirs), f"broadcast root {root} {dtype}"
            mine = x.clone()
            dist.reduce(mine, root, op=dist.ReduceOp.MAX, group=weft)
            if rank == root:
                want = reference(world, dtype, 1000, "max").to(dtype)
                assert torch.equal(mine, want), f"reduce max root {root} {dtype}"
        outs = [torch.zeros(7) for _ in range(world)] if rank == root else None
        x = torch.full((7,), float(rank))
        dist.gather(x, outs, dst=root, group=weft)
        if rank == root:
            assert all(torch.equal(outs[r], torch.full((7,), float(r))) for r in range(world))
        ins = [torch.full((5,), float(10 * r + root)) for r in range(world)] if rank == root else None
        out = torch.zeros(5)
        dist.scatter(out, ins, src=root, group=weft)
        assert torch.equal(out, torch.full((5,), float(10 * rank + root))), "scatter"


def check_gathers(rank, world, weft):
    for dtype in (torch.float32, torch.float16, torch.int32, torch.uint8):
        for n in (1, 1000, 300001):
            x = inputs(rank, dtype, n)
            mine = [torch.empty(n, dtype=dtype) for _ in range(world)]
            theirs = [torch.empty(n, dtype=dtype) for _ in range(world)]
            dist.all_gather(mine, x, group=weft)
            dist.all_gather(theirs, x)
            assert all(torch.equal(a, b) for a, b in zip(mine, theirs)), f"all_gather {dtype} {n}"
            flat = torch.empty(n * world, dtype=dtype)
            dist.all_gather_into_tensor(flat, x, group=weft)
            assert torch.equal(flat, torch.cat(theirs)), f"all_gather_into_tensor {dtype} {n}"
    for dtype in (torch.float32, torch.int64):
        n = 4096
        ins = [inputs(rank, dtype, n + r) [:n] for r in range(world)]
        out = torch.empty(n, dtype=dtype)
        dist.reduce_scatter(out, [t.clone() for t in ins], group=weft)
        full = torch.stack([torch.cat([inputs(r, dtype, n + k)[:n] for k in range(world)])
                            for r in range(world)]).to(torch.float64).sum(0)
        expect_close(f"reduce_scatter {dtype}", out, full[rank * n:(rank + 1) * n].to(dtype),
                     tolerance(dtype, world))
        out2 = torch.empty(n, dtype=dtype)
        dist.reduce_scatter_tensor(out2, torch.cat(ins), group=weft)
        assert torch.equal(out, out2), "reduce_scatter_tensor differs from reduce_scatter"


def check_alltoall(rank, world, weft):
    x = torch.arange(world * 6, dtype=torch.float32) + 100 * rank
    mine, theirs = torch.empty_like(x), torch.empty_like(x)
    dist.all_to_all_single(mine, x, group=weft)
    dist.all_to_all_single(theirs, x)
    assert torch.equal(mine, theirs), "all_to_all_single"
    # Uneven splits: rank r sends r+p+1 rows of 3 to rank p.
    ins = [rank + p + 1 for p in range(world)]
    outs = [p + rank + 1 for p in range(world)]
    x = torch.cat([torch.full((ins[p], 3), float(100 * rank + p)) for p in range(world)])
    mine = torch.empty(sum(outs), 3)
    dist.all_to_all_single(mine, x, outs, ins, group=weft)
    want = torch.cat([torch.full((outs[p], 3), float(100 * p + rank)) for p in range(world)])
    assert torch.equal(mine, want), "all_to_all_single with splits"
    xs = [torch.full((p + 2,), float(10 * rank + p)) for p in range(world)]
    ys = [torch.empty(rank + 2) for _ in range(world)]
    dist.all_to_all(ys, xs, group=weft)
    assert all(torch.equal(ys[p], torch.full((rank + 2,), float(10 * p + rank)))
               for p in range(world)), "all_to_all list"


def check_p2p(rank, world, weft):
    right, left = (rank + 1) % world, (rank - 1) % world
    big = 3 << 20  # 12 MiB of float32: beyond any FIFO, so ordering must not deadlock
    out = torch.full((big,), float(rank))
    got = torch.empty(big)
    ops = [dist.P2POp(dist.isend, out, right, group=weft),
           dist.P2POp(dist.irecv, got, left, group=weft)]
    for w in dist.batch_isend_irecv(ops):
        w.wait()
    assert torch.equal(got, torch.full((big,), float(left))), "batch_isend_irecv ring"
    small = torch.tensor([rank * 1.5])
    if rank % 2 == 0:
        dist.send(small, right, group=weft)
        dist.recv(small, left, group=weft)
    else:
        got = torch.empty(1)
        dist.recv(got, left, group=weft)
        dist.send(small, right, group=weft)
        small = got
    if world % 2 == 0 or rank != 0:
        assert small.item() == left * 1.5, f"send/recv got {small.item()}"


def check_async_and_groups(rank, world, weft):
    ts = [torch.full((1000,), float(rank + i)) for i in range(8)]
    works = [dist.all_reduce(t, group=weft, async_op=True) for t in ts]
    futs = [w.get_future() for w in works]
    torch.futures.wait_all(futs)
    for i, t in enumerate(ts):
        assert torch.equal(t, torch.full((1000,), float(sum(range(world)) + world * i)))
    fut = dist.all_reduce(torch.ones(3), group=weft, async_op=True).get_future()
    chained = fut.then(lambda f: f.value()[0] * 2)
    assert torch.equal(chained.wait(), torch.full((3,), 2.0 * world)), "future.then"
    cs = [torch.full((5,), float(rank)), torch.full((3,), 1.0)]
    dist.all_reduce_coalesced(cs, group=weft)
    assert torch.equal(cs[1], torch.full((3,), float(world))), "all_reduce_coalesced"
    dist.barrier(group=weft)
    if world >= 3:  # a subgroup of ranks 0 and 2 (new_group is called by every rank)
        sub = dist.new_group([0, 2], backend="weft")
        if rank in (0, 2):
            t = torch.tensor([float(rank)])
            dist.all_reduce(t, group=sub)
            assert t.item() == 2.0, "new_group allreduce"
    try:  # bad input is a Python exception with weft's sentence, not a crash
        dist.all_reduce(torch.zeros(4, dtype=torch.int16), group=weft)
        raise AssertionError("int16 allreduce was accepted")
    except RuntimeError as e:
        assert "weft" in str(e), str(e)
    try:  # non-contiguous tensors work (test_layouts.py); shared elements cannot take results
        dist.all_reduce(torch.zeros(1, 4).expand(4, 4), group=weft)
        raise AssertionError("an expanded tensor was accepted")
    except RuntimeError as e:
        assert "share memory" in str(e), str(e)


def body(rank, world):
    dist.init_process_group("gloo", rank=rank, world_size=world)
    weft = dist.new_group(backend="weft")
    assert dist.get_backend(weft) == "weft"
    check_allreduce(rank, world, weft, (1, 7, 1024, 70001))
    check_rooted(rank, world, weft)
    check_gathers(rank, world, weft)
    check_alltoall(rank, world, weft)
    check_p2p(rank, world, weft)
    check_async_and_groups(rank, world, weft)
    dist.destroy_process_group()
    if rank == 0:
        print(f"torch {torch.__version__}: weft matched gloo on {world} processes "
              f"({len(DTYPES)} dtypes x 5 ops x 4 sizes allreduce, rooted, gathers, "
              "all-to-all, p2p, async, groups)")


if __name__ == "__main__":
    harness.run(body, int(sys.argv[1]) if len(sys.argv) > 1 else 2)

"""Tensors that are not contiguous (a transpose, channels_last, a slice with a
step) through every collective of the weft backend. gloo takes such tensors,
so scripts pass them; weft runs them through contiguous stand-ins and must
give each element its right value in logical order, also when the ranks'
tensors have different layouts. The expected values come from every rank's
known inputs (gloo is no reference here: on a slice with a step it returns
wrong values). Parameters that require grad take results as data, as with
gloo. A tensor made by expand() cannot receive results: refused with a
sentence, and the group still works after.

usage: test_layouts.py NPROCS"""
import harness
import torch
import torch.distributed as dist

import weft_torch  # noqa: F401  (registers the backend)


def values(rank, shape, salt=0):
    """Rank `rank`'s logical values: distinct, exact in float32 sums."""
    n = 1
    for d in shape:
        n *= d
    return (torch.arange(n, dtype=torch.float32) + 1000 * rank + 100000 * salt).reshape(shape)


def layout(t, kind):
    """The same logical values as `t` (4-d), laid out as `kind`."""
    if kind == "contiguous":
        return t.clone()
    if kind == "channels_last":
        return t.contiguous(memory_format=torch.channels_last)
    if kind == "transposed":  # a permuted view of a contiguous buffer
        return t.permute(3, 2, 1, 0).contiguous().permute(3, 2, 1, 0)
    if kind == "strided":  # every other element of a larger buffer
        big = torch.zeros(t.shape[:-1] + (2 * t.shape[-1],), dtype=t.dtype)
        view = big[..., ::2]
        view.copy_(t)
        return view
    raise ValueError(kind)


KINDS = ["channels_last", "transposed", "strided"]
SHAPE = (2, 3, 4, 5)


def expect(what, got, want):
    if not torch.equal(got, want):
        bad = (got != want).nonzero()[:3].tolist()
        raise AssertionError(f"{what}: wrong values at {bad}")


def body(rank, world):
    dist.init_process_group("weft", init_method="env://")
    total = sum(values(r, SHAPE) for r in range(world))
    # Each rank uses its own layout for the same call: logical order must win.
    mine = KINDS[rank % len(KINDS)]
    for kind in KINDS + ["per-rank"]:
        k = mine if kind == "per-rank" else kind
        t = layout(values(rank, SHAPE), k)
        dist.all_reduce(t)
        expect(f"all_reduce {kind}", t, total)
        assert not t.is_contiguous(), "the caller's tensor keeps its layout"

        t = layout(values(rank, SHAPE), k)
        work = dist.all_reduce(t, op=dist.ReduceOp.MAX, async_op=True)
        work.wait()
        expect(f"all_reduce async {kind}", t, values(world - 1, SHAPE))

        t = layout(values(rank, SHAPE), k)
        dist.broadcast(t, src=world - 1)
        expect(f"broadcast {kind}", t, values(world - 1, SHAPE))

        t = layout(values(rank, SHAPE), k)
        dist.reduce(t, dst=0)
        if rank == 0:
            expect(f"reduce {kind}", t, total)

        outs = [layout(torch.zeros(SHAPE), k) for _ in range(world)]
        dist.all_gather(outs, layout(values(rank, SHAPE), k))
        for r in range(world):
            expect(f"all_gather {kind} block {r}", outs[r], values(r, SHAPE))

        out = layout(torch.zeros((world * 2,) + SHAPE[1:]), k)
        dist.all_gather_into_tensor(out, layout(values(rank, SHAPE), k))
        expect(f"all_gather_into_tensor {kind}", out,
               torch.cat([values(r, SHAPE) for r in range(world)]))

        ins = [layout(values(rank, SHAPE, salt=p), k) for p in range(world)]
        out = layout(torch.zeros(SHAPE), k)
        dist.reduce_scatter(out, ins)
        expect(f"reduce_scatter {kind}", out, sum(values(r, SHAPE, salt=rank) for r in range(world)))

        big = layout(torch.cat([values(rank, SHAPE, salt=p) for p in range(world)]), k)
        out = layout(torch.zeros(SHAPE), k)
        dist.reduce_scatter_tensor(out, big)
        expect(f"reduce_scatter_tensor {kind}", out,
               sum(values(r, SHAPE, salt=rank) for r in range(world)))

        a2a_in = layout(torch.cat([values(rank, SHAPE, salt=p) for p in range(world)]), k)
        a2a_out = layout(torch.zeros((world * 2,) + SHAPE[1:]), k)
        dist.all_to_all_single(a2a_out, a2a_in)
        expect(f"all_to_all_single {kind}", a2a_out,
               torch.cat([values(r, SHAPE, salt=rank) for r in range(world)]))

        outs = [layout(torch.zeros(SHAPE), k) for _ in range(world)]
        dist.all_to_all(outs, [layout(values(rank, SHAPE, salt=p), k) for p in range(world)])
        for r in range(world):
            expect(f"all_to_all {kind} from {r}", outs[r], values(r, SHAPE, salt=rank))

        outs = [layout(torch.zeros(SHAPE), k) for _ in range(world)] if rank == 1 else None
        dist.gather(layout(values(rank, SHAPE), k), outs, dst=1)
        if rank == 1:
            for r in range(world):
                expect(f"gather {kind} from {r}", outs[r], values(r, SHAPE))

        out = layout(torch.zeros(SHAPE), k)
        src = [layout(values(0, SHAPE, salt=p), k) for p in range(world)] if rank == 0 else None
        dist.scatter(out, src, src=0)
        expect(f"scatter {kind}", out, values(0, SHAPE, salt=rank))

        ts = [layout(values(rank, SHAPE), k), layout(values(rank, SHAPE, salt=1), "contiguous")]
        dist.all_reduce_coalesced(ts)
        expect(f"all_reduce_coalesced {kind}", ts[0], total)
        expect(f"all_reduce_coalesced {kind} (second)", ts[1],
               sum(values(r, SHAPE, salt=1) for r in range(world)))

        # A ring of sends and receives, blocking (even ranks send first) and batched.
        nxt, prv = (rank + 1) % world, (rank - 1) % world
        got = layout(torch.zeros(SHAPE), k)
        if rank % 2 == 0:
            dist.send(layout(values(rank, SHAPE), k), nxt)
            dist.recv(got, prv)
        else:
            dist.recv(got, prv)
            dist.send(layout(values(rank, SHAPE), k), nxt)
        expect(f"send/recv {kind}", got, values(prv, SHAPE))
        got = layout(torch.zeros(SHAPE), k)
        ops = [dist.P2POp(dist.isend, layout(values(rank, SHAPE, salt=2), k), nxt),
               dist.P2POp(dist.irecv, got, prv)]
        for w in dist.batch_isend_irecv(ops):
            w.wait()
        expect(f"batch_isend_irecv {kind}", got, values(prv, SHAPE, salt=2))

    # Parameters (leaves that require grad) take results as data, as with gloo:
    # a channels_last conv weight, a transposed one, and a contiguous one whose
    # own block an all-to-all copies locally.
    for k in ["channels_last", "transposed", "contiguous"]:
        p = torch.nn.Parameter(layout(values(rank, SHAPE), k))
        dist.all_reduce(p)
        expect(f"all_reduce Parameter {k}", p.detach(), total)
        dist.broadcast(p, src=0)
        expect(f"broadcast Parameter {k}", p.detach(), total)
        p = torch.nn.Parameter(layout(torch.zeros((world * 2,) + SHAPE[1:]), k))
        dist.all_to_all_single(p, torch.cat([values(rank, SHAPE, salt=q) for q in range(world)]),
                               [2] * world, [2] * world)  # splits: the path with a local copy
        expect(f"all_to_all_single into a Parameter {k}", p.detach(),
               torch.cat([values(r, SHAPE, salt=rank) for r in range(world)]))
        assert p.is_leaf and p.requires_grad and p.grad_fn is None

    # An expanded tensor shares memory between elements: refused, with a sentence.
    shared = torch.ones(1, 5).expand(4, 5)
    try:
        dist.all_reduce(shared)
        raise AssertionError("all_reduce on an expanded tensor was accepted")
    except RuntimeError as e:
        assert "share memory" in str(e), str(e)
    harness.check_still_works(world)
    dist.destroy_process_group()


if __name__ == "__main__":
    harness.main(body, "LAYOUTS")

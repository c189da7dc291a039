"""A weft group's completion thread: what runs on it, and tearing the group
down while it still needs Python.

Python drops the last reference to a group with the GIL held, so the group's
destructor starts with it. The destructor waits for the group's completion
thread, and that thread takes the GIL for Python work of its own: a future
callback (`then`), or the last reference to a tensor whose Python object
torch kept alive from C++. Holding the GIL through that wait deadlocked (a
hang in destroy_process_group, seen once in CI). Each case makes the thread
need the GIL while the destructor waits: rank 1 joins the collective late,
so it completes only after rank 0 has started tearing its group down.
The last case drops the group's last reference from a callback, so that the
destructor runs on the completion thread itself, which cannot join itself.
A callback may also wait for a collective of its own group, through the Work
or in Future.wait(): another thread of the group then completes the queue."""
import datetime
import sys
import time

import harness
import torch
import torch.distributed as dist

import weft_torch  # noqa: F401

LATE_S = 1.0  # how long rank 1 holds the collective back


def then_callback_in_flight(rank, world):
    """An async allreduce with a Python callback, in flight at destroy."""
    group = dist.new_group(backend="weft")
    t = torch.full((1000,), float(rank + 1))
    seen = []
    if rank == 1:
        time.sleep(LATE_S)
    work = dist.all_reduce(t, group=group, async_op=True)
    chained = work.get_future().then(lambda f: seen.append(f.value()[0][0].item()))
    dist.destroy_process_group(group)
    del group  # the last reference: the destructor runs here, GIL held
    chained.wait()
    expected = float(sum(range(1, world + 1)))
    assert seen == [expected], f"callback saw {seen}, expected [{expected}]"
    assert torch.equal(t, torch.full((1000,), expected)), "allreduce result"


def tensor_released_in_flight(rank, world):
    """The caller keeps neither the tensor nor the Work: the completion
    thread holds the last references when the allreduce ends."""
    group = dist.new_group(backend="weft")
    if rank == 1:
        time.sleep(LATE_S)
    dist.all_reduce(torch.ones(1 << 16), group=group, async_op=True)
    dist.destroy_process_group(group)
    del group


def last_reference_dropped_by_a_callback(rank, world):
    """The callback holds the group's last reference and drops it."""
    group = dist.new_group(backend="weft")
    holder = [group]
    t = torch.ones(10)
    first = torch.ones(10)
    if rank == 1:
        time.sleep(LATE_S)
    work = dist.all_reduce(t, group=group, async_op=True)
    queued = dist.all_reduce(first, group=group, async_op=True)  # still queued then
    chained = work.get_future().then(lambda f: holder.clear())
    dist.destroy_process_group(group)
    del group
    chained.wait()
    queued.wait()
    assert not holder, "the callback did not run"
    assert torch.equal(t, torch.full((10,), float(world))), "allreduce result"
    assert torch.equal(first, torch.full((10,), float(world))), "queued allreduce result"


def sync_collective_in_a_callback(rank, world):
    """A callback runs a synchronous allreduce on its own group; an allreduce
    queued before it must complete first (calls complete in order)."""
    group = dist.new_group(backend="weft", timeout=datetime.timedelta(seconds=20))
    a, b, inner = torch.ones(10), torch.full((10,), 2.0), torch.full((4,), 3.0)
    if rank == 1:
        time.sleep(LATE_S)
    first = dist.all_reduce(a, group=group, async_op=True)
    second = dist.all_reduce(b, group=group, async_op=True)
    order = []

    def callback(_):
        dist.all_reduce(inner, group=group)  # waits: on rank 0 on the completion thread
        order.append(("inner", second.is_completed()))
        return inner[0].item()

    chained = first.get_future().then(callback)
    assert chained.wait() == 3.0 * world, "the callback's allreduce"
    assert order == [("inner", True)], f"completed out of order: {order}"
    assert torch.equal(b, torch.full((10,), 2.0 * world)), "the allreduce queued before it"
    dist.destroy_process_group(group)


def future_wait_in_a_callback(rank, world):
    """A callback blocks in Future.wait() on an allreduce it issues on its own
    group (as torch's PowerSGD hook does), with a second callback chained on
    it doing the same: another thread must complete the queue meanwhile, still
    in call order."""
    group = dist.new_group(backend="weft", timeout=datetime.timedelta(seconds=20))
    a, b = torch.ones(10), torch.full((10,), 2.0)
    inner, innermost = torch.full((4,), 3.0), torch.full((4,), 5.0)
    if rank == 1:
        time.sleep(LATE_S)
    first = dist.all_reduce(a, group=group, async_op=True)
    second = dist.all_reduce(b, group=group, async_op=True)
    order = []

    def waits_for(t, label):
        def callback(_):
            value = dist.all_reduce(t, group=group, async_op=True).get_future().wait()[0]
            order.append((label, second.is_completed()))
            return value[0].item()
        return callback

    chained = first.get_future().then(waits_for(inner, "inner")).then(
        waits_for(innermost, "innermost"))
    assert chained.wait() == 5.0 * world, "the second callback's allreduce"
    assert inner[0].item() == 3.0 * world, "the first callback's allreduce"
    assert order == [("inner", True), ("innermost", True)], f"completed out of order: {order}"
    assert torch.equal(b, torch.full((10,), 2.0 * world)), "the allreduce queued before them"
    dist.destroy_process_group(group)


def body(rank, world):
    dist.init_process_group("gloo", rank=rank, world_size=world)
    for case in (then_callback_in_flight, tensor_released_in_flight,
                 last_reference_dropped_by_a_callback, sync_collective_in_a_callback,
                 future_wait_in_a_callback):
        start = time.monotonic()
        case(rank, world)
        took = time.monotonic() - start
        print(f"rank {rank}: {case.__name__} took {took:.3f} s", flush=True)
        dist.barrier()  # gloo: the next case starts together
    dist.destroy_process_group()


if __name__ == "__main__":
    harness.run(body, int(sys.argv[1]) if len(sys.argv) > 1 else 2, timeout=90)

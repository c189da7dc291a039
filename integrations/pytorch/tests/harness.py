"""Starts N local processes for a torch.distributed test and collects their
verdicts. Each process gets RANK/WORLD_SIZE and a free MASTER_PORT; the default
group is gloo (the reference) and `weft_group()` gives a weft group over the
same ranks, so one run compares both backends on the same inputs."""
import datetime
import faulthandler
import os
import socket
import sys
import traceback

import torch.multiprocessing as mp


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _entry(rank, world, port, fn, args, results, dump_after):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port),
                      RANK=str(rank), WORLD_SIZE=str(world))
    # A rank still running near the deadline prints every thread's Python
    # stack, so a hang says where it is before the timeout ends it.
    faulthandler.dump_traceback_later(dump_after, exit=False)
    try:
        import torch
        torch.set_num_threads(1)
        fn(rank, world, *args)
        results.put((rank, "ok", ""))
    except BaseException:  # report any failure, then exit non-zero
        results.put((rank, "fail", traceback.format_exc()))
        results.close()
        results.join_thread()  # the verdict must leave before os._exit
        sys.stdout.flush()
        os._exit(1)


def run(fn, world, *args, timeout=240, expect_dead=()):
    """Runs fn(rank, world, *args) in `world` processes; returns when all pass,
    raises SystemExit(1) with every failing rank's traceback otherwise. Ranks in
    `expect_dead` must die (by a signal) instead of passing."""
    ctx = mp.get_context("spawn")
    results = ctx.Queue()
    port = free_port()
    procs = [ctx.Process(target=_entry, args=(r, world, port, fn, args, results, max(timeout - 40, 10)))
             for r in range(world)]
    for p in procs:
        p.start()
    verdicts = {}
    deadline = datetime.datetime.now() + datetime.timedelta(seconds=timeout)
    try:
        while len(verdicts) < world:
            left = (deadline - datetime.datetime.now()).total_seconds()
            if left <= 0:
                break
            try:
                rank, status, text = results.get(timeout=min(left, 1.0))
                verdicts[rank] = (status, text)
            except Exception:
                if all(not p.is_alive() for p in procs) and results.empty():
                    break
            for r in expect_dead:
                if r not in verdicts and procs[r].exitcode is not None and procs[r].exitcode < 0:
                    verdicts[r] = ("ok", "")
    finally:
        for p in procs:
            p.join(timeout=5)
            if p.is_alive():
                p.kill()
    bad = [r for r in range(world) if verdicts.get(r, ("missing", ""))[0] != "ok"]
    for r in bad:
        code = procs[r].exitcode
        status, text = verdicts.get(r, ("missing", f"no verdict: exit code {code} "
                                                   "(negative: killed by that signal; None: hung)\n"))
        print(f"rank {r}: {status}\n{text}", file=sys.stderr)
    if bad:
        raise SystemExit(1)


def check_still_works(world):
    """After refused calls, the default group must still reduce correctly."""
    import torch
    import torch.distributed as dist
    t = torch.ones(7)
    dist.all_reduce(t)
    if not torch.equal(t, torch.full((7,), float(world))):
        raise AssertionError(f"all_reduce after the refusals: got {t.tolist()}")


def main(fn, tag, default_world=3, timeout=240):
    """Runs fn on argv[1] (default `default_world`) processes; prints 'TAG-PASS N ranks'."""
    world = int(sys.argv[1]) if len(sys.argv) > 1 else default_world
    run(fn, world, timeout=timeout)
    print(f"{tag}-PASS {world} ranks")

"""A script that ends with weft work in flight and never destroys its group.

Many training scripts simply return. Python then runs its atexit hooks and
finalizes; a completion thread that later needs the GIL (a Future callback)
is ended by CPython in the middle of the callback, which aborts the process
(torch 1.13's gloo backend does exactly that). weft_torch's atexit hook
completes what is in flight first, so callbacks run, including a callback
that queues another collective (the last call of the script, so that both
ranks call the same collectives in the same order). Rank 1 starts 1 s late, so the work is still
in flight when rank 0 reaches the end of its script.

Runs itself as the two ranks (plain processes: the exit is what is tested)."""
import os
import subprocess
import sys
import time

import harness

LATE_S = 1.0


def rank_main(rank, world):
    import torch
    import torch.distributed as dist

    import weft_torch  # noqa: F401

    dist.init_process_group("weft", rank=rank, world_size=world)
    t = torch.full((1000,), float(rank + 1))
    again = torch.full((10,), 2.0)
    if rank == 1:
        time.sleep(LATE_S)

    def first_done(fut):
        print(f"callback saw {fut.value()[0][0].item()}", flush=True)
        chained = dist.all_reduce(again, async_op=True).get_future()
        chained.then(lambda f: print(f"second callback saw {f.value()[0][0].item()}", flush=True))

    # Every rank must call its collectives in one order. The callback's allreduce
    # is queued whenever the first completes, so nothing follows it here.
    dist.all_reduce(torch.ones(1 << 16), async_op=True)  # neither tensor nor Work kept
    dist.all_reduce(t, async_op=True).get_future().then(first_done)
    print("script ends", flush=True)


def main(world):
    port = str(harness.free_port())
    procs = []
    for rank in range(world):
        env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=port, RANK=str(rank),
                   WORLD_SIZE=str(world))
        procs.append(subprocess.Popen([sys.executable, __file__, "--rank", str(rank), str(world)],
                                      env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                      text=True))
    expected = float(sum(range(1, world + 1)))
    failed = False
    for rank, p in enumerate(procs):
        try:
            out, _ = p.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            p.kill()
            out, _ = p.communicate()
            print(f"rank {rank}: hung at exit\n{out}", file=sys.stderr)
            failed = True
            continue
        want = [f"callback saw {expected}", f"second callback saw {2.0 * world}", "script ends"]
        missing = [w for w in want if w not in out]
        if p.returncode != 0 or missing:
            print(f"rank {rank}: exit code {p.returncode} (negative: killed by that signal), "
                  f"missing {missing}\n{out}", file=sys.stderr)
            failed = True
        else:
            print(f"rank {rank}: exit code 0, both callbacks ran", flush=True)
    if failed:
        raise SystemExit(1)


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--rank":
        rank_main(int(sys.argv[2]), int(sys.argv[3]))
    else:
        main(int(sys.argv[1]) if len(sys.argv) > 1 else 2)

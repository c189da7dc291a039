"""A rank killed with SIGKILL mid-training: the other ranks' torch calls over
weft must raise (with weft's sentence naming the dead rank) within the
timeout, and tearing the group down afterwards must not hang."""
import os
import signal
import time

import harness
import torch
import torch.distributed as dist

import weft_torch  # noqa: F401

VICTIM = 2
LIMIT_S = 20.0


def body(rank, world):
    os.environ["WEFT_TIMEOUT"] = str(int(LIMIT_S))
    dist.init_process_group("weft", rank=rank, world_size=world)
    t = torch.ones(1 << 16)
    for step in range(1000):
        if rank == VICTIM and step == 20:
            os.kill(os.getpid(), signal.SIGKILL)
        start = time.monotonic()
        try:
            work = dist.all_reduce(t, async_op=True)
            work.wait()
            t.fill_(1.0)
        except RuntimeError as e:
            took = time.monotonic() - start
            print(f"rank {rank}: step {step} raised after {took:.3f} s: {e}")
            assert step >= 20, "failed before the kill"
            assert took < LIMIT_S, f"took {took} s"
            assert "weft" in str(e)
            break
    else:
        raise AssertionError("no call failed after the kill")
    t0 = time.monotonic()
    dist.destroy_process_group()
    print(f"rank {rank}: destroy_process_group took {time.monotonic() - t0:.3f} s")


if __name__ == "__main__":
    harness.run(body, 3, expect_dead={VICTIM}, timeout=120)

"""Timeouts read as torch users expect: the message of a call that timed out
starts with "Timed out" and contains "timeout", like gloo's ("Timed out
waiting ...") and NCCL's ("... collective operation timeout"), so code and
torch's own tests that match on those words keep working. Rank 1 never joins
rank 0's allreduce: rank 0's Work.wait(timeout=1 s) times out first (the
process group's wait), then the call itself fails at WEFT_TIMEOUT (weft's)."""
import datetime
import os
import time

import harness
import torch
import torch.distributed as dist

import weft_torch  # noqa: F401


def check(what, e):
    text = str(e)
    print(f"{what}: {text[:160]}")
    assert text.startswith("Timed out"), f"{what}: does not start with 'Timed out': {text}"
    assert "timeout" in text, f"{what}: does not contain 'timeout': {text}"


def body(rank, world):
    os.environ["WEFT_TIMEOUT"] = "4"
    dist.init_process_group("weft", rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=60))
    t = torch.ones(8)
    if rank == 0:
        work = dist.all_reduce(t, async_op=True)
        try:
            work.wait(timeout=datetime.timedelta(seconds=1))
            raise AssertionError("the wait did not time out")
        except RuntimeError as e:
            check("Work.wait(1 s)", e)
        try:
            work.wait()
            raise AssertionError("the allreduce did not fail")
        except RuntimeError as e:
            check("the allreduce at WEFT_TIMEOUT", e)
    else:
        time.sleep(8)  # never joins: rank 0 times out
    dist.destroy_process_group()


if __name__ == "__main__":
    harness.run(body, 2, timeout=120)

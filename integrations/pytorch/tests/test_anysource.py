"""recv from any source (src=None) through the weft backend, next to gloo.
Every rank but 0 sends ROUNDS tensors to rank 0, each after a pause that
depends on its rank and the round; rank 0 takes them with dist.recv(src=None)
(and every other one with irecv(src=None) and Work._source_rank()), and
checks that each payload is the one its reported sender sent and that every
sender is heard once per round, on gloo and on weft alike. Then a recv from
any source inside batch_isend_irecv is refused with a sentence.

usage: test_anysource.py NPROCS"""
import time

import harness
import torch
import torch.distributed as dist

import weft_torch  # noqa: F401  (registers the backend)

ROUNDS = 12


def payload(sender, rnd, n=1000):
    return torch.arange(n, dtype=torch.float32) + 1000.0 * sender + rnd


def exchange(rank, world, group, name):
    for rnd in range(ROUNDS):
        if rank == 0:
            heard = set()
            for k in range(world - 1):
                t = torch.empty(1000)
                if (rnd + k) % 2 == 0:
                    src = dist.recv(t, src=None, group=group)
                else:
                    work = dist.irecv(t, src=None, group=group)
                    work.wait()
                    src = work._source_rank()
                assert 0 < src < world and src not in heard, f"{name} round {rnd}: source {src}"
                heard.add(src)
                assert torch.equal(t, payload(src, rnd)), f"{name} round {rnd}: payload of {src}"
        else:
            time.sleep(((rank * 7 + rnd * 3) % 5) * 0.002)
            dist.send(payload(rank, rnd), dst=0, group=group)
        dist.barrier(group=group)


def body(rank, world):
    dist.init_process_group("gloo", init_method="env://")
    weft = dist.new_group(backend="weft")
    exchange(rank, world, None, "gloo")
    exchange(rank, world, weft, "weft")
    if rank == 0:
        try:
            dist.batch_isend_irecv([dist.P2POp(dist.irecv, torch.empty(3), None, weft)])
            raise AssertionError("a recv from any source in a batch was accepted")
        except RuntimeError as e:
            assert "recv from any source cannot be in batch_isend_irecv" in str(e), e
    t = torch.ones(3)
    dist.all_reduce(t, group=weft)
    assert torch.equal(t, torch.full((3,), float(world))), t


if __name__ == "__main__":
    import sys
    harness.run(body, int(sys.argv[1]))

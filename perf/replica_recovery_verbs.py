#!/usr/bin/env python3
"""Recovery with replicas and standbys over verbs, in the Soft-RoCE guest.

Boots the rdma tier's guest (tests/rdma-vm/run_guest.sh: QEMU in software
emulation, rdma_rxe) once and runs TRIALS jobs of tests/mp/mp_replica in it,
each under weft-run with one standby and TCP and shared memory off, so that
every commit writes its copies with RDMA writes: one rank (drawn from the
trial's seed) is killed with SIGKILL before a step, during its commit or
after it; the survivors replace it, every rank restores, and the trial
passes only when every rank's final state equals, bitwise, a run without
the failure, and every rank said its commits used RDMA writes. Reports the
time from the kill to the first allreduce after the restore (median, worst).
The guest's CPU is emulated: times are the guest's, not hardware's.

  python3 perf/replica_recovery_verbs.py --build build --ranks 4 --bytes 4M --trials 20
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
GUEST = os.path.join(HERE, "..", "tests", "rdma-vm", "run_guest.sh")


def size_bytes(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(float(text[:-1]) * units[text[-1]]) if text[-1] in units else int(text)


def commands(args):
    lines = []
    for seed in range(1, args.trials + 1):
        lines.append("WEFT_SHM_DISABLE=1 WEFT_DEBUG=INFO WEFT_DEBUG_SUBSYS=COLL weft-run -n %d "
                     "--standby 1 --timeout 900 mp_replica --kill %d --bytes %d --steps %d "
                     "--timing /tmp/replica_kill_%d"
                     % (args.ranks, seed, size_bytes(args.bytes), args.steps, seed))
    return "\n".join(lines) + "\n"


def parse(console, trials):
    """Per trial: (recovery_s, ranks equal, ranks on RDMA writes)."""
    runs = re.split(r"WEFT_VM run (\d+): ", console)
    got = {}
    for i in range(1, len(runs) - 1, 2):
        text = runs[i + 1]
        found = re.search(r"recovery_s ([0-9.]+)", text)
        equal = text.count("final state equal to a run without failure")
        rdma = len(re.findall(r"replica commits write 0 of \d+ holder slot\(s\) in place "
                              r"\(shared memory\), [1-9]\d* with RDMA writes", text))
        passed = re.search(r"WEFT_VM result \d+ rc=0 ", text) is not None
        got[int(runs[i])] = (float(found.group(1)) if found else None, equal, rdma, passed)
    return [got.get(t) for t in range(1, trials + 1)]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--build", default="build")
    p.add_argument("--ranks", type=int, default=4)
    p.add_argument("--bytes", default="4M", help="state per rank")
    p.add_argument("--trials", type=int, default=20)
    p.add_argument("--steps", type=int, default=6)
    p.add_argument("--memory-mib", type=int, default=2048, help="the guest's memory")
    p.add_argument("--work", default=os.path.join(tempfile.gettempdir(), "weft_verbs_recovery"))
    args = p.parse_args()
    with tempfile.NamedTemporaryFile("w", prefix="weft_verbs_cmds_", delete=False) as f:
        f.write(commands(args))
        cmds = f.name
    env = dict(os.environ, WEFT_VM_MEM=str(args.memory_mib),
               WEFT_VM_TIMEOUT=str(max(900, 600 * args.trials)))
    out = subprocess.run([GUEST, args.work, cmds,
                          os.path.join(args.build, "tools", "weft-run"),
                          os.path.join(args.build, "tests", "mp", "mp_replica")],
                         env=env, capture_output=True, text=True)
    os.unlink(cmds)
    if out.returncode == 77:
        print(out.stdout.strip().splitlines()[-1])
        return 77
    trials = parse(out.stdout, args.trials)
    bad = [i + 1 for i, t in enumerate(trials)
           if t is None or t[0] is None or t[1] != args.ranks or t[2] < args.ranks or not t[3]]
    if bad:
        sys.stdout.write(out.stdout[-6000:])
        sys.exit("trials %s failed (each needs its recovery time, %d ranks equal and %d on RDMA "
                 "writes)" % (bad, args.ranks, args.ranks))
    times = [t[0] for t in trials]
    print("verbs (Soft-RoCE guest, emulated CPU): %d ranks, %s per rank, %d trials: every trial "
          "resumed with the standby, bitwise equal, commits by RDMA writes on every rank"
          % (args.ranks, args.bytes, len(times)))
    print("recovery median %.3f s, worst %.3f s, best %.3f s"
          % (statistics.median(times), max(times), min(times)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

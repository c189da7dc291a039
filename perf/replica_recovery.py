#!/usr/bin/env python3
"""Recovery with replicas and standbys, against a restart from disk.

For each rank count, state size and transport, runs tests/mp/mp_replica
under weft-run with one standby: every step commits the state, one rank is
killed (SIGKILL) at a step and point drawn from the trial's seed, the
survivors replace it, every rank restores, and the run ends with every
rank's state equal to a run without failure (each trial checks it). Reports
the time from the kill to the first allreduce after the restore (median,
worst), and perf/replica_bench's commit cost and disk restart on the same
configuration.

  python3 perf/replica_recovery.py --build build --ranks 4 8 --sizes 64M 256M \\
      --transports shm tcp --trials 20 --json recovery.json
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile


def size_bytes(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(float(text[:-1]) * units[text[-1]]) if text[-1] in units else int(text)


def env_for(transport):
    env = dict(os.environ)
    if transport == "tcp":
        env["WEFT_SHM_DISABLE"] = "1"
    return env


def one_trial(args, ranks, size, transport, seed):
    """Seconds from the kill to the first collective after the restore."""
    with tempfile.NamedTemporaryFile(prefix="weft_kill_", delete=False) as f:
        timing = f.name
    cmd = [os.path.join(args.build, "tools", "weft-run"), "-n", str(ranks), "--standby", "1",
           "--timeout", "600", os.path.join(args.build, "tests", "mp", "mp_replica"),
           "--kill", str(seed), "--bytes", str(size_bytes(size)), "--steps", str(args.steps),
           "--timing", timing]
    out = subprocess.run(cmd, env=env_for(transport), capture_output=True, text=True,
                         timeout=1800)
    os.unlink(timing)
    text = out.stdout + out.stderr
    equal = text.count("final state equal to a run without failure")
    found = re.search(r"recovery_s ([0-9.]+)", text)
    if equal != ranks or found is None:
        sys.exit("trial failed (%d of %d ranks equal):\n%s" % (equal, ranks, text[-3000:]))
    return float(found.group(1))


def bench(args, ranks, size, transport):
    """replica_bench's lines: commit, sendrecv and disk."""
    ckpt = tempfile.mkdtemp(prefix="weft_ckpt_", dir=args.disk_dir)
    cmd = [os.path.join(args.build, "tools", "weft-run"), "-n", str(ranks), "--timeout", "600",
           os.path.join(args.build, "perf", "replica_bench"), "-b", size, "-n",
           str(args.bench_iters), "-d", ckpt]
    out = subprocess.run(cmd, env=env_for(transport), capture_output=True, text=True,
                         timeout=1800)
    os.rmdir(ckpt)
    if out.returncode != 0:
        sys.exit("replica_bench failed:\n" + out.stdout + out.stderr)
    got = {}
    for key, pattern in [("commit_s", r"commit\s+([0-9.]+) s"),
                         ("commit_busbw", r"commit\s+[0-9.]+ s\s+busbw\s+([0-9.]+)"),
                         ("sendrecv_busbw", r"sendrecv\s+[0-9.]+ s\s+busbw\s+([0-9.]+)"),
                         ("disk_write_s", r"write\+fsync\s+([0-9.]+)"),
                         ("disk_restart_s", r"restart \(.*\)\s+([0-9.]+)")]:
        found = re.search(pattern, out.stdout)
        got[key] = float(found.group(1)) if found else None
    return got


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--build", default="build")
    p.add_argument("--ranks", type=int, nargs="+", default=[4, 8])
    p.add_argument("--sizes", nargs="+", default=["64M", "256M"])
    p.add_argument("--transports", nargs="+", default=["shm", "tcp"])
    p.add_argument("--trials", type=int, default=20)
    p.add_argument("--steps", type=int, default=6)
    p.add_argument("--bench-iters", type=int, default=3)
    p.add_argument("--disk-dir", default="/var/tmp", help="where the disk baseline writes")
    p.add_argument("--json", help="write the rows here")
    args = p.parse_args()
    rows = []
    print("%-5s %5s %5s %6s %9s %9s %10s %10s %12s %9s" %
          ("xport", "ranks", "size", "trials", "median_s", "worst_s", "disk_rst_s",
           "commit_s", "commit/p2p", "speedup"))
    for transport in args.transports:
        for ranks in args.ranks:
            for size in args.sizes:
                times = [one_trial(args, ranks, size, transport, seed)
                         for seed in range(1, args.trials + 1)]
                b = bench(args, ranks, size, transport)
                med = statistics.median(times)
                row = dict(transport=transport, ranks=ranks, size=size, trials=len(times),
                           recovery_median_s=med, recovery_worst_s=max(times),
                           recovery_s=times, **b)
                ratio = (b["commit_busbw"] / b["sendrecv_busbw"]
                         if b["commit_busbw"] and b["sendrecv_busbw"] else float("nan"))
                speedup = b["disk_restart_s"] / med if b["disk_restart_s"] else float("nan")
                row["commit_vs_sendrecv"] = ratio
                row["speedup_vs_disk"] = speedup
                rows.append(row)
                print("%-5s %5d %5s %6d %9.3f %9.3f %10.3f %10.3f %12.2f %9.1f" %
                      (transport, ranks, size, len(times), med, max(times),
                       b["disk_restart_s"] or float("nan"), b["commit_s"] or float("nan"),
                       ratio, speedup), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()

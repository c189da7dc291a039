#!/usr/bin/env python3
"""Small-message send/recv against allreduce, in alternating rounds.

Runs sendrecv_perf and all_reduce_perf at one size (8 bytes by default) on
2 local ranks, round after round, and prints the median time of each and
the ratio send/recv : allreduce (a grouped weftSend + weftRecv per rank, as
nccl-tests' sendrecv, against one weftAllReduce). With --baseline, another
build's tools run in the same rounds, alternating with this one's, and its
medians print beside.

  perf/p2p_latency.py --build build --rounds 5
  WEFT_SHM_DISABLE=1 perf/p2p_latency.py --build build --baseline build-base
"""
import argparse
import os
import statistics
import subprocess
import sys


def timed(build, tool, nbytes, iters, nranks):
    """One run of `tool` at `nbytes`: its out-of-place time in us."""
    cmd = [os.path.join(build, "tools", "weft-run"), "-n", str(nranks),
           os.path.join(build, "perf", tool), "-b", str(nbytes), "-e", str(nbytes),
           "-n", str(iters), "-w", str(max(iters // 10, 1))]
    out = subprocess.run(cmd, capture_output=True, text=True, check=False)
    for line in out.stdout.splitlines():
        cols = line.split()
        if len(cols) > 5 and cols[0] == str(nbytes):
            return float(cols[5])
    sys.exit(f"p2p_latency: no result from {' '.join(cmd)}:\n{out.stdout}{out.stderr}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--baseline", help="another build to run in the same rounds")
    ap.add_argument("--bytes", type=int, default=8)
    ap.add_argument("--iters", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("-n", "--nranks", type=int, default=2)
    args = ap.parse_args()
    builds = [("this", args.build)] + ([("base", args.baseline)] if args.baseline else [])
    times = {(name, tool): [] for name, _ in builds for tool in ("sendrecv", "allreduce")}
    for _ in range(args.rounds):
        for name, build in builds:
            for tool in ("sendrecv", "allreduce"):
                times[(name, tool)].append(
                    timed(build, f"{'all_reduce' if tool == 'allreduce' else tool}_perf",
                          args.bytes, args.iters, args.nranks))
    print(f"{args.bytes} B, {args.nranks} ranks, medians of {args.rounds} rounds (us)")
    print(f"{'build':8} {'sendrecv':>9} {'allreduce':>9} {'ratio':>6}")
    for name, _ in builds:
        sr = statistics.median(times[(name, "sendrecv")])
        ar = statistics.median(times[(name, "allreduce")])
        print(f"{name:8} {sr:9.2f} {ar:9.2f} {sr / ar:6.2f}")


if __name__ == "__main__":
    main()

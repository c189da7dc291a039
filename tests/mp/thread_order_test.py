#!/usr/bin/env python3
"""Threads that take turns on one communicator in different orders per rank.

  thread_order_test.py WEFT_RUN PROBE [--runs N] [--ranks N]

Runs mp_thread_order's "skew" and "handoff" modes once and its "race" mode
RUNS times. In skew, the thread making the calls changes at another call on
rank 0 than on the others: every rank must fail its second call with the
thread-order mismatch. In handoff, one thread after another on every rank:
every call must be right. Race runs are counted, not judged: two threads
racing for a communicator can make the same turns on every rank with the
threads' roles swapped, which no library can see (docs/api.md, Threads).
"""
import argparse
import re
import subprocess
import sys


def run(args, mode):
    cmd = [args.weft_run, "-n", str(args.ranks), "--timeout", "120", args.probe, mode]
    p = subprocess.run(cmd, capture_output=True, text=True)
    ranks = [tuple(map(int, m)) for m in
             re.findall(r"^RANK \d+ wrong=(\d+) detected=(\d+) ok=(\d+)$", p.stdout, re.M)]
    return ranks, p.stdout + p.stderr


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("weft_run")
    ap.add_argument("probe")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--ranks", type=int, default=2)
    args = ap.parse_args()
    fail = 0
    silent = caught = clean = 0
    for i in range(args.runs):
        ranks, out = run(args, "race")
        if len(ranks) != args.ranks:
            print(f"race run {i}: FAIL, {len(ranks)} of {args.ranks} ranks reported:\n{out}")
            fail = 1
            continue
        wrong = sum(r[0] for r in ranks)
        detected = sum(r[1] for r in ranks)
        kind = "silent" if wrong and not detected else "caught" if detected else "clean"
        silent += kind == "silent"
        caught += kind == "caught"
        clean += kind == "clean"
        print(f"race run {i}: {kind}: wrong sums {wrong}, errors {detected}, right sums "
              f"{sum(r[2] for r in ranks)}")
    ranks, out = run(args, "skew")
    good = len(ranks) == args.ranks and all(r == (0, 1, 1) for r in ranks)
    print(f"skew run: {'every rank caught it at its second call' if good else 'FAIL'}: {ranks}")
    if not good:
        print(out)
        fail = 1
    ranks, out = run(args, "handoff")
    good = len(ranks) == args.ranks and all(r[0] == 0 and r[1] == 0 for r in ranks)
    print(f"handoff run: {'right' if good else 'FAIL'}: {ranks}")
    if not good:
        print(out)
        fail = 1
    print(f"SUMMARY: {args.runs} race runs: {silent} with wrong sums and no error, {caught} "
          f"stopped by an error, {clean} with every sum right (counted, not judged)")
    return fail


if __name__ == "__main__":
    sys.exit(main())

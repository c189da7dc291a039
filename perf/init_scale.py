#!/usr/bin/env python3
"""Init time and per-rank cost of a communicator as the job grows.

  perf/init_scale.py --build build -n 8 16 32 64 [--transport shm|tcp] [--repeats R]

Runs R jobs of each size under weft-run on this machine (one process per rank,
tiny buffers), each rank timing its weftCommInitFromEnv and reading what its
process holds before and after (perf/init_probe.cc), and prints per size the
slowest rank's init time (median over the jobs) and the median rank's added
proportional memory (shared pages divided among the ranks that map them: the
node's memory over n), resident memory (shared pages counted whole), mapped
address space and open descriptors, then the slowest rank's first call (an
8-byte allreduce: TCP connects on first use) and the descriptors held after
it. --json writes the rows.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys

LINE = re.compile(r"INIT rank (\d+) of (\d+): ([\d.]+) s, pss \+(-?\d+) KiB, rss \+(-?\d+) KiB, "
                  r"mapped \+(-?\d+) KiB, fds \+(-?\d+); first call ([\d.]+) s, fds \+(-?\d+)")


def run_job(args, n):
    env = dict(os.environ)
    if args.transport == "tcp":
        env["WEFT_SHM_DISABLE"] = "1"
    cmd = [os.path.join(args.build, "tools", "weft-run"), "-n", str(n), "--timeout",
           str(args.timeout), os.path.join(args.build, "perf", "init_probe")]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=args.timeout + 60)
    rows = [tuple(float(x) for x in m.groups()) for m in LINE.finditer(out.stdout)]
    if out.returncode != 0 or len(rows) != n:
        sys.exit(f"init_scale: {n} ranks: exit {out.returncode}, {len(rows)} INIT line(s)\n"
                 f"{out.stdout[-2000:]}{out.stderr[-2000:]}")
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("-n", "--ranks", type=int, nargs="+", default=[8, 16, 32, 64])
    ap.add_argument("--transport", choices=["shm", "tcp"], default="shm")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--timeout", type=int, default=600)
    ap.add_argument("--json")
    args = ap.parse_args()
    print(f"# {args.transport}: medians of {args.repeats} job(s) per size")
    print(f"{'ranks':>6} {'init_s':>8} {'pss_MiB':>8} {'rss_MiB':>8} {'mapped_MiB':>11} {'fds':>6} "
          f"{'first_s':>8} {'fds1':>6}")
    records = []
    for n in args.ranks:
        slowest, pss, rss, mapped, fds, first, fds_first = [], [], [], [], [], [], []
        for _ in range(args.repeats):
            rows = run_job(args, n)
            slowest.append(max(r[2] for r in rows))
            pss.append(statistics.median(r[3] for r in rows) / 1024)
            rss.append(statistics.median(r[4] for r in rows) / 1024)
            mapped.append(statistics.median(r[5] for r in rows) / 1024)
            fds.append(statistics.median(r[6] for r in rows))
            first.append(max(r[7] for r in rows))
            fds_first.append(statistics.median(r[8] for r in rows))
        rec = {"transport": args.transport, "ranks": n, "init_s": statistics.median(slowest),
               "pss_mib": statistics.median(pss), "rss_mib": statistics.median(rss),
               "mapped_mib": statistics.median(mapped), "fds": statistics.median(fds),
               "first_call_s": statistics.median(first),
               "fds_after_first_call": statistics.median(fds_first)}
        records.append(rec)
        print(f"{n:>6} {rec['init_s']:>8.3f} {rec['pss_mib']:>8.1f} {rec['rss_mib']:>8.1f} "
              f"{rec['mapped_mib']:>11.1f} {rec['fds']:>6.0f} {rec['first_call_s']:>8.3f} "
              f"{rec['fds_after_first_call']:>6.0f}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(records, f, indent=1)


if __name__ == "__main__":
    main()

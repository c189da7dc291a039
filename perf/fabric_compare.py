#!/usr/bin/env python3
"""Fabric-aware against fabric-blind placement on an emulated two-level fabric.

K one-rank nodes in network namespaces alternate between L leaf bridges in
rank order (as a scheduler may hand them out); the leaves meet in a spine
through uplinks shaped to nodes-per-leaf x node rate / oversubscription
(tests/netns/netns_job.sh --leaves). For each oversubscription, collective
and repeat, the same perf tool runs twice, alternating which goes first:
with WEFT_FABRIC set to the fabric's description (aware) and without it
(blind: rings follow rank order and cross the spine at every hop). Prints a
table of median busbw and aware/blind ratios; --json writes every figure.

  perf/fabric_compare.py --build build --nodes 8 --leaves 2 --rate-mbit 400 \\
      --oversub 1,2,4 -b 1M -e 16M -f 4 --repeats 3 --json fabric.json
Needs root (network namespaces)."""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOLS = {"allreduce": "all_reduce_perf", "allgather": "all_gather_perf"}


def run_job(args, tool, spine_mbit, fabric_path, aware):
    env = dict(os.environ)
    env.pop("WEFT_FABRIC", None)
    if aware:
        env["WEFT_FABRIC"] = fabric_path
    cmd = ["bash", os.path.join(ROOT, "tests/netns/netns_job.sh"), "--nodes", str(args.nodes),
           "--ppn", "1", "--link", "veth", "--rate-mbit", str(args.rate_mbit),
           "--leaves", str(args.leaves), "--spine-mbit", str(spine_mbit),
           "--leaf-placement", "cyclic", "--fabric-out", fabric_path, "--timeout",
           str(args.timeout), "--", os.path.join(args.build, "perf", tool), "-b", args.b,
           "-e", args.e, "-f", str(args.f), "-w", "1", "-n", str(args.iters)]
    res = subprocess.run(cmd, capture_output=True, text=True, env=env,
                         timeout=args.timeout + 60)
    if res.returncode != 0:
        sys.exit("%s (%s) failed (%d):\n%s%s" % (tool, "aware" if aware else "blind",
                                                 res.returncode, res.stdout[-3000:],
                                                 res.stderr[-3000:]))
    out = {}
    for line in res.stdout.splitlines():
        cols = line.split()
        if len(cols) >= 8 and cols[0].isdigit() and cols[1].isdigit():
            out[int(cols[0])] = float(cols[7])  # out-of-place busbw, GB/s
    if not out:
        sys.exit("%s printed no results:\n%s" % (tool, res.stdout[-3000:]))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--nodes", type=int, default=8)
    ap.add_argument("--leaves", type=int, default=2)
    ap.add_argument("--rate-mbit", type=int, default=400)
    ap.add_argument("--oversub", default="1,2,4")
    ap.add_argument("--collectives", default="allreduce,allgather")
    ap.add_argument("-b", default="1M")
    ap.add_argument("-e", default="16M")
    ap.add_argument("-f", type=int, default=4)
    ap.add_argument("--iters", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--timeout", type=int, default=300)
    ap.add_argument("--json")
    args = ap.parse_args()
    per_leaf = (args.nodes + args.leaves - 1) // args.leaves
    fabric = os.path.join(tempfile.mkdtemp(prefix="weft_fabric_"), "fabric.json")
    points = []
    print("%d nodes on %d leaves (alternating), node links %d Mbit/s" %
          (args.nodes, args.leaves, args.rate_mbit))
    print("%8s %10s %10s %12s %12s %8s" % ("oversub", "collective", "bytes", "aware GB/s",
                                          "blind GB/s", "ratio"))
    for over in [float(x) for x in args.oversub.split(",")]:
        spine = int(per_leaf * args.rate_mbit / over)
        for coll in args.collectives.split(","):
            runs = {True: [], False: []}
            for rep in range(args.repeats):
                for aware in ((True, False) if rep % 2 == 0 else (False, True)):
                    runs[aware].append(run_job(args, TOOLS[coll], spine, fabric, aware))
            for size in sorted(runs[True][0]):
                a = statistics.median(r[size] for r in runs[True])
                b = statistics.median(r[size] for r in runs[False])
                ratio = a / b if b > 0 else float("inf")
                points.append({"oversubscription": over, "spine_mbit": spine,
                               "collective": coll, "bytes": size, "aware_busbw": a,
                               "blind_busbw": b, "ratio": ratio,
                               "aware_runs": [r[size] for r in runs[True]],
                               "blind_runs": [r[size] for r in runs[False]]})
                print("%7g:1 %10s %10d %12.4f %12.4f %8.2f" % (over, coll, size, a, b, ratio))
                sys.stdout.flush()
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"nodes": args.nodes, "leaves": args.leaves, "rate_mbit": args.rate_mbit,
                       "points": points}, f, indent=1)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Fabric-aware against fabric-blind placement on an emulated two-level fabric.

K one-rank nodes in network namespaces alternate between L leaf bridges in
rank order (as a scheduler may hand them out); the leaves meet in a spine
through uplinks shaped to nodes-per-leaf x node rate / oversubscription
(tests/netns/netns_job.sh --leaves). For each oversubscription, collective
and repeat, the same perf tool runs twice, alternating which goes first:
with WEFT_FABRIC set to the fabric's description (aware) and without it
(blind: rings follow rank order and cross the spine at every hop). Prints a
table of median busbw and aware/blind ratios. Each algorithm of
--algos-* also runs forced (WEFT_ALGO, aware), and weft-sim predicts every
point for the same fabric: the summary gives its error and how often it
names the fastest algorithm. --json writes every figure.

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
SIM_NAMES = {"oneshot": "direct"}  # WEFT_ALGO's name -> weft-sim's, where they differ


def run_job(args, tool, spine_mbit, fabric_path, aware, extra_env):
    env = dict(os.environ)
    env.pop("WEFT_FABRIC", None)
    env.pop("WEFT_ALGO", None)
    env.update(extra_env)
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
    n = args.nodes
    factor = 2.0 * (n - 1) / n if tool == TOOLS["allreduce"] else (n - 1.0) / n
    for line in res.stdout.splitlines():
        cols = line.split()
        if len(cols) >= 8 and cols[0].isdigit() and cols[1].isdigit():
            # From the out-of-place time (us): the printed busbw has two decimals.
            out[int(cols[0])] = int(cols[0]) / float(cols[5]) * 1e-3 * factor
    if not out:
        sys.exit("%s printed no results:\n%s" % (tool, res.stdout[-3000:]))
    return out


def simulate(args, coll, over, algo, aware):
    """weft-sim's busbw per size for the same fabric, placement and call."""
    per_leaf = (args.nodes + args.leaves - 1) // args.leaves
    out = os.path.join(tempfile.mkdtemp(prefix="weft_sim_"), "sim.json")
    cmd = [os.path.join(args.build, "tools", "weft-sim"), "-n", str(args.nodes), "--ppn", "1",
           "--leaves", str(args.leaves), "--nodes-per-leaf", str(per_leaf),
           "--node-gbit", str(args.rate_mbit / 1000.0), "--oversub", str(over),
           "--leaf-placement", "cyclic", "--op", coll, "-b", args.b, "-e", args.e,
           "-f", str(args.f), "--algo", SIM_NAMES.get(algo, algo) if algo else "auto",
           "--intra-us", "1", "--efficiency", str(args.efficiency),
           "--json", out] + ([] if aware else ["--fabric-blind"])
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        sys.exit("weft-sim failed:\n" + res.stdout + res.stderr)
    with open(out) as f:
        records = json.load(f)
    return {r["size"]: r["busbw"] for r in records}


def variants(args, coll):
    """(label, WEFT_ALGO or None, aware): auto aware and blind, then each algorithm."""
    out = [("aware", None, True), ("blind", None, False)]
    for a in (args.algos_allreduce if coll == "allreduce" else args.algos_allgather).split(","):
        if a:
            out.append(("aware:" + a, a, True))
    return out


def measure(args, over, coll, fabric, points):
    per_leaf = (args.nodes + args.leaves - 1) // args.leaves
    spine = int(per_leaf * args.rate_mbit / over)
    vs = variants(args, coll)
    runs = {label: [] for label, _, _ in vs}
    for rep in range(args.repeats):
        order = vs[rep % len(vs):] + vs[:rep % len(vs)]  # who goes first rotates
        for label, algo, aware in order:
            env_algo = {"WEFT_ALGO": algo} if algo else {}
            runs[label].append(run_job(args, TOOLS[coll], spine, fabric, aware, env_algo))
    for label, algo, aware in vs:
        sim = simulate(args, coll, over, algo, aware)
        for size in sorted(runs[label][0]):
            measured = statistics.median(r[size] for r in runs[label])
            points.append({"oversubscription": over, "spine_mbit": spine, "collective": coll,
                           "variant": label, "bytes": size, "busbw": measured,
                           "runs": [r[size] for r in runs[label]], "sim_busbw": sim.get(size)})


def report(points):
    print("%8s %10s %10s %10s %10s %8s %10s %10s" % ("oversub", "collective", "bytes",
          "aware", "blind", "ratio", "sim aware", "sim blind"))
    key = lambda p: (p["oversubscription"], p["collective"], p["bytes"])
    byvar = {}
    for p in points:
        byvar.setdefault(key(p), {})[p["variant"]] = p
    for k in sorted(byvar):
        v = byvar[k]
        a, b = v["aware"], v["blind"]
        print("%7g:1 %10s %10d %10.4f %10.4f %8.2f %10.4f %10.4f" % (
            k[0], k[1], k[2], a["busbw"], b["busbw"], a["busbw"] / b["busbw"],
            a["sim_busbw"], b["sim_busbw"]))
    errors = sorted(abs(p["sim_busbw"] / p["busbw"] - 1) for p in points if p["sim_busbw"])
    right = close = total = 0
    for k, v in byvar.items():
        algos = {n: p for n, p in v.items() if n.startswith("aware:")}
        if len(algos) < 2:
            continue
        total += 1
        best = max(algos, key=lambda n: algos[n]["busbw"])
        guess = max(algos, key=lambda n: algos[n]["sim_busbw"] or 0)
        right += best == guess
        # The predicted one measured within 3% of the best: closer than the runs' noise.
        close += best == guess or algos[guess]["busbw"] >= 0.97 * algos[best]["busbw"]
    if errors:
        print("weft-sim against the measurements: %d points, median error %.1f%%, 90th "
              "percentile %.1f%%; fastest algorithm named at %d of %d points (%d within 3%% "
              "of the fastest)" % (len(errors), 100 * errors[len(errors) // 2],
                                   100 * errors[min(len(errors) - 1, int(0.9 * len(errors)))],
                                   right, total, close))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--nodes", type=int, default=8)
    ap.add_argument("--leaves", type=int, default=2)
    ap.add_argument("--rate-mbit", type=int, default=400)
    ap.add_argument("--oversub", default="1,2,4")
    ap.add_argument("--collectives", default="allreduce,allgather")
    ap.add_argument("--algos-allreduce", default="ring,tree,rhd",
                    help="also measure these (WEFT_ALGO, aware) for the best-algorithm check")
    ap.add_argument("--algos-allgather", default="ring,oneshot",
                    help="oneshot: the one-round (direct) allgather, as WEFT_ALGO names it")
    ap.add_argument("-b", default="1M")
    ap.add_argument("-e", default="16M")
    ap.add_argument("-f", type=int, default=4)
    ap.add_argument("--iters", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=300)
    ap.add_argument("--efficiency", type=float, default=1448.0 / 1514,
                    help="weft-sim's payload share of a link: TCP segments in 1500-byte "
                         "Ethernet frames carry 1448 of 1514 bytes")
    ap.add_argument("--json")
    ap.add_argument("--resim", nargs="+", metavar="JSON",
                    help="measure nothing: predict the points of these files again and report")
    args = ap.parse_args()
    if args.resim:
        points = []
        for path in args.resim:
            with open(path) as f:
                points += json.load(f)["points"]
        cache = {}
        for p in points:
            label, coll = p["variant"], p["collective"]
            algo = label.split(":")[1] if ":" in label else None
            key = (p["oversubscription"], coll, algo, label != "blind")
            if key not in cache:
                cache[key] = simulate(args, coll, key[0], algo, key[3])
            p["sim_busbw"] = cache[key].get(p["bytes"])
        report(points)
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"nodes": args.nodes, "leaves": args.leaves,
                           "rate_mbit": args.rate_mbit, "points": points}, f, indent=1)
        return
    fabric = os.path.join(tempfile.mkdtemp(prefix="weft_fabric_"), "fabric.json")
    points = []
    print("%d nodes on %d leaves (alternating in rank order), node links %d Mbit/s" %
          (args.nodes, args.leaves, args.rate_mbit))
    for over in [float(x) for x in args.oversub.split(",")]:
        for coll in args.collectives.split(","):
            measure(args, over, coll, fabric, points)
            sys.stderr.write("done: %g:1 %s\n" % (over, coll))
    report(points)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"nodes": args.nodes, "leaves": args.leaves, "rate_mbit": args.rate_mbit,
                       "points": points}, f, indent=1)


if __name__ == "__main__":
    main()

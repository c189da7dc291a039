#!/usr/bin/env python3
"""The tuner against every forced allreduce algorithm, across emulated nodes.

Runs build/perf/all_reduce_perf over K network namespaces x P ranks
(tests/netns/netns_job.sh, root only) once per WEFT_ALGO value (auto = the
tuner), in rounds that alternate the algorithms so that machine drift hits
them alike, and prints medians: each algorithm's time per size, the fastest
forced one, and auto's time as a ratio of it (the done-when figure: within
1.15). Small sizes run many iterations, large ones few (--split). --latency
times single calls instead (perf/allreduce_latency: a barrier between calls,
the slowest rank's time), one job per size.

  perf/netns_compare.py --build build --nodes 4 --ppn 2 --delay-us 200 --rate-mbit 1000
  perf/netns_compare.py --build build --nodes 8 --ppn 1 --delay-us 200 --algos ring,tree -e 8
"""
import argparse
import os
import statistics
import subprocess
import sys


def parse_size(text):
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    if text[-1].upper() in mult:
        return int(text[:-1]) * mult[text[-1].upper()]
    return int(text)


def rows(output, col):
    """{size: (time_us, busbw)}: out-of-place (col 0) or in-place (col 1) figures."""
    out = {}
    for line in output.splitlines():
        parts = line.split()
        if not parts or line.lstrip().startswith("#") or not parts[0].isdigit():
            continue
        base = 5 + 4 * col
        try:
            out[int(parts[0])] = (float(parts[base]), float(parts[base + 2]))
        except (IndexError, ValueError):
            pass
    return out


def sizes_between(lo, hi, f):
    out = []
    while lo <= hi:
        out.append(lo)
        lo *= f
    return out


def run_job(args, algo, lo, hi, iters):
    if args.latency:
        out = {}
        for size in sizes_between(lo, hi, args.f):
            text = run_netns(args, algo, [os.path.join(args.build, "perf/allreduce_latency"),
                                          "-b", str(size), "-n", str(iters), "-w", "10"])
            for line in text.splitlines():
                parts = line.split()
                if len(parts) == 4 and parts[0].isdigit():
                    out[int(parts[0])] = (float(parts[1]), 0.0)
        return out
    return rows(run_netns(args, algo, [os.path.join(args.build, "perf/all_reduce_perf"),
                                       "-b", str(lo), "-e", str(hi), "-f", str(args.f), "-w", "2",
                                       "-n", str(iters), "-c", "0"]), 0)


def run_netns(args, algo, program):
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(here)
    cmd = ["bash", os.path.join(root, "tests/netns/netns_job.sh"),
           "--relay", os.path.join(args.build, "tests/netns/weft-tun-relay"),
           "--nodes", str(args.nodes), "--ppn", str(args.ppn), "--link", "tun",
           "--delay-us", str(args.delay_us), "--rate-mbit", str(args.rate_mbit),
           "--timeout", str(args.timeout)] + (["--relay-rt"] if args.relay_rt else []) + ["--",
           "env", "WEFT_ALGO=" + algo] + program
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout + 60)
    if res.returncode != 0:
        sys.stderr.write("%s failed (%d):\n%s%s" % (algo, res.returncode, res.stdout[-3000:],
                                                    res.stderr[-2000:]))
        return ""
    return res.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--nodes", type=int, default=4)
    ap.add_argument("--ppn", type=int, default=2)
    ap.add_argument("--delay-us", type=float, default=200)
    ap.add_argument("--rate-mbit", type=float, default=1000)
    ap.add_argument("--algos", default="auto,ring,tree,hier,oneshot")
    ap.add_argument("-b", default="8")
    ap.add_argument("-e", default="64M")
    ap.add_argument("-f", type=int, default=4)
    ap.add_argument("--split", default="1M", help="sizes above this run --iters-large iterations")
    ap.add_argument("--iters-small", type=int, default=40)
    ap.add_argument("--iters-large", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--latency", action="store_true",
                    help="time single calls (perf/allreduce_latency) instead of back-to-back loops")
    ap.add_argument("--relay-rt", action="store_true",
                    help="run the relay at real-time priority (netns_job.sh --relay-rt)")
    ap.add_argument("--timeout", type=int, default=400)
    args = ap.parse_args()
    algos = args.algos.split(",")
    lo, hi, split = parse_size(args.b), parse_size(args.e), parse_size(args.split)
    ranges = []
    if lo <= split:
        ranges.append((lo, min(hi, split), args.iters_small))
    if hi > split:
        first = lo
        while first <= split:
            first *= args.f
        ranges.append((first, hi, args.iters_large))
    samples = {a: {} for a in algos}
    for rnd in range(args.rounds):
        # Odd rounds run the algorithms in reverse order, so that whatever comes
        # first after the namespaces are built (or last) is not always the same one.
        for algo in (algos if rnd % 2 == 0 else list(reversed(algos))):
            for (a, b, iters) in ranges:
                for size, (us, busbw) in run_job(args, algo, a, b, iters).items():
                    samples[algo].setdefault(size, []).append((us, busbw))
            sys.stderr.write("round %d: %s done\n" % (rnd + 1, algo))
    sizes = sorted({s for a in algos for s in samples[a]})
    forced = [a for a in algos if a != "auto"]
    print("# %d nodes x %d ranks, links %.0f Mbit/s and %.0f us one way; median of %d rounds, "
          "%s us" % (args.nodes, args.ppn, args.rate_mbit, args.delay_us, args.rounds,
                     "single-call (slowest rank)" if args.latency else "out-of-place loop"))
    head = ["size (B)"] + algos + ["fastest forced", "auto/fastest", "auto busbw"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for size in sizes:
        med = {}
        for a in algos:
            if samples[a].get(size):
                med[a] = (statistics.median(x[0] for x in samples[a][size]),
                          statistics.median(x[1] for x in samples[a][size]))
        cells = [str(size)] + ["%.1f" % med[a][0] if a in med else "-" for a in algos]
        best = min((med[a][0], a) for a in forced if a in med) if any(a in med for a in forced) \
            else None
        cells.append("%s %.1f" % (best[1], best[0]) if best else "-")
        cells.append("%.2f" % (med["auto"][0] / best[0]) if best and "auto" in med else "-")
        cells.append("%.3f" % med["auto"][1] if "auto" in med else "-")
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()

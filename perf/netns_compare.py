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
import sys

from netns_common import add_job_options, run_netns as run_job_netns, sweeps
from progress import Progress


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
    return run_job_netns(args, ["env", "WEFT_ALGO=" + algo] + program, algo)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    add_job_options(ap)
    ap.add_argument("--algos", default="auto,ring,tree,hier,oneshot,rd,rhd")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--latency", action="store_true",
                    help="time single calls (perf/allreduce_latency) instead of back-to-back loops")
    args = ap.parse_args()
    algos = args.algos.split(",")
    samples = {a: {} for a in algos}
    progress = Progress(args.rounds * len(algos))
    for rnd in range(args.rounds):
        # Odd rounds run the algorithms in reverse order, so that whatever comes
        # first after the namespaces are built (or last) is not always the same one.
        for algo in (algos if rnd % 2 == 0 else list(reversed(algos))):
            progress.step("round %d/%d, %s" % (rnd + 1, args.rounds, algo))
            for (a, b, iters) in sweeps(args):
                for size, (us, busbw) in run_job(args, algo, a, b, iters).items():
                    samples[algo].setdefault(size, []).append((us, busbw))
    progress.finish()
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

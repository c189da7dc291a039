#!/usr/bin/env python3
"""weft against Open MPI and Gloo across emulated nodes, side by side.

Every program runs over the same K network namespaces x P ranks, joined by the
delaying, rate-limiting TUN relay (tests/netns/netns_job.sh, root only):
  weft   build/perf/all_reduce_perf or all_gather_perf, the tuner's choice
         (ranks started by netns_job.sh, one namespace per node);
  mpi    shared/peers' mpi_coll_bench under Open MPI's own mpirun
         (netns_job.sh --mpirun: an orted per namespace; btl self,vader,tcp,
         so a node's ranks share memory as weft's do; mpi_yield_when_idle=1
         because the ranks outnumber the cores, as weft's WEFT_SPIN_US=auto
         does for itself);
  gloo   shared/peers' gloo_coll_bench for each --gloo algorithm (FileStore
         rendezvous, every rank bound to its node's address; TCP only).
Rounds alternate the programs' order so that machine drift hits them alike.
Prints medians: each program's time per size and the time ratios peer/weft
(above 1: weft is faster). weft and MPI run out of place; Gloo's legacy
allreduce algorithms reduce in place, so for allreduce gloo/weft is taken
against weft's in-place time when the fastest Gloo algorithm at a size is a
legacy one (Gloo's allgathers run out of place).

  perf/netns_peers.py --build build --peers ../shared/peers/bin --nodes 4 --ppn 2
  perf/netns_peers.py --peers ../shared/peers/bin -o allgather -b 8 -e 1M --gloo new
"""
import argparse
import json
import os
import statistics
import sys
import tempfile

from netns_common import add_job_options, parse_size, run_netns, sweeps
from progress import Progress

LEGACY_INPLACE = {"ring", "ring_chunked", "halving_doubling", "bcube"}


def rows(output, time_col, bw_col):
    """{size: (time_us, busbw)} from an nccl-tests style table."""
    out = {}
    for line in output.splitlines():
        parts = line.split()
        if not parts or not parts[0].isdigit():
            continue
        try:
            out[int(parts[0])] = (float(parts[time_col]), float(parts[bw_col]))
        except (IndexError, ValueError):
            pass
    return out


def run_weft(args, sweep):
    tool = "all_reduce_perf" if args.op == "allreduce" else "all_gather_perf"
    out = run_netns(args, [os.path.join(args.build, "perf", tool)] + sweep + ["-c", "0"], "weft")
    return rows(out, 5, 7), rows(out, 9, 11)


def run_mpi(args, sweep):
    program = ["env", "OMPI_MCA_pml=ob1", "OMPI_MCA_btl=self,vader,tcp",
               "OMPI_MCA_mpi_yield_when_idle=1",
               os.path.join(args.peers, "mpi_coll_bench")] + sweep + ["-c", "0", "-o", args.op]
    return rows(run_netns(args, program, "mpi", mpirun=True), 4, 6)


def run_gloo(args, algo, sweep):
    with tempfile.TemporaryDirectory(prefix="weft-gloo-store.") as store:
        bench = " ".join([os.path.join(args.peers, "gloo_coll_bench"), "-a", algo, "-S", store,
                          "-o", args.op, "-c", "0"] + sweep)
        # Each rank binds its node's address: WEFT_SOCKET_IFNAME is "=<the node's link>".
        shell = ('addr=$(ip -4 -o addr show dev "${WEFT_SOCKET_IFNAME#=}" | '
                 'sed -n "s/.* inet \\([0-9.]*\\).*/\\1/p"); '
                 'RANK=$WEFT_RANK SIZE=$WEFT_WORLD_SIZE PREFIX=gloo exec ' + bench + ' -H "$addr"')
        return rows(run_netns(args, ["sh", "-c", shell], "gloo " + algo), 4, 6)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    add_job_options(ap)
    ap.add_argument("--peers", default="../shared/peers/bin")
    ap.add_argument("-o", "--op", choices=["allreduce", "allgather"], default="allreduce")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--gloo", default="ring,halving_doubling,new",
                    help="Gloo algorithms to run (comma list; empty: none)")
    ap.add_argument("--no-mpi", action="store_true")
    ap.add_argument("--json", metavar="FILE",
                    help="also write the medians as JSON records that weft-plot draws")
    args = ap.parse_args()
    gloo = [a for a in args.gloo.split(",") if a]
    if args.op == "allgather":
        gloo = [a for a in gloo if a in ("ring", "new")]

    programs = ["weft"] + ([] if args.no_mpi else ["mpi"]) + ["gloo:" + a for a in gloo]
    samples = {p: {} for p in programs + ["weft-ip"]}
    progress = Progress(args.rounds * len(programs))
    for rnd in range(args.rounds):
        order = programs if rnd % 2 == 0 else list(reversed(programs))
        for prog in order:
            progress.step("round %d/%d, %s" % (rnd + 1, args.rounds, prog))
            for (a, b, iters) in sweeps(args):
                # A job's first few hundred calls run up to 2.5x slower on this
                # emulation (the ranks and the relay settle on the cores;
                # docs/performance.md): latency-bound sizes warm up 5x as long as
                # they are timed, every program alike.
                warm = 5 * iters if a <= parse_size(args.split) else max(2, iters // 4)
                sweep = ["-b", str(a), "-e", str(b), "-f", str(args.f), "-w", str(warm),
                         "-n", str(iters)]
                if prog == "weft":
                    oop, ip = run_weft(args, sweep)
                    found = {"weft": oop, "weft-ip": ip}
                elif prog == "mpi":
                    found = {"mpi": run_mpi(args, sweep)}
                else:
                    found = {prog: run_gloo(args, prog[5:], sweep)}
                for name, table in found.items():
                    for size, val in table.items():
                        samples[name].setdefault(size, []).append(val)
    progress.finish()

    def med(name, size):
        vals = samples[name].get(size)
        return statistics.median(v[0] for v in vals) if vals else None

    print("# %s, %d nodes x %d ranks, links %.0f Mbit/s and %.0f us one way; us per call, "
          "median of %d alternating rounds" % (args.op, args.nodes, args.ppn, args.rate_mbit,
                                               args.delay_us, args.rounds))
    head = ["size (B)", "weft", "weft busbw", "mpi", "mpi/weft", "gloo best", "gloo/weft"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for size in sorted(samples["weft"]):
        w = med("weft", size)
        wbw = statistics.median(v[1] for v in samples["weft"][size])
        m = med("mpi", size) if "mpi" in samples else None
        best = min(((med(p, size), p[5:]) for p in programs
                    if p.startswith("gloo:") and med(p, size) is not None), default=None)
        cells = [str(size), "%.1f" % w, "%.3f" % wbw, "%.1f" % m if m else "-",
                 "%.2f" % (m / w) if m else "-"]
        if best:
            inplace = args.op == "allreduce" and best[1] in LEGACY_INPLACE
            ref = med("weft-ip", size) if inplace else w
            cells += ["%.1f (%s)" % best, "%.2f" % (best[0] / ref) if ref else "-"]
        else:
            cells += ["-", "-"]
        print("| " + " | ".join(cells) + " |")
    print("# ratios are peer time / weft time: above 1 means weft is faster")
    if args.json:
        settings = ("%d nodes x %d ranks, links %.0f Mbit/s and %.0f us one way, medians of %d "
                    "rounds" % (args.nodes, args.ppn, args.rate_mbit, args.delay_us, args.rounds))
        records = []
        for name, table in samples.items():
            label = {"weft": "weft", "weft-ip": "weft in place", "mpi": "Open MPI"}.get(
                name, name.replace("gloo:", "Gloo "))
            for size, vals in sorted(table.items()):
                records.append({"label": label, "tool": args.op, "size": size,
                                "time_us": statistics.median(v[0] for v in vals),
                                "busbw": statistics.median(v[1] for v in vals),
                                "nranks": args.nodes * args.ppn, "placement": "out-of-place",
                                "settings": settings})
        with open(args.json, "w") as f:
            json.dump(records, f, indent=1)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Side-by-side allreduce/allgather comparison of weft with Open MPI and Gloo.

Runs weft's perf tool (under weft-run), Open MPI's MPI_Allreduce/MPI_Allgather
(shared/peers' mpi_coll_bench, `--mca btl self,tcp` by default) and every Gloo
algorithm (shared/peers' gloo_coll_bench) over the same sizes, in rounds that
alternate the programs (so machine drift hits all of them alike), and prints a
table of medians: weft time and busbw, each peer's, and the ratios. weft is
quoted out-of-place (nccl-tests' first column), as MPI runs; Gloo's legacy
algorithms reduce in place, so --inplace adds weft's in-place time (measured in
the same runs) and its ratio to the best Gloo algorithm.

  perf/compare_peers.py --build build --peers ../shared/peers/bin -n 2 -b 8 -e 64M --rounds 3
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

from progress import Progress

GLOO_ALLREDUCE = ["ring", "ring_chunked", "halving_doubling", "bcube", "new", "new_bcube"]
GLOO_ALLGATHER = ["ring", "new"]


def parse_size(text):
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    if text[-1].upper() in mult:
        return int(text[:-1]) * mult[text[-1].upper()]
    return int(text)


def rows(output, time_col, busbw_col):
    """{size: (time_us, busbw)} from nccl-tests-style lines."""
    out = {}
    for line in output.splitlines():
        parts = line.split()
        if not parts or line.lstrip().startswith("#") or not parts[0].isdigit():
            continue
        try:
            out[int(parts[0])] = (float(parts[time_col]), float(parts[busbw_col]))
        except (IndexError, ValueError):
            pass
    return out


def run(cmd, env=None, timeout=900):
    merged = dict(os.environ)
    merged.update(env or {})
    res = subprocess.run(cmd, capture_output=True, text=True, env=merged, timeout=timeout)
    if res.returncode != 0:
        sys.stderr.write("command failed (%d): %s\n%s%s" % (res.returncode, " ".join(cmd),
                                                            res.stdout[-2000:], res.stderr[-2000:]))
    return res.stdout


def machine():
    """The CPU model and how many CPUs this process may use, for the charts."""
    model = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return "%s, %d CPUs" % (model, len(os.sched_getaffinity(0)))


def write_json(args, n, sizes, results, median):
    """One record per program and size: the medians over the rounds."""
    names = {"weft": "weft", "weftIP": "weft in place", "weftR": "weft (weftHostAlloc)",
             "base": "weft baseline", "mpi": "Open MPI"}
    settings = "%s, medians of %d rounds, MPI btl %s" % (args.transport, args.rounds, args.mpi_btl)
    records = []
    for key in results:
        if key == "weftIP" and not args.inplace:
            continue
        for s in sizes:
            t, bw = median(key, s, 0), median(key, s, 1)
            if t is None:
                continue
            label = names.get(key, key.replace("gloo:", "Gloo "))
            records.append({"label": label, "tool": args.op, "size": s, "time_us": t,
                            "busbw": bw or 0.0, "nranks": n, "placement": "out-of-place",
                            "machine": machine(), "settings": settings})
    with open(args.json, "w") as f:
        json.dump(records, f, indent=1)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--peers", default=os.environ.get("WEFT_PEERS_BIN", "../shared/peers/bin"))
    ap.add_argument("-n", "--nranks", type=int, default=2)
    ap.add_argument("-b", default="8")
    ap.add_argument("-e", default="64M")
    ap.add_argument("-f", default="2")
    ap.add_argument("-o", "--op", default="allreduce", choices=["allreduce", "allgather"])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--iters", default="20", help="timed iterations per size above 64 KiB (weft -n, peers -n)")
    ap.add_argument("--small-iters", default="2000",
                    help="timed iterations per size up to 64 KiB (latency needs many; 1/10 as many warmups)")
    ap.add_argument("--transport", default="tcp", choices=["tcp", "shm"],
                    help="tcp: weft with WEFT_SHM_DISABLE=1 vs MPI btl self,tcp; shm: weft's shared memory vs MPI btl self,vader")
    ap.add_argument("--mpi-btl", default=None, help="override the MPI btl list")
    ap.add_argument("--no-gloo", action="store_true", help="skip Gloo (it has no shared-memory transport)")
    ap.add_argument("--gloo", default=None, help="comma list of Gloo algorithms (default: all)")
    ap.add_argument("--registered", action="store_true",
                    help="also run weft on weftHostAlloc buffers (perf tool -R 1) in every round, "
                         "as extra columns")
    ap.add_argument("--inplace", action="store_true",
                    help="also print weft's in-place time (the perf tool's second column, same runs) "
                         "and Gloo's best time over it")
    ap.add_argument("--thp", action="store_true",
                    help="run every program with GLIBC_TUNABLES=glibc.malloc.hugetlb=1, so that "
                         "glibc asks for transparent huge pages on large allocations (on a "
                         "machine whose THP setting is 'madvise'); all sides alike")
    ap.add_argument("--baseline", metavar="BUILD",
                    help="also run another weft build's perf tool (e.g. one built from an "
                         "earlier commit) in every round, right after this one, as extra "
                         "columns: its time and base/weft")
    ap.add_argument("--json", metavar="FILE",
                    help="also write the medians as JSON records (label, size, time_us, busbw, "
                         "machine, settings) that weft-plot draws, every program on one chart")
    args = ap.parse_args()
    if args.thp:
        # Inherited by weft-run, mpirun and the Gloo ranks alike.
        os.environ["GLIBC_TUNABLES"] = "glibc.malloc.hugetlb=1"

    n = args.nranks
    if args.mpi_btl is None:
        args.mpi_btl = "self,tcp" if args.transport == "tcp" else "self,vader"
    weft_env = {"WEFT_SHM_DISABLE": "1"} if args.transport == "tcp" else {}
    tool = "all_reduce_perf" if args.op == "allreduce" else "all_gather_perf"
    mpi_env = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
               "OMPI_MCA_btl_tcp_if_include": "lo", "OMPI_MCA_oob_tcp_if_include": "lo"}
    algos = args.gloo.split(",") if args.gloo else (GLOO_ALLREDUCE if args.op == "allreduce" else GLOO_ALLGATHER)
    if args.no_gloo:
        algos = []
    # Two sweeps: many iterations for latency-bound sizes, fewer for large ones.
    lo, hi, split = parse_size(args.b), parse_size(args.e), 64 << 10
    sweeps = []
    if lo <= split:
        sweeps.append((str(lo), str(min(hi, split)), args.small_iters, str(max(5, int(args.small_iters) // 10))))
    if hi > split:
        first = lo
        while first <= split:
            first *= int(args.f)
        sweeps.append((str(first), str(hi), args.iters, "5"))

    results = {"weft": [], "mpi": [], "weftIP": []}
    if args.registered:
        results["weftR"] = []
    if args.baseline:
        results["base"] = []
    for a in algos:
        results["gloo:" + a] = []
    progress = Progress(args.rounds * len(sweeps))
    for rnd in range(args.rounds):
        merged = {k: {} for k in results}
        for b, e, iters, warm in sweeps:
            progress.step("round %d/%d, sizes %s-%s" % (rnd + 1, args.rounds, b, e))
            sweep = ["-b", b, "-e", e, "-f", args.f]
            weft_cmd = [os.path.join(args.build, "tools", "weft-run"), "-n", str(n),
                        os.path.join(args.build, "perf", tool)] + sweep + ["-w", warm, "-n", iters, "-c", "0"]
            mpi_cmd = ["mpirun", "-np", str(n), "--oversubscribe", "--mca", "pml", "ob1", "--mca", "btl",
                       args.mpi_btl, os.path.join(args.peers, "mpi_coll_bench")] + sweep + \
                      ["-w", warm, "-n", iters, "-T", "1", "-c", "0", "-o", args.op]
            weft_out = run(weft_cmd, weft_env)
            merged["weft"].update(rows(weft_out, 5, 7))
            merged["weftIP"].update(rows(weft_out, 9, 11))
            if args.registered:
                merged["weftR"].update(rows(run(weft_cmd + ["-R", "1"], weft_env), 5, 7))
            if args.baseline:
                base_cmd = [os.path.join(args.baseline, "tools", "weft-run"), "-n", str(n),
                            os.path.join(args.baseline, "perf", tool)] + weft_cmd[4:]
                merged["base"].update(rows(run(base_cmd, weft_env), 5, 7))
            merged["mpi"].update(rows(run(mpi_cmd, mpi_env), 4, 6))
            for a in algos:
                cmd = [os.path.join(args.peers, "gloo_coll_bench"), "-p", str(n), "-a", a] + sweep + \
                      ["-w", warm, "-n", iters, "-T", "1", "-c", "0", "-o", args.op]
                merged["gloo:" + a].update(rows(run(cmd), 4, 6))
        for k in results:
            results[k].append(merged[k])
    progress.finish()

    def median(name, size, idx):
        vals = [r[size][idx] for r in results[name] if size in r]
        return statistics.median(vals) if vals else None

    sizes = sorted(set().union(*[set(r) for r in results["weft"]]))
    if args.thp:
        print("# every program ran with GLIBC_TUNABLES=glibc.malloc.hugetlb=1 (huge pages for large buffers)")
    print("# %s, %d ranks, medians of %d alternating rounds; weft out-of-place over %s; MPI btl %s"
          % (args.op, n, args.rounds, args.transport, args.mpi_btl))
    print("# %10s %10s %9s %10s %9s %10s %9s %-16s %8s %8s" % (
        "size(B)", "weft us", "weft GB/s", "mpi us", "mpi GB/s", "gloo us", "gloo GB/s",
        "gloo best algo", "mpi/weft", "gloo/weft") +
          (" %10s %9s %8s" % ("weft-R us", "weft-R GB/s", "mpi/weft-R") if args.registered else "") +
          (" %10s %12s" % ("weft-ip us", "gloo/weft-ip") if args.inplace else "") +
          (" %10s %9s" % ("base us", "base/weft") if args.baseline else ""))
    for s in sizes:
        wt, wb = median("weft", s, 0), median("weft", s, 1)
        mt, mb = median("mpi", s, 0), median("mpi", s, 1)
        best = None
        for a in algos:
            t = median("gloo:" + a, s, 0)
            if t is not None and (best is None or t < best[1]):
                best = (a, t, median("gloo:" + a, s, 1))
        fmt = lambda v, f: (f % v) if v is not None else "-"
        print("  %10d %10s %9s %10s %9s %10s %9s %-16s %8s %8s" % (
            s, fmt(wt, "%.2f"), fmt(wb, "%.3f"), fmt(mt, "%.2f"), fmt(mb, "%.3f"),
            fmt(best[1] if best else None, "%.2f"), fmt(best[2] if best else None, "%.3f"),
            best[0] if best else "-", fmt(mt / wt if mt and wt else None, "%.2fx"),
            fmt(best[1] / wt if best and wt else None, "%.2fx")) +
              (" %10s %9s %8s" % (fmt(median("weftR", s, 0), "%.2f"), fmt(median("weftR", s, 1), "%.3f"),
                                  fmt(mt / median("weftR", s, 0) if mt and median("weftR", s, 0) else None,
                                      "%.2fx")) if args.registered else "") +
              (" %10s %12s" % (fmt(median("weftIP", s, 0), "%.2f"),
                               fmt(best[1] / median("weftIP", s, 0) if best and median("weftIP", s, 0)
                                   else None, "%.2fx")) if args.inplace else "") +
              (" %10s %9s" % (fmt(median("base", s, 0), "%.2f"),
                              fmt(median("base", s, 0) / wt if median("base", s, 0) and wt else None,
                                  "%.2fx")) if args.baseline else ""))
    if args.json:
        write_json(args, n, sizes, {k: v for k, v in results.items() if v and v[0]}, median)
    print("# mpi/weft and gloo/weft are time ratios: above 1 means weft is faster."
          + (" weft-R: buffers from weftHostAlloc (-R 1)." if args.registered else "")
          + (" weft-ip: weft in place (as Gloo's legacy algorithms run)." if args.inplace else "")
          + (" base: the --baseline build, base/weft above 1: this build is faster." if args.baseline else ""))


if __name__ == "__main__":
    main()

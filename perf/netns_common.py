"""What the emulated-node comparisons (netns_compare.py, netns_peers.py) share:
the job options, the split of a size sweep into a latency part (many
iterations) and a bandwidth part (few), and running one program over the
namespaces with tests/netns/netns_job.sh (root only)."""
import os
import subprocess
import sys


def parse_size(text):
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    if text[-1].upper() in mult:
        return int(text[:-1]) * mult[text[-1].upper()]
    return int(text)


def add_job_options(ap):
    """The options of the emulated network and of the size sweep."""
    ap.add_argument("--build", default="build")
    ap.add_argument("--nodes", type=int, default=4)
    ap.add_argument("--ppn", type=int, default=2)
    ap.add_argument("--delay-us", type=float, default=200)
    ap.add_argument("--rate-mbit", type=float, default=1000)
    ap.add_argument("-b", default="8")
    ap.add_argument("-e", default="64M")
    ap.add_argument("-f", type=int, default=4)
    ap.add_argument("--split", default="1M", help="sizes above this run --iters-large iterations")
    ap.add_argument("--iters-small", type=int, default=40)
    ap.add_argument("--iters-large", type=int, default=4)
    ap.add_argument("--relay-rt", action="store_true",
                    help="run the relay at real-time priority (netns_job.sh --relay-rt)")
    ap.add_argument("--timeout", type=int, default=400)


def sweeps(args):
    """[(first size, last size, iterations)]: up to --split, then above it."""
    lo, hi, split = parse_size(args.b), parse_size(args.e), parse_size(args.split)
    out = []
    if lo <= split:
        out.append((lo, min(hi, split), args.iters_small))
    if hi > split:
        first = lo
        while first <= split:
            first *= args.f
        out.append((first, hi, args.iters_large))
    return out


def run_netns(args, program, label, mpirun=False):
    """Runs `program` on every rank (or under mpirun); its output, "" on failure."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    cmd = ["bash", os.path.join(root, "tests/netns/netns_job.sh"),
           "--relay", os.path.join(args.build, "tests/netns/weft-tun-relay"),
           "--nodes", str(args.nodes), "--ppn", str(args.ppn), "--link", "tun",
           "--delay-us", str(args.delay_us), "--rate-mbit", str(args.rate_mbit),
           "--timeout", str(args.timeout)] + (["--relay-rt"] if args.relay_rt else []) + \
          (["--mpirun"] if mpirun else []) + ["--"] + program
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout + 60)
    if res.returncode != 0:
        sys.stderr.write("%s failed (%d):\n%s%s" % (label, res.returncode, res.stdout[-3000:],
                                                    res.stderr[-2000:]))
        return ""
    return res.stdout

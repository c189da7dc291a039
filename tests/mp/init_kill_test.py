#!/usr/bin/env python3
"""Kills one rank at a random moment of a job's start and times the survivors.

  init_kill_test.py PROBE --transport tcp|shm [--trials N] [--ranks N]
                    [--window SEC] [--timeout SEC] [--limit SEC]

Each trial starts RANKS copies of mp_init_probe from the environment
(WEFT_ROOT_ADDR on loopback, rank 0 serving the rendezvous), SIGKILLs a random
rank at a random time in [0, WINDOW) s after the start, and measures how long
each survivor takes from the kill to its exit.

A rank that dies before it reached the rendezvous root cannot be told from a
late one: the survivors then wait WEFT_TIMEOUT (TIMEOUT here) and name the
ranks that never arrived (the summary counts those that died before they
called init, as the probe's START line tells, and those that died in it).
Every other death must fail every survivor within LIMIT s with a sentence
that names the dead rank. Prints a line per trial and a summary; exits 1 when
a trial breaks either rule.
"""
import argparse
import os
import random
import re
import secrets
import signal
import socket
import statistics
import subprocess
import sys
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_trial(args, rng):
    port = free_port()
    victim = rng.randrange(args.ranks)
    delay = rng.uniform(0, args.window)
    env = dict(os.environ, WEFT_ROOT_ADDR=f"127.0.0.1:{port}", WEFT_SECRET=secrets.token_hex(16),
               WEFT_WORLD_SIZE=str(args.ranks), WEFT_TIMEOUT=str(args.timeout),
               MP_PROBE_SECONDS="2")
    env.pop("WEFT_UNIQUE_ID", None)
    if args.transport == "tcp":
        env["WEFT_SHM_DISABLE"] = "1"
    procs = []
    start = time.monotonic()
    for r in range(args.ranks):
        procs.append(subprocess.Popen([args.probe], env=dict(env, WEFT_RANK=str(r)),
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
    time.sleep(max(0.0, start + delay - time.monotonic()))
    procs[victim].kill()
    killed = time.monotonic()
    ended = {}
    hard = killed + args.timeout + 15
    while len(ended) < args.ranks and time.monotonic() < hard:
        for r, p in enumerate(procs):
            if r not in ended and p.poll() is not None:
                ended[r] = time.monotonic()
        time.sleep(0.002)
    for p in procs:
        if p.poll() is None:
            p.kill()
    outs = [p.communicate()[0] for p in procs]
    return victim, delay, killed, ended, outs


def judge(args, victim, delay, killed, ended, outs):
    """Returns (kind, worst survivor seconds, problems)."""
    problems = []
    survivors = [r for r in range(args.ranks) if r != victim]
    # Each survivor's verdict line (a sanitizer's report may follow it).
    lines = {r: ([l for l in outs[r].splitlines() if re.match(r"(INIT-FAIL|CALL-FAIL|OK$)", l)]
                 or ["(nothing)"])[-1] for r in survivors}
    if all(lines[r] == "OK" for r in survivors):
        return "after", 0.0, []  # every survivor had finished before the kill
    early = any("never arrived" in lines[r] or "WEFT_TIMEOUT) connecting to the rendezvous root"
                in lines[r] or "WEFT_TIMEOUT) waiting for the rendezvous root" in lines[r]
                for r in survivors)
    worst = 0.0
    for r in survivors:
        if r not in ended:
            problems.append(f"rank {r} still ran {args.timeout + 15} s after the kill")
            continue
        took = ended[r] - killed
        worst = max(worst, took)
        if lines[r] == "OK":
            continue  # it finished its calls before the death mattered to it
        # A death during the calls after init may reach a survivor as a
        # neighbour's closed connection; one during init is named by the root.
        named = (re.search(rf"\branks? ([0-9]+,)*{victim}\b", lines[r]) is not None or
                 (victim == 0 and "rendezvous root" in lines[r]))
        if lines[r].startswith("INIT-FAIL") and not named:
            problems.append(f"rank {r}'s sentence does not name rank {victim}: {lines[r]}")
        if not early and took > args.limit:
            problems.append(f"rank {r} failed {took:.2f} s after the kill (limit {args.limit} s)")
        if early and took > args.timeout + 5:
            problems.append(f"rank {r} failed {took:.2f} s after the kill, past WEFT_TIMEOUT")
    in_init = any(lines[r].startswith("INIT-FAIL") for r in survivors)
    if early and "START" not in outs[victim].split():
        return "before-start", worst, problems  # it died before it called init
    return ("before-root" if early else "init" if in_init else "calls"), worst, problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("probe")
    ap.add_argument("--transport", choices=["tcp", "shm"], required=True)
    ap.add_argument("--trials", type=int, default=50)
    ap.add_argument("--ranks", type=int, default=4)
    ap.add_argument("--window", type=float, default=0.3)
    ap.add_argument("--timeout", type=int, default=4)
    ap.add_argument("--limit", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=None)
    args = ap.parse_args()
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    rng = random.Random(seed)
    print(f"init_kill: {args.trials} trials, {args.ranks} ranks over {args.transport}, "
          f"kill within {args.window} s, seed {seed}")
    kinds = {"init": [], "calls": [], "before-root": [], "before-start": [], "after": []}
    failed = 0
    for t in range(args.trials):
        victim, delay, killed, ended, outs = run_trial(args, rng)
        kind, worst, problems = judge(args, victim, delay, killed, ended, outs)
        kinds[kind].append(worst)
        print(f"trial {t}: killed rank {victim} at {delay * 1000:.0f} ms ({kind}): "
              f"slowest survivor failed {worst:.3f} s after")
        for p in problems:
            print(f"  FAIL: {p}")
        if problems:
            failed += 1
            for r, o in enumerate(outs):
                print(f"  rank {r}: {o.strip()[-400:]}")
    for kind, what in (("init", "during init"), ("calls", "during the first calls")):
        d = kinds[kind]
        if d:
            print(f"SUMMARY {args.transport}: {len(d)} deaths {what}: slowest survivor "
                  f"{max(d):.3f} s, median {statistics.median(d):.3f} s (limit {args.limit} s)")
    print(f"SUMMARY {args.transport}: deaths before the rank reached the root (survivors waited "
          f"WEFT_TIMEOUT={args.timeout} s): {len(kinds['before-start'])} before it called init, "
          f"{len(kinds['before-root'])} in init; {len(kinds['after'])} after every survivor "
          f"finished; {failed} trial(s) failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""A stream of stranger connections to a job's rendezvous port.

  flood_test.py PROBE [--seconds S] [--max-warn N]

Starts rank 0 of a 2-rank job from the environment (it serves the rendezvous),
floods its port with connections that send a Hello-sized record of random
bytes and close, starts rank 1 halfway through the flood, and checks that the
job still forms and runs, and that rank 0 logged at most N WARN lines
(repeated warnings are rate-limited per place in the code).
"""
import argparse
import os
import secrets
import socket
import subprocess
import sys
import threading
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def flood(port, until, counter):
    while time.monotonic() < until:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                s.sendall(os.urandom(72))
            counter[0] += 1
        except OSError:
            time.sleep(0.001)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("probe")
    ap.add_argument("--seconds", type=float, default=6.0)
    ap.add_argument("--max-warn", type=int, default=40)
    args = ap.parse_args()
    port = free_port()
    env = dict(os.environ, WEFT_ROOT_ADDR=f"127.0.0.1:{port}", WEFT_SECRET=secrets.token_hex(16),
               WEFT_WORLD_SIZE="2", WEFT_TIMEOUT="60", WEFT_DEBUG="WARN", MP_PROBE_SECONDS="0.5")
    env.pop("WEFT_UNIQUE_ID", None)
    start = time.monotonic()
    rank0 = subprocess.Popen([args.probe], env=dict(env, WEFT_RANK="0"), stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True)
    time.sleep(0.3)  # rank 0 listens
    counter = [0]
    until = start + args.seconds
    threads = [threading.Thread(target=flood, args=(port, until, counter)) for _ in range(4)]
    for t in threads:
        t.start()
    time.sleep(args.seconds / 2)
    rank1 = subprocess.Popen([args.probe], env=dict(env, WEFT_RANK="1"), stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True)
    for t in threads:
        t.join()
    try:
        out0 = rank0.communicate(timeout=60)[0]
        out1 = rank1.communicate(timeout=60)[0]
    except subprocess.TimeoutExpired:
        rank0.kill()
        rank1.kill()
        print("FAIL: the job did not finish within 60 s of the flood's end")
        return 1
    warns = [l for l in out0.splitlines() if " WEFT WARN " in l]
    print(f"flood: {counter[0]} connections in {args.seconds:.0f} s; rank 0 logged "
          f"{len(warns)} WARN line(s) (at most {args.max_warn}); last lines:")
    for l in (out0.strip().splitlines()[-4:] + out1.strip().splitlines()[-2:]):
        print("  " + l)
    fail = 0
    if not out0.strip().endswith("OK") or not out1.strip().endswith("OK"):
        print("FAIL: the job did not form and run under the flood")
        fail = 1
    if len(warns) > args.max_warn:
        print(f"FAIL: {len(warns)} WARN lines: the flood floods the log")
        fail = 1
    if counter[0] < 100:
        print(f"FAIL: only {counter[0]} connections reached the port: no flood to judge")
        fail = 1
    if not fail:
        print("PASS")
    return fail


if __name__ == "__main__":
    sys.exit(main())

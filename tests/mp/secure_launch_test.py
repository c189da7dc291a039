#!/usr/bin/env python3
"""An outsider who knows a job's rendezvous address and size tries to join it.

  secure_launch_test.py PROBE

Plays the attacker against torchrun-style launches (MASTER_ADDR, MASTER_PORT,
RANK, WORLD_SIZE) of mp_init_probe:
  loopback, no WEFT_SECRET: another user computes the secret from the address
      and size and claims rank 1 (needs root to become that user); the root
      must drop it, and the real rank 1 must then join;
  loopback: the rendezvous must not answer on the host's network address;
  network address, no WEFT_SECRET: every rank must refuse at once, saying to
      set WEFT_SECRET;
  network address with WEFT_SECRET: a stranger with the address-derived
      secret must be dropped, and the job must form.
A case that needs what this machine lacks prints "SKIPPED: why".
"""
import os
import socket
import struct
import subprocess
import sys
import time

MAGIC, VERSION, HELLO_ROOT = 0x54464557, 3, 1


def fnv1a(data):
    h = 14695981039346656037
    for b in data:
        h = ((h ^ b) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return h


def derived_secret(root_addr, world):
    seed = f"weft-job:{root_addr}:{world}"
    return b"".join(struct.pack("<Q", fnv1a(f"{seed}#{i}".encode())) for i in range(0, 32, 8))


def attack(host, port, root_addr, world, rank):
    """Claims `rank`; prints ADMITTED (the root sent the table), DROPPED or REFUSED."""
    hello = struct.pack("<IHH32siiI", MAGIC, VERSION, HELLO_ROOT,
                        derived_secret(root_addr, world), rank, world, 0)
    hello += struct.pack("<HH16s", socket.AF_INET, 4321, socket.inet_aton("127.0.0.1"))
    try:
        s = socket.create_connection((host, port), timeout=5)
    except OSError as e:
        print(f"REFUSED {e}")
        return
    try:
        s.sendall(hello)
        reply = s.recv(16)
        if len(reply) == 16 and struct.unpack("<iiII", reply)[0] == 0:
            print("ADMITTED")
        else:
            print("DROPPED")
    except OSError:
        print("DROPPED")


def free_port():
    """A MASTER_PORT whose rendezvous port (MASTER_PORT + 1) is free now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1] - 1


def network_address():
    out = subprocess.run(["ip", "-o", "-4", "addr", "show", "scope", "global"],
                         capture_output=True, text=True).stdout.split()
    for i, w in enumerate(out):
        if w == "inet":
            return out[i + 1].split("/")[0]
    return None


def start_rank(probe, addr, port, rank, secret=None):
    env = dict(os.environ, MASTER_ADDR=addr, MASTER_PORT=str(port), RANK=str(rank),
               WORLD_SIZE="2", WEFT_TIMEOUT="20", MP_PROBE_SECONDS="0.2", WEFT_DEBUG="WARN")
    for k in ("WEFT_SECRET", "WEFT_ROOT_ADDR", "WEFT_UNIQUE_ID", "WEFT_RANK", "WEFT_WORLD_SIZE"):
        env.pop(k, None)
    if secret:
        env["WEFT_SECRET"] = secret
    return subprocess.Popen([probe], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)


def run_attacker(host, port, root_addr, as_user):
    cmd = [sys.executable, os.path.abspath(__file__), "--attack", host, str(port), root_addr, "2",
           "1"]
    if as_user:
        cmd = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] + cmd
    return subprocess.run(cmd, capture_output=True, text=True, timeout=30).stdout.strip()


def job_case(name, probe, addr, secret, attacker_host, as_user):
    """Rank 0 up, the attacker claims rank 1, then the real rank 1 joins."""
    port = free_port()
    root_addr = f"{addr}:{port + 1}"
    rank0 = start_rank(probe, addr, port, 0, secret)
    time.sleep(0.5)
    said = run_attacker(attacker_host, port + 1, root_addr, as_user)
    rank1 = start_rank(probe, addr, port, 1, secret)
    outs = [p.communicate(timeout=60)[0].strip() for p in (rank0, rank1)]
    good = not said.startswith("ADMITTED") and all(o.endswith("OK") for o in outs)
    print(f"{name}: attacker {said or '(nothing)'}; job: "
          f"{'formed' if all(o.endswith('OK') for o in outs) else 'FAILED'}")
    if not good:
        print("FAIL: " + " | ".join(outs))
    return good


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--attack":
        attack(sys.argv[2], int(sys.argv[3]), sys.argv[4], int(sys.argv[5]), int(sys.argv[6]))
        return 0
    probe = sys.argv[1]
    ok = True
    if os.geteuid() == 0:
        ok &= job_case("loopback, no WEFT_SECRET, another user claims rank 1", probe, "127.0.0.1",
                       None, "127.0.0.1", True)
    else:
        print("SKIPPED: loopback case: becoming another user needs root")
    net = network_address()
    if net is None:
        print("SKIPPED: network cases: this machine has no global IPv4 address")
        return 0 if ok else 1
    # The loopback rendezvous is not on the network address.
    port = free_port()
    rank0 = start_rank(probe, "127.0.0.1", port, 0)
    time.sleep(0.5)
    said = run_attacker(net, port + 1, f"127.0.0.1:{port + 1}", False)
    rank0.kill()
    rank0.communicate()
    print(f"loopback rendezvous, reached at {net}: attacker {said}")
    ok &= said.startswith("REFUSED")
    # A network address without a secret: refused at once, naming WEFT_SECRET.
    port = free_port()
    t = time.monotonic()
    procs = [start_rank(probe, net, port, r) for r in (0, 1)]
    outs = [p.communicate(timeout=60)[0].strip() for p in procs]
    took = time.monotonic() - t
    refused = all("INIT-FAIL" in o and "WEFT_SECRET" in o for o in outs)
    print(f"{net}, no WEFT_SECRET: {'both ranks refused' if refused else 'FAIL'} in {took:.2f} s: "
          f"{outs[0][-300:]}")
    ok &= refused and took < 5
    ok &= job_case(f"{net} with WEFT_SECRET, a stranger uses the derived secret", probe, net,
                   "s3cret-" + str(port), net, False)
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

"""examples/ddp_recovery.py under weft-run with one standby: a rank killed
(SIGKILL) at a step drawn from the seed; the job must finish with rank 0's
parameters bitwise equal to a run without the failure. With LATE, the
standby starts LATE seconds late and the rank dies at step 1, before the
standby waits: the survivors' replace must wait for it, not go on shrunk.

    test_recovery.py WEFT_RUN EXAMPLE NRANKS SEED [LATE]"""
import os
import random
import subprocess
import sys
import tempfile

import torch


def run(weft_run, example, nranks, out, extra, standby, late=0):
    late_start = ["sh", "-c", 'if [ -n "$WEFT_STANDBY" ]; then sleep %s; fi; exec "$0" "$@"'
                  % late] if late else []
    cmd = [weft_run, "-n", str(nranks)] + (["--standby", "1"] if standby else []) + \
          ["--timeout", "240"] + late_start + \
          [sys.executable, example, "--steps", "16", "--out", out] + extra
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=280)
    text = done.stdout + done.stderr
    print("\n".join(line for line in text.splitlines() if "WEFT WARN" not in line))
    if done.returncode != 0 or not os.path.exists(out):
        sys.exit("FAIL: %s exited with %d" % (" ".join(cmd), done.returncode))
    return text


def main():
    weft_run, example, nranks, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    late = float(sys.argv[5]) if len(sys.argv) > 5 else 0
    rng = random.Random(seed)
    victim, step = rng.randrange(nranks), rng.randrange(1, 15)
    if late:
        step = 1
    with tempfile.TemporaryDirectory() as tmp:
        ref, got = os.path.join(tmp, "ref.pt"), os.path.join(tmp, "got.pt")
        run(weft_run, example, nranks, ref, [], False)
        text = run(weft_run, example, nranks, got,
                   ["--kill-rank", str(victim), "--kill-step", str(step)], True, late)
        if "standby as rank %d: restored" % victim not in text:
            sys.exit("FAIL: the standby did not restore rank %d's state" % victim)
        a, b = torch.load(ref), torch.load(got)
        if not all(torch.equal(x, y) for x, y in zip(a, b)):
            sys.exit("FAIL: the parameters differ from a run without the failure")
    print("passed: rank %d killed at step %d; parameters bitwise equal to a run without it"
          % (victim, step))


if __name__ == "__main__":
    main()

#!/bin/sh
# A rank dies mid-job: checks what the survivors and weft-run do about it.
#   kill_rank_test.sh WEFT_RUN MP_KILL NRANKS sigkill|exit|stop [ARGS...]
# Runs mp_kill under weft-run with WEFT_TIMEOUT=10 and passes when weft-run
# exits nonzero (not by its own --timeout), every survivor printed SURVIVOR-OK
# (its allreduce failed with weftRemoteError/weftTimeout in time) and nothing
# printed UNEXPECTED. The ranks' own exit codes are nonzero by design, so this
# script, not the exit status of weft-run, is the test's verdict. ARGS go to
# MP_KILL after "--die MODE".
set -u
if [ $# -lt 4 ]; then
  echo "usage: $0 WEFT_RUN MP_KILL NRANKS sigkill|exit|stop [ARGS...]" >&2
  exit 2
fi
weft_run=$1
mp_kill=$2
nranks=$3
mode=$4
shift 4

out=$(mktemp)
trap 'rm -f "$out"' EXIT
WEFT_TIMEOUT=${WEFT_TIMEOUT:-10} "$weft_run" -n "$nranks" --timeout 60 "$mp_kill" --die "$mode" "$@" >"$out" 2>&1
rc=$?
cat "$out"
echo "--- weft-run exited with status $rc"

fail=0
if [ "$rc" -eq 0 ]; then
  echo "FAIL: weft-run exited 0 although rank 1 died"
  fail=1
elif [ "$rc" -eq 124 ]; then
  echo "FAIL: weft-run hit its own --timeout: the survivors hung"
  fail=1
fi
if ! grep -q '^DYING rank 1' "$out"; then
  echo "FAIL: rank 1 never reached the point where it dies"
  fail=1
fi
survivors=$(grep -c '^SURVIVOR-OK' "$out")
if [ "$survivors" -ne $((nranks - 1)) ]; then
  echo "FAIL: $survivors of $((nranks - 1)) survivors reported the expected failure"
  fail=1
fi
# A hung rank is found by the timeout, whose sentence must name it (a survivor
# may instead see a peer that timed out first close its connections).
if [ "$mode" = stop ] && ! grep -q '^SURVIVOR-OK.*ranks that have not arrived: 1$' "$out"; then
  echo "FAIL: no survivor's timeout sentence named rank 1 as the rank that has not arrived"
  fail=1
fi
if grep -q 'UNEXPECTED' "$out"; then
  echo "FAIL: unexpected behaviour (lines marked UNEXPECTED above)"
  fail=1
fi
if [ "$fail" -eq 0 ]; then
  echo "PASS: rank 1 died ($mode); $survivors survivors failed cleanly; weft-run exited $rc"
fi
exit "$fail"

#!/bin/sh
# Knobs that every rank must share (core/config_agree.h): a job whose rank 1
# runs with another value must fail at init, within seconds, on every rank,
# naming the knob. Before the check, WEFT_SHM_DISABLE=1 on one rank hung
# until WEFT_TIMEOUT and WEFT_CHECK_CALLS=0 on one rank gave wrong sums.
# Knobs a rank may set alone (WEFT_TIMEOUT), or a job-wide one set to its
# default on one rank only, must still run.
#   config_agree_test.sh WEFT_RUN MP_COLLECTIVES
set -u
if [ $# -ne 2 ]; then
  echo "usage: $0 WEFT_RUN MP_COLLECTIVES" >&2
  exit 2
fi
weft_run=$1
mp=$2
# Smaller than mp_collectives' defaults (a 64 MiB call): set-up is what is tested here.
small="--large-count 100003 --huge-mib 8"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
fail=0
export WEFT_TIMEOUT=30

# job SETTING: 3 ranks, rank 1 with SETTING exported.
job() {
  start=$(date +%s)
  "$weft_run" -n 3 --timeout 120 sh -c 'if [ "$WEFT_RANK" = 1 ]; then export "$0"; fi; exec "$@"' \
    "$1" "$mp" $small >"$out" 2>&1
  rc=$?
  took=$(($(date +%s) - start))
  echo "--- rank 1 with $1: exit $rc in ${took} s"
  grep -E 'cannot join|passed' "$out" | cut -c1-300
}

for setting in WEFT_CHECK_CALLS=0 WEFT_SHM_DISABLE=1 WEFT_CHUNK=256K WEFT_ALGO=tree; do
  job "$setting"
  name=${setting%%=*}
  if [ "$rc" -eq 0 ]; then
    echo "FAIL: $setting on rank 1 alone: the job ran"
    fail=1
  elif [ "$(grep -c "$name must be the same on every rank" "$out")" -ne 3 ]; then
    cat "$out"
    echo "FAIL: $setting on rank 1 alone: not every rank named $name"
    fail=1
  elif [ "$took" -gt 15 ]; then
    echo "FAIL: $setting on rank 1 alone: took ${took} s to fail"
    fail=1
  fi
done
for setting in WEFT_TIMEOUT=45 WEFT_SOCKET_NSTREAMS=1; do
  job "$setting"
  if [ "$rc" -ne 0 ]; then
    cat "$out"
    echo "FAIL: $setting on rank 1 alone must not stop the job"
    fail=1
  fi
done
[ "$fail" -eq 0 ] && echo "PASS"
exit "$fail"

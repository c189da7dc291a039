#!/usr/bin/env bash
# The perf tools as a user runs them (nccl-tests flags), each through weft-run:
#   every tool, one rank per process;
#   ranks as threads (-t, -g: nccl-tests' threads x GPUs per process), every
#   tool, with the rank count the header must state;
#   -m (grouped calls) and -N (sweeps) with the row count they imply;
#   flag combinations that are refused with a sentence;
#   the progress line: on a terminal only.
# Each run must exit 0 and end with "Out of bounds values : 0 OK".
#   perf_tools_test.sh WEFT_RUN PERF_BIN_DIR
set -uo pipefail
RUN=$1
BIN=$2
TOOLS="all_reduce_perf all_gather_perf reduce_scatter_perf broadcast_perf reduce_perf alltoall_perf sendrecv_perf"
LOG=$(mktemp)
trap 'rm -f "$LOG"' EXIT
failed=0

# run NAME EXPECTED_RANKS EXPECTED_ROWS -- command...: checks exit, footer, ranks, rows.
run() {
  local name=$1 ranks=$2 rows=$3
  shift 4
  if ! timeout 300 "$@" >"$LOG" 2>&1; then
    echo "FAIL $name: exit status $? from: $*"; tail -20 "$LOG"; failed=1; return
  fi
  local got_rows
  got_rows=$(grep -c '^ ' "$LOG")
  if ! grep -q 'Out of bounds values : 0 OK' "$LOG"; then
    echo "FAIL $name: no clean check footer"; tail -20 "$LOG"; failed=1
  elif ! grep -q "nRanks $ranks\$" "$LOG"; then
    echo "FAIL $name: header does not say nRanks $ranks"; head -3 "$LOG"; failed=1
  elif [ "$got_rows" != "$rows" ]; then
    echo "FAIL $name: $got_rows rows, want $rows"; cat "$LOG"; failed=1
  else
    echo "ok   $name ($ranks ranks, $rows rows)"
  fi
}

# refused NAME SENTENCE -- command...: must exit 2 with the sentence.
refused() {
  local name=$1 sentence=$2
  shift 3
  "$@" >"$LOG" 2>&1
  local rc=$?
  if [ $rc -ne 2 ] || ! grep -q -- "$sentence" "$LOG"; then
    echo "FAIL $name: exit $rc, want 2 and '$sentence':"; cat "$LOG"; failed=1
  else
    echo "ok   $name (refused: $sentence)"
  fi
}

for tool in $TOOLS; do
  run "$tool -n 3" 3 3 -- "$RUN" -n 3 "$BIN/$tool" -b 8 -e 512K -f 256
  # 2 processes x 2 threads x 2 "GPUs": ranks 0-3 in one process, 4-7 in the other.
  run "$tool -n 2 -t 2 -g 2" 8 2 -- "$RUN" -n 2 "$BIN/$tool" -b 1K -e 256K -f 256 -t 2 -g 2 -w 1 -n 3
done
run "all_reduce_perf -g 3, every type" 3 10 -- "$RUN" -n 1 "$BIN/all_reduce_perf" -b 4K -e 4K -g 3 -d all
run "all_reduce_perf -t 2, every op" 4 5 -- "$RUN" -n 2 "$BIN/all_reduce_perf" -b 64K -e 64K -t 2 -o all
run "all_reduce_perf -m 4 -N 3" 2 9 -- "$RUN" -n 2 "$BIN/all_reduce_perf" -b 8 -e 1M -f 128 -m 4 -N 3
run "broadcast_perf -t 3 -r 4 -m 2" 6 2 -- "$RUN" -n 2 "$BIN/broadcast_perf" -b 1K -e 1M -f 1024 -t 3 -r 4 -m 2
run "alone, -p 1" 1 1 -- "$BIN/all_reduce_perf" -b 1M -e 1M -p 1
refused "-m with -z" "does not go with -z 1" -- "$BIN/all_reduce_perf" -m 2 -z 1
refused "-g with -D" "run one rank per process" -- "$BIN/all_reduce_perf" -g 2 -D 1
refused "-t 0" "bad value '0' for -t" -- "$BIN/all_reduce_perf" -t 0
# A root that only exists with the threads counted.
refused "-r past the ranks" "root 4 (-r) is not a rank of 4" -- "$RUN" -n 2 "$BIN/broadcast_perf" -t 2 -r 4 -b 8 -e 8
# The progress line: on a terminal (script(1) gives one) rank 0 counts the
# cases on stderr; through a pipe nothing extra is printed.
if command -v script >/dev/null; then
  script -qec "$RUN -n 2 $BIN/all_reduce_perf -b 8 -e 1M -f 4 -w 1 -n 2" /dev/null >"$LOG" 2>&1
  if grep -q '\[9/9\] float sum 524288 B' "$LOG"; then
    echo "ok: progress line on a terminal"
  else
    echo "FAIL: no progress line on a terminal:"; cat -v "$LOG"; failed=1
  fi
else
  echo "SKIPPED: progress line on a terminal: script(1) is not installed"
fi
"$RUN" -n 2 "$BIN/all_reduce_perf" -b 8 -e 1M -f 4 -w 1 -n 2 >"$LOG" 2>&1
if grep -q $'\033\\[K\|\[1/' "$LOG"; then
  echo "FAIL: progress printed into a pipe:"; cat -v "$LOG"; failed=1
else
  echo "ok: no progress line in a pipe"
fi
exit $failed

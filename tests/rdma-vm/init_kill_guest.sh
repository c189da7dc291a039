#!/bin/sh
# The init-death trials (tests/mp/init_kill_test.py) in plain sh, for the
# Soft-RoCE guest, which has busybox but no Python:
#   init_kill_guest.sh PROBE TRIALS RANKS WINDOW_MS [LIMIT_MS]
# Each trial starts RANKS copies of PROBE from the environment (WEFT_ROOT_ADDR
# on loopback, rank 0 serving it), kills a random rank with SIGKILL a random
# WINDOW_MS fraction after the start, and times each survivor from the kill to
# the moment its failed call returned (the probe's FAILED-AT line, on the clock
# of /proc/uptime; its exit when it printed none). A survivor that failed during init must name the
# dead rank and, unless the dead rank never reached the root (then the others
# wait WEFT_TIMEOUT by design), fail within LIMIT_MS (default 1000) of the
# kill. The guest's CPU is emulated in software, several times slower than the
# host's, so its run passes a wider limit and the summary also counts the
# trials over 1 s; the 1 s rule itself is checked natively (init_kill_test.py).
# Prints a line per trial and a summary; exits 1 when a trial breaks a rule.
probe=$1 trials=$2 nranks=$3 window=$4 limit_cs=$(((${5:-1000} + 9) / 10))
dir=/tmp/initkill.$$
mkdir -p "$dir"
now_cs() { cut -d' ' -f1 /proc/uptime | tr -d .; }  # centiseconds
failed=0 worst=0 during=0 before=0 beforeStart=0 calls=0 over1s=0
t=0
while [ "$t" -lt "$trials" ]; do
  port=$((20000 + (RANDOM % 20000)))
  victim=$((RANDOM % nranks))
  delay=$((RANDOM % window))
  pids=""
  r=0
  while [ "$r" -lt "$nranks" ]; do
    WEFT_ROOT_ADDR=127.0.0.1:$port WEFT_SECRET=guest$port$t WEFT_RANK=$r WEFT_WORLD_SIZE=$nranks \
      WEFT_TIMEOUT=${WEFT_TIMEOUT:-10} MP_PROBE_SECONDS=2 "$probe" >"$dir/out.$r" 2>&1 &
    pids="$pids $!"
    r=$((r + 1))
  done
  usleep $((delay * 1000))
  vpid=$(echo $pids | cut -d' ' -f$((victim + 1)))
  kill -9 "$vpid"
  killed=$(now_cs)
  slowest=0 kind=calls
  r=0
  for pid in $pids; do
    if [ "$r" -ne "$victim" ]; then
      while kill -0 "$pid" 2>/dev/null; do usleep 10000; done
      ended=$(now_cs)
      failed_at=$(awk '/^FAILED-AT /{printf "%d", $2 * 100}' "$dir/out.$r")
      took=$((${failed_at:-$ended} - killed))
      [ "$took" -lt 0 ] && took=0
      [ "$took" -gt "$slowest" ] && slowest=$took
      line=$(tail -n 1 "$dir/out.$r")
      case "$line" in
        *"never arrived"*|*"connecting to the rendezvous root"*|*"waiting for the rendezvous root"*) kind=before ;;
        INIT-FAIL*)
          [ "$kind" = calls ] && kind=init
          if ! echo "$line" | grep -Eq "ranks? ([0-9]+,)*$victim\b|rendezvous root"; then
            echo "  FAIL: rank $r does not name rank $victim: $line"
            failed=$((failed + 1))
          fi ;;
      esac
    fi
    wait "$pid" 2>/dev/null
    r=$((r + 1))
  done
  [ "$kind" != before ] && [ "$slowest" -gt 100 ] && over1s=$((over1s + 1))
  if [ "$kind" != before ] && [ "$slowest" -gt "$limit_cs" ]; then
    echo "  FAIL: a survivor took ${slowest}0 ms"
    failed=$((failed + 1))
  fi
  # A victim without the probe's START line died before it called init.
  if [ "$kind" = before ] && ! grep -q '^START' "$dir/out.$victim"; then
    kind=before-start
    beforeStart=$((beforeStart + 1))
  fi
  case $kind in init) during=$((during + 1)) ;; before*) before=$((before + 1)) ;; *) calls=$((calls + 1)) ;; esac
  case $kind in before*) ;; *) [ "$slowest" -gt "$worst" ] && worst=$slowest ;; esac
  echo "trial $t: killed rank $victim at $delay ms ($kind): slowest survivor ${slowest}0 ms"
  t=$((t + 1))
done
rm -rf "$dir"
echo "SUMMARY verbs: $during deaths during init, $calls during the first calls: slowest survivor ${worst}0 ms ($over1s over 1 s, limit ${limit_cs}0 ms); $before before the root ($beforeStart of them before calling init); $failed broken rule(s)"
[ "$failed" -eq 0 ]

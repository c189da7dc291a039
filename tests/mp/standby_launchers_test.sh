#!/bin/sh
# Standbys under launchers other than weft-run (core/launch_env.h): weft-pool
# serves the pool, every process gets WEFT_STANDBY_ADDR and WEFT_STANDBYS=1,
# so the launcher's last process is a standby (weftStandbyLaunched). One rank
# is killed with SIGKILL; the survivors ask the pool which rank died (each
# rank's lifeline told it, as no launcher did) and replace it with the
# standby; every rank must end bitwise equal to a run without the failure
# (mp_replica checks), and exactly one process must have died. In the
# srun-style run every rank first forks an idle child (as a data loader does),
# which must not keep the dead rank's lifeline or connections open.
#   slurm   5 processes with SLURM_PROCID/SLURM_NTASKS and WEFT_ROOT_ADDR, as srun starts them;
#   mpirun  Open MPI's mpirun --enable-recovery (which keeps the others running), where it exists.
#   standby_launchers_test.sh WEFT_POOL MP_REPLICA [MPIRUN]
set -u
if [ $# -lt 2 ]; then
  echo "usage: $0 WEFT_POOL MP_REPLICA [MPIRUN]" >&2
  exit 2
fi
pool_bin=$1
mp=$2
mpirun=${3:-}
dir=$(mktemp -d)
pool_pid=
cleanup() {
  [ -n "$pool_pid" ] && kill "$pool_pid" 2>/dev/null
  for c in $(cat "$dir"/out.* 2>/dev/null | sed -n 's/.*forked child \([0-9]*\)/\1/p'); do
    kill "$c" 2>/dev/null
  done
  rm -rf "$dir"
}
trap cleanup EXIT
fail=0
export WEFT_TIMEOUT=60 WEFT_STANDBYS=1
low=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
[ "$low" -gt 12000 ] 2>/dev/null || low=32768
port=$((10000 + ($$ % ((low - 10000) / 8 - 2)) * 8 + 3))

# A fresh pool per job: it holds the job's ranks and deaths.
start_pool() {
  [ -n "$pool_pid" ] && kill "$pool_pid" 2>/dev/null && wait "$pool_pid" 2>/dev/null
  rm -f "$dir/addr"
  "$pool_bin" --addr-file "$dir/addr" &
  pool_pid=$!
  for _ in $(seq 100); do
    [ -s "$dir/addr" ] && break
    sleep 0.1
  done
  WEFT_STANDBY_ADDR=$(cat "$dir/addr")
  export WEFT_STANDBY_ADDR
}

# check NAME: 4 ranks equal to the run without failure, one process killed.
check() {
  equal=$(cat "$dir"/out.* 2>/dev/null | grep -c "final state equal to a run without failure")
  echo "--- $1: $equal ranks ended equal to the run without failure; exits: $2"
  grep -h "weftCommReplace\|recovery_s\|resumed" "$dir"/out.* 2>/dev/null | head -6
  if [ "$equal" -ne 4 ] || [ "$3" -ne 1 ]; then
    cat "$dir"/out.*
    echo "FAIL: $1 ($equal of 4 ranks equal, $3 process(es) killed, expected 1)"
    fail=1
  fi
}

start_pool
port=$((port + 1))
rm -f "$dir"/out.*
pids=""
for r in 0 1 2 3 4; do
  # The dead rank's child closed its copies of the rank's connections when it
  # was forked, so the survivors see the death at once, not at WEFT_TIMEOUT
  # (60 s): rank 0's recovery_s must stay under half of it.
  env SLURM_PROCID=$r SLURM_NTASKS=5 WEFT_ROOT_ADDR=127.0.0.1:$port \
    "$mp" --kill 3 --ask --fork-child --bytes 1048576 --steps 6 --timing "$dir/killed_at" \
    >"$dir/out.$r" 2>&1 &
  pids="$pids $!"
done
exits=""
killed=0
for p in $pids; do
  wait "$p"
  rc=$?
  exits="$exits $rc"
  [ "$rc" -eq 137 ] && killed=$((killed + 1))
  [ "$rc" -ne 0 ] && [ "$rc" -ne 137 ] && killed=99
done
check "slurm-style launch (SLURM_PROCID/SLURM_NTASKS), forked children" "$exits" "$killed"
recovery=$(cat "$dir"/out.* | sed -n 's/^recovery_s \([0-9.]*\).*/\1/p' | head -1)
echo "--- recovery with the dead rank's forked child alive: ${recovery:-none} s (WEFT_TIMEOUT 60 s)"
if [ -z "$recovery" ] || ! awk -v s="$recovery" 'BEGIN { exit !(s < 30) }'; then
  echo "FAIL: the survivors did not see the death before half of WEFT_TIMEOUT"
  fail=1
fi
for c in $(cat "$dir"/out.* | sed -n 's/.*forked child \([0-9]*\)/\1/p'); do kill "$c" 2>/dev/null; done

if [ -n "$mpirun" ] && "$mpirun" --version 2>/dev/null | grep -Eq 'Open MPI|OpenRTE'; then
  start_pool
  port=$((port + 1))
  rm -f "$dir"/out.*
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_oob_tcp_if_include=lo \
    "$mpirun" -np 5 --oversubscribe --enable-recovery -x WEFT_ROOT_ADDR=127.0.0.1:$port \
    -x WEFT_TIMEOUT -x WEFT_STANDBYS -x WEFT_STANDBY_ADDR \
    "$mp" --kill 5 --ask --bytes 1048576 --steps 6 >"$dir/out.mpirun" 2>&1
  rc=$?
  # mpirun reports the killed process; the others must have finished.
  killed=$(grep -c "dying (SIGKILL)" "$dir/out.mpirun")
  check "mpirun --enable-recovery" "mpirun $rc" "$killed"
else
  echo "--- mpirun: SKIPPED: no Open MPI mpirun in this build"
fi
exit $fail

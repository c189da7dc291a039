#!/bin/sh
# weftCommInitFromEnv with WEFT_ROOT_ADDR and no WEFT_RANK/WEFT_WORLD_SIZE
# takes the rank and size a launcher set (core/launch_env.h), so a program
# without MPI runs under srun or mpirun:
#   slurm   2 processes with SLURM_PROCID/SLURM_NTASKS, as srun sets them;
#   hydra   the same with PMI_RANK/PMI_SIZE (MPICH's launcher);
#   mpirun  Open MPI's mpirun -np 2 (OMPI_COMM_WORLD_RANK/SIZE), where it exists;
#   none    WEFT_ROOT_ADDR alone: fails at once, saying what is missing.
#   launchers_test.sh MP_COLLECTIVES [MPIRUN]
set -u
if [ $# -lt 1 ]; then
  echo "usage: $0 MP_COLLECTIVES [MPIRUN]" >&2
  exit 2
fi
mp=$1
mpirun=${2:-}
small="--large-count 100003 --huge-mib 8"
out=$(mktemp)
trap 'rm -f "$out" "$out".*' EXIT
fail=0
export WEFT_TIMEOUT=30
# A port per case, from this shell's pid, below the kernel's ephemeral range
# (whose ports the other tests' connections take: a port at 34578 was once
# in use), and a retry on another port if one is taken all the same.
low=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
[ "$low" -gt 12000 ] 2>/dev/null || low=32768
port=$((10000 + ($$ % ((low - 10000) / 8 - 2)) * 8))

# pair NAME RANKVAR SIZEVAR: rank 0 and rank 1 started by hand, as a launcher would.
pair() {
  for attempt in 1 2 3; do
    port=$((port + 1))
    env WEFT_ROOT_ADDR=127.0.0.1:$port "$2=0" "$3=2" "$mp" $small >"$out.0" 2>&1 &
    env WEFT_ROOT_ADDR=127.0.0.1:$port "$2=1" "$3=2" "$mp" $small >"$out.1" 2>&1
    rc1=$?
    wait $!
    rc0=$?
    grep -q "Address already in use" "$out.0" || break
    echo "--- $1: port $port is taken (attempt $attempt), trying the next one"
  done
  echo "--- $1: rank 0 exit $rc0, rank 1 exit $rc1"
  grep -hE 'passed|cannot join' "$out.0" "$out.1" | cut -c1-200
  if [ "$rc0" -ne 0 ] || [ "$rc1" -ne 0 ]; then
    cat "$out.0" "$out.1"
    echo "FAIL: $1"
    fail=1
  fi
}

pair slurm SLURM_PROCID SLURM_NTASKS
pair hydra PMI_RANK PMI_SIZE
if [ -n "$mpirun" ] && "$mpirun" --version 2>/dev/null | grep -Eq 'Open MPI|OpenRTE'; then
  port=$((port + 1))
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_oob_tcp_if_include=lo \
    "$mpirun" -np 2 --oversubscribe -x WEFT_ROOT_ADDR=127.0.0.1:$port -x WEFT_TIMEOUT \
    "$mp" $small >"$out" 2>&1
  rc=$?
  echo "--- mpirun: exit $rc"
  grep -E 'passed|cannot join' "$out" | cut -c1-200
  if [ "$rc" -ne 0 ]; then
    cat "$out"
    echo "FAIL: mpirun"
    fail=1
  fi
else
  echo "--- mpirun: SKIPPED: no Open MPI mpirun in this build"
fi
port=$((port + 1))
WEFT_ROOT_ADDR=127.0.0.1:$port "$mp" $small >"$out" 2>&1
rc=$?
echo "--- none: exit $rc"
grep -E 'cannot join' "$out" | cut -c1-200
if [ "$rc" -eq 0 ] || ! grep -q 'no rank and size' "$out"; then
  echo "FAIL: none: WEFT_ROOT_ADDR alone must fail, saying that rank and size are missing"
  fail=1
fi
[ "$fail" -eq 0 ] && echo "PASS"
exit "$fail"

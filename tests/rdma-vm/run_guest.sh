#!/usr/bin/env bash
# Boots the Soft-RoCE guest once (QEMU in software emulation: q35, -cpu max,
# no KVM, no network card) and runs the given commands inside it; prints the
# guest's console, then one summary line. Exit 0 when every command passed,
# 1 when one failed or the guest did not reach its exit sentinel in time, 77
# with "SKIPPED: why" when the guest cannot be built here. WEFT_VM_MEM: the
# guest's memory in MiB (default 2048); WEFT_VM_TIMEOUT: seconds (default 900).
#   run_guest.sh WORK_DIR COMMANDS_FILE PROGRAM...
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
WORK=$1
command -v qemu-system-x86_64 >/dev/null || { echo "SKIPPED: qemu-system-x86_64 not installed"; exit 77; }
"$HERE/build_initramfs.sh" "$@"
rc=$?
[ "$rc" -eq 0 ] || exit "$rc"
LIMIT=${WEFT_VM_TIMEOUT:-900}
start=$(date +%s)
timeout "$LIMIT" qemu-system-x86_64 -machine q35 -cpu max -smp 2 -m "${WEFT_VM_MEM:-2048}" -nographic -no-reboot \
  -nic none -kernel "$WORK/vmlinuz" -initrd "$WORK/initrd.gz" \
  -append "console=ttyS0 panic=-1 quiet loglevel=3" </dev/null >"$WORK/console.log" 2>&1
qemu_rc=$?
took=$(( $(date +%s) - start ))
tr -d '\r' <"$WORK/console.log" | grep -v "^\s*$" | sed 's/^/guest| /'
sentinel=$(tr -d '\r' <"$WORK/console.log" | grep -a "WEFT_VM_EXIT" | tail -1)
if [ -z "$sentinel" ]; then
  echo "rdma-vm: no exit sentinel after ${took} s (qemu rc $qemu_rc; limit ${LIMIT} s)"
  exit 1
fi
echo "rdma-vm: guest ran in ${took} s: $sentinel"
[[ "$sentinel" == *"failed=0"* ]]

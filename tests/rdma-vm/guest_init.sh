#!/bin/busybox sh
# PID 1 of the Soft-RoCE guest: mounts the pseudo file systems, loads the RDMA
# modules in dependency order, makes rxe0 on a dummy netdev, runs every
# command of /tests/commands (one per line, from the kernel command line's
# weft.cmds= list otherwise), prints one result line per command and the exit
# sentinel, and powers off. Output goes to the serial console.
/bin/busybox --install -s /bin
export PATH=/bin:/sbin:/tests LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev  # also makes /dev/infiniband/uverbs0 and rdma_cm (rdma_ucm) for librdmacm
# No tmpfs over /tmp: the initramfs root is writable already, and host libraries may
# live under /tmp (a build tree there), copied into the initramfs at their own paths.
for m in $(cat /modules.order); do
  insmod "/lib/modules/$m" || echo "WEFT_VM insmod $m failed"
done
mount -t configfs none /sys/kernel/config 2>/dev/null
ip link set lo up
ip link add dummy0 type dummy 2>/dev/null  # the dummy module may have made it already
ip addr add 10.77.0.1/24 dev dummy0
ip link set dummy0 mtu 9000 up  # rxe then uses 4096-byte packets: fewer to emulate
rdma link add rxe0 type rxe netdev dummy0 || echo "WEFT_VM rdma link add failed"
ibv_devinfo -v 2>&1 | grep -E "hca_id|state|link_layer|active_mtu|GID\[" | head -8
failed=0
i=0
while IFS= read -r cmd; do
  [ -z "$cmd" ] && continue
  i=$((i + 1))
  echo "WEFT_VM run $i: $cmd"
  start=$(cut -d' ' -f1 /proc/uptime)
  sh -c "$cmd"
  rc=$?
  end=$(cut -d' ' -f1 /proc/uptime)
  echo "WEFT_VM result $i rc=$rc start=$start end=$end"
  [ "$rc" -ne 0 ] && failed=$((failed + 1))
done </tests/commands
echo "WEFT_VM_EXIT failed=$failed"
poweroff -f

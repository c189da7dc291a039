#!/usr/bin/env bash
# Builds the Soft-RoCE guest: Debian's own kernel (linux-image-amd64, resolved
# to its current package, never pinned) and an initramfs holding busybox, the
# RDMA modules (crc32_generic, ib_core, ib_uverbs, rdma_cm, rdma_ucm, rdma_rxe
# and their dependencies, in dependency order), a dummy netdev module,
# iproute2's ip and rdma, libibverbs with the rxe provider, and the host-built
# programs given as arguments with every library they load.
#
#   build_initramfs.sh OUT_DIR COMMANDS_FILE PROGRAM...  -> OUT_DIR/vmlinuz, OUT_DIR/initrd.gz
# COMMANDS_FILE: the shell commands the guest runs, one per line (programs are
# in /tests, on PATH).
# Exit 77 with "SKIPPED: why" when a package cannot be fetched.
set -euo pipefail
OUT=$(realpath -m "$1")
COMMANDS=$(realpath "$2")
shift 2
PROGRAMS=()
for prog in "$@"; do PROGRAMS+=("$(realpath "$prog")"); done
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT/pkg"
skip() { echo "SKIPPED: $*"; exit 77; }

cd "$OUT/pkg"
kpkg=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/{print $2; exit}')
[ -n "$kpkg" ] || skip "cannot resolve linux-image-amd64 to a kernel package (apt-cache)"
if ! ls "${kpkg}"_*.deb >/dev/null 2>&1; then
  apt-get download "$kpkg" >/dev/null 2>&1 || skip "apt-get download $kpkg failed"
fi
if ! ls busybox-static_*.deb >/dev/null 2>&1; then
  apt-get download busybox-static >/dev/null 2>&1 || skip "apt-get download busybox-static failed"
fi
kver=${kpkg#linux-image-}
if [ ! -d "kernel/lib/modules/$kver" ]; then
  rm -rf kernel && mkdir kernel && dpkg-deb -x "${kpkg}"_*.deb kernel
  depmod -b kernel "$kver"
fi
[ -d busybox ] || { mkdir busybox && dpkg-deb -x busybox-static_*.deb busybox; }

ROOT="$OUT/root"
rm -rf "$ROOT" && mkdir -p "$ROOT"/{bin,sbin,lib,lib64,etc,proc,sys,dev,tmp,run,tests,lib/modules}
cp busybox/bin/busybox "$ROOT/bin/busybox"
cp "kernel/boot/vmlinuz-$kver" "$OUT/vmlinuz"

# Modules in dependency order (depth first over modules.dep).
moddir="kernel/lib/modules/$kver"
declare -A seen=()
order=()
add_module() {  # $1: path relative to $moddir
  [ -n "${seen[$1]:-}" ] && return
  seen[$1]=1
  local deps
  deps=$(awk -v m="$1:" '$1 == m { $1 = ""; print }' "$moddir/modules.dep")
  for d in $deps; do add_module "$d"; done
  order+=("$1")
}
for m in crypto/crc32_generic.ko drivers/net/dummy.ko drivers/infiniband/core/ib_uverbs.ko \
         drivers/infiniband/core/rdma_ucm.ko drivers/infiniband/sw/rxe/rdma_rxe.ko; do
  [ -f "$moddir/kernel/$m" ] || skip "module $m missing from $kpkg"
  add_module "kernel/$m"
done
: >"$ROOT/modules.order"
for m in "${order[@]}"; do
  cp "$moddir/$m" "$ROOT/lib/modules/"
  basename "$m" >>"$ROOT/modules.order"
done

# Programs and every library they (and the rxe provider) load.
copy_with_libs() {
  local f=$1 dest=$2
  mkdir -p "$ROOT$dest"
  cp -L "$f" "$ROOT$dest/"
  { ldd "$f" 2>/dev/null || true; } | awk '/=> \//{print $3} /^\t\/lib/{print $1}' | while read -r lib; do
    [ -e "$ROOT$lib" ] && continue
    mkdir -p "$ROOT$(dirname "$lib")"
    cp -L "$lib" "$ROOT$lib"
  done
}
for tool in "$(command -v ip)" "$(command -v rdma)" "$(command -v ibv_devinfo)"; do
  [ -x "$tool" ] || skip "iproute2/ibverbs-utils tool missing on the host ($tool)"
  copy_with_libs "$tool" /sbin
done
provider=$(ls /usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav*.so 2>/dev/null | head -1)
[ -n "$provider" ] || skip "librxe provider missing (ibverbs-providers)"
copy_with_libs "$provider" /usr/lib/x86_64-linux-gnu/libibverbs
mkdir -p "$ROOT/etc/libibverbs.d" && cp /etc/libibverbs.d/rxe.driver "$ROOT/etc/libibverbs.d/"
for prog in "${PROGRAMS[@]}"; do
  copy_with_libs "$prog" /tests
done
cp "$COMMANDS" "$ROOT/tests/commands"
cp "$HERE/guest_init.sh" "$ROOT/init" && chmod +x "$ROOT/init"
(cd "$ROOT" && find . | cpio -o -H newc --quiet | gzip -1) >"$OUT/initrd.gz"
echo "guest: $kpkg, ${#order[@]} modules, $(du -h "$OUT/initrd.gz" | cut -f1) initramfs"

#!/usr/bin/env bash
# weft-topo end to end: the live machine prints and exits 0 (with or without
# GPUs and NICs), --file prints the matrix (PKG apart from SYS), the ring
# order's switch claim only where GPUs share a switch, --json the documented
# keys, and unusable files exit 1 with the reason on stderr and nothing on
# stdout.
# usage: weft_topo_cli_test.sh WEFT_TOPO_BINARY DATA_DIR
set -u
bin=$1
data=$2
unset WEFT_TOPO_FILE WEFT_IB_HCA WEFT_NET_GDR_LEVEL
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# Live: must work whatever the machine has.
"$bin" >"$tmp/out" 2>"$tmp/err" || fail "live run exited $? ($(cat "$tmp/err"))"
grep -q "Topology: this machine" "$tmp/out" || fail "live run did not name the machine"
"$bin" --json >"$tmp/out" 2>"$tmp/err" || fail "live --json exited $?"
grep -q '"gpus"' "$tmp/out" && grep -q '"nics"' "$tmp/out" || fail "live --json lacks gpus/nics"

# A file: human matrix and JSON.
f=$data/juwels-booster-4xa100-4xhdr200.hwloc.xml
"$bin" --file "$f" >"$tmp/out" 2>"$tmp/err" || fail "--file exited $?"
grep -q "^GPU0 .*PIX" "$tmp/out" || fail "matrix row GPU0 has no PIX"
grep -q "GPU0 0000:03:00.0 -> mlx5_0 (PIX), GDR on" "$tmp/out" || fail "GPU0 is not mapped to mlx5_0"
"$bin" --json --file "$f" >"$tmp/out" 2>"$tmp/err" || fail "--json --file exited $?"
grep -q '"busid": "0000:44:00.0".*' "$tmp/out" || fail "JSON lacks GPU 0000:44:00.0"
grep -q '"nic": "mlx5_1", "path": "PIX", "gdr": true' "$tmp/out" || fail "JSON lacks mlx5_1/PIX/gdr"
# No two GPUs share a switch there: the ring order makes no such claim.
"$bin" --file "$f" | grep -q "^Ring order (grouped by NUMA node; no two GPUs share a switch):" ||
  fail "JUWELS Booster ring order claims switch neighbours"
"$bin" --file "$data/llnl-pascal-2xp100-1xcx5.hwloc.xml" |
  grep -q "^Ring order (grouped by NUMA node, GPUs sharing a switch adjacent):" ||
  fail "Pascal ring order does not keep its switch neighbours"
# Same package, other NUMA node is PKG, not SYS like the other package.
"$bin" --file "$data/llnl-corona-4xvega20-1xcx6.hwloc.xml" >"$tmp/out" || fail "corona exited $?"
grep -q "GPU0 0000:13:00.0 -> mlx5_0 (PKG)" "$tmp/out" || fail "corona GPU0 is not PKG"
grep -q "GPU2 0000:53:00.0 -> mlx5_0 (SYS)" "$tmp/out" || fail "corona GPU2 is not SYS"
grep -q "^  PKG  = " "$tmp/out" || fail "the legend does not explain PKG"
WEFT_TOPO_FILE=$f "$bin" >"$tmp/out" 2>"$tmp/err" || fail "WEFT_TOPO_FILE run exited $?"
grep -q "mlx5_3" "$tmp/out" || fail "WEFT_TOPO_FILE was not read"
# No RDMA NIC: the GPUs say none, JSON nic is null.
"$bin" --json --file "$data/azure-ncv4-4xa100-pcie-1xeth.nccl.xml" >"$tmp/out" || fail "ncv4 exited $?"
grep -q '"nic": null, "path": null, "gdr": false' "$tmp/out" || fail "ncv4 GPUs should have no NIC"

# Unusable inputs: exit 1, reason on stderr, nothing on stdout.
printf '<system><cpu><pci busid="0000:01:00.0"' >"$tmp/truncated.xml"
: >"$tmp/empty.xml"
for bad in /nonexistent.xml "$tmp/empty.xml" "$tmp/truncated.xml"; do
  "$bin" --file "$bad" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  [ "$rc" -eq 1 ] || fail "$bad: exit $rc, expected 1"
  [ -s "$tmp/out" ] && fail "$bad: printed on stdout"
  grep -q "weft-topo: .*$(basename "$bad")" "$tmp/err" || fail "$bad: stderr does not name the file: $(cat "$tmp/err")"
done
"$bin" --bogus >/dev/null 2>&1
[ $? -eq 2 ] || fail "a bad option should exit 2"

if [ "$failures" -ne 0 ]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "weft-topo CLI: all checks passed"

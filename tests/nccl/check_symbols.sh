#!/bin/sh
# The drop-in exports every function nccl.h declares (nccl* and pnccl*), and
# no name that NVIDIA's libnccl.so.2 lacks.
# Usage: check_symbols.sh <nccl.h> <drop-in libnccl.so.2> <NVIDIA's libnccl.so.2 or "">
set -eu
header=$1 dropin=$2 real=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
grep -oE '^(ncclResult_t|const char\*|void)[[:space:]]+p?nccl[A-Za-z]+\(' "$header" |
  sed -E 's/.*[[:space:]](p?nccl[A-Za-z]+)\($/\1/' | sort -u > "$tmp/declared"
nm -D --defined-only "$dropin" | awk '{print $3}' | sort -u > "$tmp/ours"
missing=$(comm -23 "$tmp/declared" "$tmp/ours")
if [ -n "$missing" ]; then
  echo "FAIL: declared in nccl.h, not exported:"; echo "$missing"; exit 1
fi
echo "all $(wc -l < "$tmp/declared") functions of nccl.h are exported"
if [ -z "$real" ] || [ ! -f "$real" ]; then
  echo "SKIPPED: no NVIDIA libnccl.so.2 to compare names with"
  exit 0
fi
nm -D --defined-only "$real" | awk '{print $3}' | sort -u > "$tmp/real"
extra=$(comm -13 "$tmp/real" "$tmp/ours")
if [ -n "$extra" ]; then
  echo "FAIL: exported, but not by NVIDIA's libnccl.so.2:"; echo "$extra"; exit 1
fi
echo "every exported name is one of NVIDIA's libnccl.so.2 ($(wc -l < "$tmp/ours") of $(wc -l < "$tmp/real"))"

#!/usr/bin/env bash
# tools/check_sizes.py passes on the repository, and fails on a copy of it
# with one planted function of 81 lines, naming it.
set -euo pipefail
src=${1:?usage: check_sizes_test.sh SOURCE_DIR}
python3 "$src/tools/check_sizes.py" --root "$src"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/tools" "$tmp/src/base"
cp "$src/tools/check_sizes.py" "$tmp/tools/"
{
  echo "int plantedLongFunction(int x) {"
  for i in $(seq 1 79); do echo "  x += $i;"; done
  echo "}"
} >"$tmp/src/base/planted.cc"
if out=$(python3 "$tmp/tools/check_sizes.py" --root "$tmp"); then
  echo "FAIL: the planted function passed the check"; echo "$out"; exit 1
fi
echo "$out"
grep -q "^src/base/planted.cc:1: plantedLongFunction is 81 lines" <<<"$out" ||
  { echo "FAIL: the long function was not named"; exit 1; }
echo "PASS: the planted long function fails the check"

#!/usr/bin/env bash
# tools/check_layers.py passes on the repository, and fails on a copy of it
# with one planted include that goes up a layer (a transport including the
# communicator), naming that file and line.
set -euo pipefail
src=${1:?usage: check_layers_test.sh SOURCE_DIR}
python3 "$src/tools/check_layers.py" --root "$src"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/tools"
cp -r "$src/src" "$src/transports" "$src/collectives" "$src/include" "$tmp/"
cp "$src/tools/check_layers.py" "$tmp/tools/"
victim=transports/striped_channel.cc
sed -i '1a #include "core/comm.h"' "$tmp/$victim"
if out=$(python3 "$tmp/tools/check_layers.py" --root "$tmp"); then
  echo "FAIL: the planted include passed the check"; echo "$out"; exit 1
fi
echo "$out"
grep -q "^$victim:2: #include \"core/comm.h\": layer 'transports' may not include layer 'comm'" \
  <<<"$out" || { echo "FAIL: the violation was not named"; exit 1; }
echo "PASS: the planted violation fails the check"

#!/usr/bin/env bash
# Fails when a C/C++ source differs from what clang-format (.clang-format) makes of it.
set -euo pipefail
cd "$(dirname "$0")/.."
files=$(git ls-files '*.h' '*.hpp' '*.cc' '*.cpp' '*.c' '*.cu' '*.cuh' 2>/dev/null || true)
[ -n "$files" ] || exit 0
bad=0
for f in $files; do
  if ! clang-format --style=file "$f" | cmp -s - "$f"; then echo "format: $f needs clang-format"; bad=1; fi
done
if [ "$bad" -ne 0 ]; then echo "format: run clang-format -i on the files above"; exit 1; fi
echo "format: ok"

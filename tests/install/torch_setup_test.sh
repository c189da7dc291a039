#!/usr/bin/env bash
# The torch backend's second build path (docs/pytorch.md, "As a Python
# extension"): setup.py against an installed weft, found with pkg-config. The
# CMake build never runs setup.py, so its flags can drift unseen (it once built
# with torch's default -std=c++14 and failed on C++17 code). Installs the build
# into a fresh prefix, builds the extension from a copy of the sources there,
# and runs a 2-rank torch test on that extension alone.
#   torch_setup_test.sh BUILD_DIR SOURCE_DIR PYTHON3
set -euo pipefail
build=$1
src=$2
python=$3
work=$(mktemp -d /tmp/weft-torch-setup.XXXXXX)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >"$work/install.log"
cp -r "$src/integrations/pytorch" "$work/pytorch"
pcdir=$(dirname "$(find "$work/prefix" -name weft.pc | head -1)")
(cd "$work/pytorch" && PKG_CONFIG_PATH="$pcdir" MAX_JOBS=2 "$python" setup.py build_ext --inplace \
  >"$work/setup.log" 2>&1) || { tail -40 "$work/setup.log"; exit 1; }
ext=$(find "$work/pytorch/python/weft_torch" -name '_C*.so' | head -1)
[ -n "$ext" ] || { echo "setup.py built no extension"; exit 1; }
echo "torch_setup_test: built $(basename "$ext") with setup.py"
# Only the copy's package on the path, so this is the extension under test.
PYTHONPATH="$work/pytorch/python:$src/integrations/pytorch/tests" PYTHONWARNINGS=ignore \
  "$python" -c 'import sys, weft_torch; sys.exit(0 if weft_torch.__file__.startswith(sys.argv[1]) else 1)' \
  "$work/pytorch/python" || { echo "weft_torch was not imported from the setup.py build"; exit 1; }
PYTHONPATH="$work/pytorch/python:$src/integrations/pytorch/tests" PYTHONWARNINGS=ignore \
  WEFT_TIMEOUT=60 "$python" "$src/integrations/pytorch/tests/test_more_dtypes.py" 2

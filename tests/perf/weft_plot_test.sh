#!/usr/bin/env bash
# weft-plot on the perf tools' JSON: two runs (shm, and tcp) of all_reduce_perf
# -J make one SVG that parses as XML and has one line per run in each of its
# two panels; a file that is not perf JSON is refused with exit 2.
#   weft_plot_test.sh WEFT_RUN PERF_BIN_DIR WEFT_PLOT
set -euo pipefail
run=$1 bin=$2 plot=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$run" -n 2 "$bin/all_reduce_perf" -b 8 -e 1M -f 8 -w 1 -n 5 -J "$work/shm.json" >/dev/null
WEFT_SHM_DISABLE=1 "$run" -n 2 "$bin/all_reduce_perf" -b 8 -e 1M -f 8 -w 1 -n 5 \
  -J "$work/tcp.json" >/dev/null
python3 "$plot" "$work/shm.json" "$work/tcp.json" -o "$work/chart.svg" --title "test"
lines=$(python3 -c "import sys, xml.etree.ElementTree as E
print(len(E.parse(sys.argv[1]).findall('.//{http://www.w3.org/2000/svg}polyline')))" "$work/chart.svg")
if [ "$lines" -ne 4 ]; then
  echo "FAIL: $lines lines in the chart, expected 4 (2 runs x 2 panels)"
  exit 1
fi
grep -q ">shm<" "$work/chart.svg" && grep -q ">tcp<" "$work/chart.svg" ||
  { echo "FAIL: the legend does not name both runs"; exit 1; }
echo "not json" >"$work/bad.json"
set +e
python3 "$plot" "$work/bad.json" -o "$work/bad.svg" 2>"$work/err"
rc=$?
set -e
if [ "$rc" -ne 2 ] || ! grep -q "cannot read" "$work/err"; then
  echo "FAIL: a file that is not perf JSON gave exit $rc: $(cat "$work/err")"
  exit 1
fi
echo "PASS: 2 runs, 4 lines, and bad input refused"

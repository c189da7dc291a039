#!/bin/sh
# Every NCCL_* variable the drop-in translates has its row in docs/nccl.md,
# and the table names no variable that it does not translate.
# Usage: check_env_table.sh <integrations/nccl/shim_env.cc> <docs/nccl.md>
set -eu
code=$(grep -oE '\{"NCCL_[A-Z_]+", "WEFT_[A-Z_]+"' "$1" | tr -d '{" ' | sort)
docs=$(grep -oE '^\| `NCCL_[A-Z_]+` \| `WEFT_[A-Z_]+`' "$2" | tr -d '|` ' | sed 's/WEFT/,WEFT/' | sort)
if [ "$code" != "$docs" ]; then
  echo "FAIL: shim_env.cc and the table of docs/nccl.md differ:"
  printf '%s\n' "$code" > /tmp/nccl_env_code.$$
  printf '%s\n' "$docs" | diff /tmp/nccl_env_code.$$ - || true
  rm -f /tmp/nccl_env_code.$$
  exit 1
fi
echo "docs/nccl.md lists the $(printf '%s\n' "$code" | wc -l) NCCL_* variables the drop-in translates"

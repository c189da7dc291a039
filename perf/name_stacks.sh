#!/usr/bin/env bash
# Names the frames of the thread stacks that tests/gpu/thread_stacks.h wrote
# into a log (perf/gpu_check.sh sends SIGUSR1 when a step reaches its time
# cap): the last dump, and for each thread its frames in weft's own binaries as function names
# (addr2line, from the -g build gpu_check.sh makes) and, before them, the
# innermost frame of a system library, which is the call the thread waits in.
#   perf/name_stacks.sh LOG
set -uo pipefail
log=$1
grep -q "^== stack of thread" "$log" || exit 0
command -v addr2line >/dev/null || { echo "   (no addr2line here: raw stacks in $log)"; exit 0; }
echo "-- thread stacks at the stop, innermost first (raw in $log):"
# A log may hold several runs (gpu_check.sh appends some): the last dump is
# this stop's.
first=$(grep -n "^== SIGUSR1" "$log" | tail -1 | cut -d: -f1)
shown_lib=0
frame=0
while IFS= read -r line; do
  case "$line" in
    "== stack of thread"*)
      echo "   ${line#== }"
      shown_lib=0
      frame=0
      continue
      ;;
    "== end of stacks"*) break ;; # timeout(1) may signal twice: the first dump is enough
    "== "*) continue ;;
  esac
  bin=${line%%(*}
  inner=${line#*(}
  inner=${inner%%)*}
  [ "$bin" = "$line" ] && continue # not a frame line
  frame=$((frame + 1))
  [ "$frame" -le 2 ] && continue # the dumper's handler and the signal trampoline
  case "$bin" in
    /lib/* | /usr/lib/* | *.so.[0-9]*)
      # The innermost library frames say what the thread waits in (futex,
      # ioctl into the driver): keep the first two of each run.
      if [ "$shown_lib" -lt 2 ]; then
        echo "      ${bin##*/}(${inner})"
        shown_lib=$((shown_lib + 1))
      fi
      continue
      ;;
  esac
  shown_lib=0
  if [[ $inner == +0x* ]]; then
    # A return address: the call is the byte before it.
    name=$(addr2line -C -f -e "$bin" "$(printf '0x%x' $((${inner#+} - 1)))" 2>/dev/null | head -1)
  else
    name=$(c++filt "${inner%%+*}" 2>/dev/null || echo "${inner%%+*}")
  fi
  [ "$name" = "??" ] && name="${bin##*/}($inner)"
  echo "      ${name:0:160}"
done < <(tail -n +"${first:-1}" "$log")

#!/bin/sh
# Runs a weft job inside the guest and fails unless it passed *and* every rank
# really used verbs (an INFO line "verbs on rxe0" per rank), so a silent
# fallback to TCP can never pass the tier. EXPECT_LOG='extended regex' also
# requires that many INFO lines to match it (say, proof that zero-copy ran);
# WEFT_DEBUG_SUBSYS (default NET) adds the subsystems that log such lines.
#   [EXPECT_LOG=RE] expect_verbs.sh NRANKS COMMAND...
n=$1
shift
log=/tmp/expect_verbs.$$
WEFT_DEBUG=INFO WEFT_DEBUG_SUBSYS=${WEFT_DEBUG_SUBSYS:-NET} "$@" >"$log" 2>&1
rc=$?
grep -v "WEFT INFO" "$log"
used=$(grep -c "verbs on rxe0" "$log")
echo "expect_verbs: exit $rc, $used communicator ranks on verbs (at least $n expected)"
matched=$n
if [ -n "${EXPECT_LOG:-}" ]; then
  grep "WEFT INFO" "$log" | grep -E "$EXPECT_LOG" | head -4
  matched=$(grep "WEFT INFO" "$log" | grep -cE "$EXPECT_LOG")
  echo "expect_verbs: $matched log lines match '$EXPECT_LOG' (at least $n expected)"
fi
rm -f "$log"
[ "$rc" -eq 0 ] && [ "$used" -ge "$n" ] && [ "$matched" -ge "$n" ]  # split communicators add lines of their own

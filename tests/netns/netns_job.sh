#!/usr/bin/env bash
# Runs one multi-rank weft job across K emulated nodes: K network namespaces,
# each its own node (weft's node identity includes the netns) with its own
# address in 10.213.0.0/24, joined either by
#   --link tun   weft-tun-relay: one TUN device per namespace and a userspace
#                relay that adds --delay-us one way and limits each node's
#                link to --rate-mbit (the only way to get delay: no sch_netem);
#   --link veth  veth pairs into a bridge in a private hub namespace, each
#                direction shaped with tc tbf to --rate-mbit (no delay).
# With --link veth, --leaves L (2 or more) makes a two-level fabric: node i
# hangs from leaf bridge i % L (--leaf-placement cyclic, as a scheduler may
# hand out nodes) or i / ceil(K/L) (block), and the leaves meet in a spine
# bridge through links shaped to --spine-mbit each way (the uplinks: 4 nodes
# of 1000 Mbit/s under a 1000 Mbit/s uplink are 4:1 oversubscribed).
# --fabric-out FILE writes the WEFT_FABRIC description of that fabric (nodes
# named by address); the job uses it only where WEFT_FABRIC is set to FILE.
# Ranks are placed --placement block (node = rank / ppn) or cyclic (rank % K)
# and find the root through WEFT_ROOT_ADDR on node 0. Everything the script
# creates (namespaces, relay, ranks, temp files) is removed on every exit path.
# Exit status: the job's (0 when every rank exited 0), 77 with "SKIPPED: why"
# when this machine cannot make namespaces, 2 on bad usage.
#
#   netns_job.sh [--nodes K] [--ppn P] [--link tun|veth] [--delay-us D]
#                [--rate-mbit R] [--queue-ms Q] [--placement block|cyclic] [--timeout S]
#                [--relay PATH] [--relay-rt] [--all-logs] [--cut NODE] [--mpirun]
#                [--leaves L --spine-mbit S [--leaf-placement cyclic|block]
#                 [--fabric-out FILE]]
#                -- PROGRAM ARGS...
# --queue-ms Q (veth) sizes each shaped link's queue to Q ms at its rate
# (default 20; a tail drop past it): a deep queue drops nothing, as a
# lossless (InfiniBand, RoCE with PFC) fabric would not.
# --relay-rt runs the relay at real-time priority (chrt -f 1): the emulated
# network then does not wait for a core behind the ranks, as a real one would not.
# --cut NODE (veth only) is the link-cut fault: once the job creates the file
# $WEFT_TEST_CUT_READY, the script writes the time (ns since the epoch) to
# $WEFT_TEST_CUT_AT and sets NODE's port on the bridge down (ip link set down).
# --mpirun starts the ranks with Open MPI's mpirun instead (run in node 0's
# namespace; hosts are the nodes' addresses, PPN slots each): its remote-shell
# agent is a script here that enters the host's namespace, so every node gets
# an orted of its own, its ranks see that node's loopback (PMIx) and shared
# memory, and each namespace also gets its own hostname (a UTS namespace), as
# separate hosts would. PROGRAM is then any MPI program (or a weft program,
# which reads its rank from mpirun; WEFT_* variables reach every rank); MPI
# options go in OMPI_MCA_* variables.
set -uo pipefail

NODES=4 PPN=2 LINK=tun DELAY_US=0 RATE_MBIT=0 PLACEMENT=block TIMEOUT=120 ALL_LOGS=0 RELAY_RT=()
CUT="" MPIRUN=0 LEAVES=1 SPINE_MBIT=0 LEAF_PLACEMENT=cyclic FABRIC_OUT="" QUEUE_MS=20
RELAY=${WEFT_TUN_RELAY:-$(dirname "$0")/weft-tun-relay}
while [ $# -gt 0 ]; do
  case "$1" in
    --nodes) NODES=$2; shift 2 ;;
    --ppn) PPN=$2; shift 2 ;;
    --link) LINK=$2; shift 2 ;;
    --delay-us) DELAY_US=$2; shift 2 ;;
    --rate-mbit) RATE_MBIT=$2; shift 2 ;;
    --queue-ms) QUEUE_MS=$2; shift 2 ;;
    --placement) PLACEMENT=$2; shift 2 ;;
    --timeout) TIMEOUT=$2; shift 2 ;;
    --relay) RELAY=$2; shift 2 ;;
    --relay-rt) RELAY_RT=(chrt -f 1); shift ;;
    --all-logs) ALL_LOGS=1; shift ;;
    --cut) CUT=$2; shift 2 ;;
    --mpirun) MPIRUN=1; shift ;;
    --leaves) LEAVES=$2; shift 2 ;;
    --spine-mbit) SPINE_MBIT=$2; shift 2 ;;
    --leaf-placement) LEAF_PLACEMENT=$2; shift 2 ;;
    --fabric-out) FABRIC_OUT=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "netns_job.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
[ $# -gt 0 ] || { echo "netns_job.sh: no program given (after --)" >&2; exit 2; }

skip() { echo "SKIPPED: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "network namespaces need root (running as uid $(id -u))"
command -v ip >/dev/null || skip "no 'ip' command (iproute2)"
if [ "$LINK" = tun ]; then
  [ -c /dev/net/tun ] || skip "no /dev/net/tun"
  [ -x "$RELAY" ] || { echo "netns_job.sh: relay $RELAY is not built" >&2; exit 2; }
elif [ "$LINK" = veth ]; then
  [ "$DELAY_US" = 0 ] || { echo "netns_job.sh: --delay-us needs --link tun" >&2; exit 2; }
else
  echo "netns_job.sh: --link must be tun or veth" >&2; exit 2
fi
if [ $MPIRUN = 1 ]; then
  command -v mpirun >/dev/null || skip "no mpirun (Open MPI is not installed)"
  command -v unshare >/dev/null || skip "no unshare (util-linux)"
  [ -z "$CUT" ] || { echo "netns_job.sh: --cut and --mpirun do not combine" >&2; exit 2; }
fi
if [ "$LEAVES" -gt 1 ] && { [ "$LINK" != veth ] || [ "$RATE_MBIT" = 0 ] || [ "$SPINE_MBIT" = 0 ]; }; then
  echo "netns_job.sh: --leaves needs --link veth, --rate-mbit and --spine-mbit" >&2; exit 2
fi
if [ -n "$FABRIC_OUT" ] && [ "$RATE_MBIT" = 0 ]; then
  echo "netns_job.sh: --fabric-out needs --rate-mbit (the nodes' link rate)" >&2; exit 2
fi
if [ -n "$CUT" ] && { [ "$LINK" != veth ] || [ "$CUT" -ge "$NODES" ]; }; then
  echo "netns_job.sh: --cut NODE needs --link veth and NODE < --nodes" >&2; exit 2
fi

TAG="wnj$$"
TMP=$(mktemp -d "/tmp/${TAG}.XXXX")
NS=()
HUB=""
RELAY_PID=""
CUT_PID=""
RANK_PIDS=()

cleanup() {
  local p
  for p in "${RANK_PIDS[@]}" $CUT_PID; do kill -KILL "$p" 2>/dev/null; done
  if [ -n "$RELAY_PID" ]; then
    kill -TERM "$RELAY_PID" 2>/dev/null
    wait "$RELAY_PID" 2>/dev/null
  fi
  for p in "${NS[@]}" $HUB; do ip netns del "$p" 2>/dev/null; done
  rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

# Namespaces: loopback up, no IPv6 chatter on the emulated links.
for ((i = 0; i < NODES; i++)); do
  ns="${TAG}n$i"
  ip netns add "$ns" 2>"$TMP/err" || skip "cannot create a network namespace: $(cat "$TMP/err")"
  NS+=("$ns")
  ip -n "$ns" link set lo up
  ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
    net.ipv6.conf.default.disable_ipv6=1 2>/dev/null
done

addr() { echo "10.213.0.$(($1 + 1))"; }

if [ "$LINK" = tun ]; then
  IFNAME=wt0
  args=()
  for ((i = 0; i < NODES; i++)); do args+=("${NS[i]}:$IFNAME:$(addr "$i")"); done
  "${RELAY_RT[@]}" "$RELAY" --delay-us "$DELAY_US" --rate-mbit "$RATE_MBIT" --ready "$TMP/ready" "${args[@]}" \
    2>"$TMP/relay.log" &
  RELAY_PID=$!
  for ((t = 0; t < 100; t++)); do
    [ -e "$TMP/ready" ] && break
    kill -0 "$RELAY_PID" 2>/dev/null || { cat "$TMP/relay.log" >&2; exit 1; }
    sleep 0.05
  done
  [ -e "$TMP/ready" ] || { echo "netns_job.sh: relay did not start" >&2; exit 1; }
  for ((i = 0; i < NODES; i++)); do
    ip -n "${NS[i]}" addr add "$(addr "$i")/24" dev $IFNAME
    ip -n "${NS[i]}" link set $IFNAME mtu 65000 up
  done
else
  IFNAME=wv0
  HUB="${TAG}hub"
  ip netns add "$HUB"
  for ((l = 0; l < LEAVES; l++)); do
    ip -n "$HUB" link add "br$l" type bridge
    ip -n "$HUB" link set "br$l" up
  done
  if [ "$LEAVES" -gt 1 ]; then
    # The spine: each leaf's uplink, shaped both ways (u: leaf to spine, d: back).
    ip -n "$HUB" link add brs type bridge
    ip -n "$HUB" link set brs up
    for ((l = 0; l < LEAVES; l++)); do
      ip -n "$HUB" link add "u$l" type veth peer name "d$l"
      ip -n "$HUB" link set "u$l" master "br$l" up
      ip -n "$HUB" link set "d$l" master brs up
      for dev in "u$l" "d$l"; do
        ip netns exec "$HUB" tc qdisc add dev "$dev" root tbf rate "${SPINE_MBIT}mbit" \
          burst 256kb latency ${QUEUE_MS}ms
      done
    done
  fi
  leafof() {
    if [ "$LEAF_PLACEMENT" = block ]; then echo $(($1 / ((NODES + LEAVES - 1) / LEAVES)));
    else echo $(($1 % LEAVES)); fi
  }
  for ((i = 0; i < NODES; i++)); do
    ip -n "$HUB" link add "p$i" type veth peer name $IFNAME netns "${NS[i]}"
    ip -n "$HUB" link set "p$i" master "br$(leafof "$i")" up
    ip -n "${NS[i]}" addr add "$(addr "$i")/24" dev $IFNAME
    ip -n "${NS[i]}" link set $IFNAME up
    if [ "$RATE_MBIT" != 0 ]; then
      # Both directions of the node's link: its egress, and the bridge port towards it.
      ip netns exec "${NS[i]}" tc qdisc add dev $IFNAME root tbf rate "${RATE_MBIT}mbit" \
        burst 256kb latency ${QUEUE_MS}ms
      ip netns exec "$HUB" tc qdisc add dev "p$i" root tbf rate "${RATE_MBIT}mbit" \
        burst 256kb latency ${QUEUE_MS}ms
    fi
  done
fi

if [ -n "$FABRIC_OUT" ]; then
  # The fabric's description for WEFT_FABRIC (docs/scale.md): one leaf
  # unless --leaves made more.
  {
    echo "{\"node_gbit\": $(awk "BEGIN{print ${RATE_MBIT:-0} / 1000}"),"
    echo " \"leaves\": ["
    for ((l = 0; l < LEAVES; l++)); do
      nodes=""
      for ((i = 0; i < NODES; i++)); do
        if [ "$LEAVES" = 1 ] || [ "$(leafof "$i")" = "$l" ]; then nodes+="${nodes:+, }\"$(addr "$i")\""; fi
      done
      up=""
      [ "$LEAVES" -gt 1 ] && up="\"uplink_gbit\": $(awk "BEGIN{print $SPINE_MBIT / 1000}"), "
      echo "  {\"name\": \"leaf$l\", ${up}\"nodes\": [$nodes]}$([ $l -lt $((LEAVES - 1)) ] && echo ,)"
    done
    echo "]}"
  } >"$FABRIC_OUT"
fi

N=$((NODES * PPN))
ROOT="$(addr 0):29500"
# A network rendezvous needs a secret of its own (docs/launching.md, Security).
SECRET=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
if [ $MPIRUN = 1 ]; then
  # The remote-shell agent: mpirun calls it as `agent HOST COMMAND...`, as it
  # would call ssh; HOST is a node's address, looked up in $TMP/hosts.
  hosts=""
  for ((i = 0; i < NODES; i++)); do
    echo "$(addr "$i") ${NS[i]} node$i" >>"$TMP/hosts"
    hosts+="${hosts:+,}$(addr "$i"):$PPN"
  done
  cat >"$TMP/agent.sh" <<AGENT
#!/bin/sh
set -- \$(grep "^\$1 " "$TMP/hosts") "\$@"
[ \$# -ge 5 ] || { echo "netns_job.sh agent: unknown host \$1" >&2; exit 1; }
ns=\$2 name=\$3
shift 4
exec ip netns exec "\$ns" unshare --uts sh -c "hostname \$name && \$*"
AGENT
  chmod +x "$TMP/agent.sh"
  if [ "$PLACEMENT" = cyclic ]; then MAP=node; else MAP=slot; fi
  # mpirun forwards to other hosts' ranks only what -x names: every WEFT_*
  # variable here, as the ranks this script starts itself inherit them.
  export WEFT_SOCKET_IFNAME="=$IFNAME"
  FORWARD=()
  for v in $(compgen -e | grep '^WEFT_'); do FORWARD+=(-x "$v"); done
  timeout -k 5 "$TIMEOUT" ip netns exec "${NS[0]}" unshare --uts \
    sh -c 'hostname node0 && exec "$@"' sh \
    mpirun --allow-run-as-root --host "$hosts" -np "$N" --map-by "$MAP" \
    --mca plm_rsh_agent "$TMP/agent.sh" --mca oob_tcp_if_include "$IFNAME" \
    --mca btl_tcp_if_include "$IFNAME" "${FORWARD[@]}" "$@" 2>&1
  status=$?
  [ $status = 124 ] && echo "netns_job.sh: mpirun killed after ${TIMEOUT}s"
  [ $status = 0 ] || echo "netns_job.sh: mpirun exited $status"
  exit $status
fi
for ((r = 0; r < N; r++)); do
  if [ "$PLACEMENT" = cyclic ]; then node=$((r % NODES)); else node=$((r / PPN)); fi
  [ "$r" = 0 ] && [ "$node" != 0 ] && { echo "rank 0 must be on node 0" >&2; exit 2; }
  timeout -k 5 "$TIMEOUT" ip netns exec "${NS[node]}" env WEFT_ROOT_ADDR="$ROOT" WEFT_SECRET="$SECRET" \
    WEFT_RANK="$r" WEFT_WORLD_SIZE="$N" WEFT_SOCKET_IFNAME="=$IFNAME" \
    WEFT_TEST_CUT_READY="$TMP/cut_ready" WEFT_TEST_CUT_AT="$TMP/cut_at" "$@" \
    >"$TMP/rank$r.log" 2>&1 &
  RANK_PIDS+=($!)
done

if [ -n "$CUT" ]; then
  # The cutter: waits for the job's signal, stamps the time, takes the link down.
  (
    for ((t = 0; t < TIMEOUT * 20; t++)); do
      [ -e "$TMP/cut_ready" ] && break
      sleep 0.05
    done
    [ -e "$TMP/cut_ready" ] || exit 0
    sleep 0.1
    date +%s%N >"$TMP/cut_at.tmp" && mv "$TMP/cut_at.tmp" "$TMP/cut_at"
    ip -n "$HUB" link set "p$CUT" down
    echo "netns_job.sh: node $CUT's link set down at $(cat "$TMP/cut_at") ns"
  ) &
  CUT_PID=$!
fi

status=0
for ((r = 0; r < N; r++)); do
  wait "${RANK_PIDS[r]}"
  rc=$?
  if [ $rc != 0 ]; then
    [ $rc = 124 ] && echo "netns_job.sh: rank $r killed after ${TIMEOUT}s"
    echo "netns_job.sh: rank $r exited $rc"
    status=1
  fi
done
RANK_PIDS=()
if [ -n "$CUT_PID" ]; then
  kill -KILL "$CUT_PID" 2>/dev/null
  wait "$CUT_PID" 2>/dev/null
  CUT_PID=""
fi
for ((r = 0; r < N; r++)); do
  if [ "$r" = 0 ] || [ $status != 0 ] || [ $ALL_LOGS = 1 ]; then
    [ "$r" = 0 ] || echo "---- rank $r"
    cat "$TMP/rank$r.log"
  fi
done
if [ -n "$RELAY_PID" ]; then
  kill -TERM "$RELAY_PID" 2>/dev/null
  wait "$RELAY_PID" 2>/dev/null
  RELAY_PID=""
  [ $ALL_LOGS = 1 ] || [ $status != 0 ] && cat "$TMP/relay.log"
fi
exit $status

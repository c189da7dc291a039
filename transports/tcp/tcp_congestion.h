// Congestion control of weft's TCP data connections (WEFT_SOCKET_CONGESTION).
//
// Why weft sets it at all: a connection whose two ends are one host (ranks of
// a node over loopback, as with WEFT_SHM_DISABLE=1 or where shared memory is
// unusable) crosses no network, so there is nothing to control, yet the
// kernel's default algorithm still runs. BBR, a common default, then paces
// every send with a timer (internal pacing, used whenever the qdisc is not
// fq) at its estimate of a bottleneck that does not exist; CUBIC's slow-start
// exit reads the receiver's scheduling delay as queueing. Reno does neither:
// with no losses its window just grows, so only the receive window limits the
// sender. With BBR as the system default, large loopback allreduces run
// faster on Reno and nothing slower (docs/tuning.md, "TCP congestion control").
// Connections between hosts keep the system's algorithm (there the network
// may well need one), except BBR (version 1, the kernel's "bbr"): its probing
// overfills shallow switch queues when flows start together, as a
// collective's do each step. On emulated hosts with 20 ms tail-drop queues a
// halving-doubling allreduce ran 1.5x slower on BBR than on CUBIC or Reno,
// with some 3,000 retransmitted segments per rank and job against at most 113
// (docs/tuning.md, "TCP congestion control").
//
// "reno" may be set by any process (the kernel always allows it); other names
// must be in net.ipv4.tcp_allowed_congestion_control unless the process has
// CAP_NET_ADMIN. Each end sets its own sending side, so ranks need not agree.
#pragma once

#include <sys/socket.h>

#include <string>
#include <vector>

#include "weft/weft.h"

namespace weft {

// True when a connection from `local` to `peer` stays inside one host: the
// peer's address is this end's own, or a loopback address (127.0.0.0/8, ::1,
// or either written as an IPv4-mapped IPv6 address).
bool sameHostAddresses(const sockaddr_storage& local, const sockaddr_storage& peer);

// Checks WEFT_SOCKET_CONGESTION's value `setting` before any connection is
// made: "auto" and "system" always pass; an algorithm name must be one this
// process may set (tried on a throwaway socket), else weftInvalidArgument
// with a sentence naming the variable and what the kernel offers.
weftResult_t checkCongestionSetting(const std::string& setting);

// What applyCongestion found and left, for the log.
struct CongestionOutcome {
  bool sameHost = false;  // the connection stays inside this host
  std::string running;    // the algorithm the socket runs now ("" if the kernel won't say)
};

// What "auto" sets on a connection now running `running`, in order of
// preference (the first the kernel accepts); empty: leave it.
std::vector<const char*> autoCongestion(bool sameHost, const std::string& running);

// Applies `setting` to the connected TCP socket `fd`: "auto" sets Reno when
// the connection stays inside the host (sameHostAddresses), replaces BBR
// between hosts (autoCongestion) and leaves the rest, "system" always leaves it, and a name sets
// that algorithm.
weftResult_t applyCongestion(int fd, const std::string& setting, CongestionOutcome* out);

}  // namespace weft

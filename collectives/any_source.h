// A receive from any source (weftRecvAny): finding the peer whose next
// message to this rank is a send. Every send starts with its size header
// (p2p_header.h), so a look at the first bytes waiting on each peer's channel
// tells a send from a collective's call header, or from nothing yet, without
// taking anything off the stream; the receive then runs as one from that
// peer. Needs the size headers (WEFT_CHECK_CALLS=1, the default).
#pragma once

#include "collectives/coll_context.h"

namespace weft {

// Waits, bounded by WEFT_TIMEOUT and the abort flag, until some peer's next
// bytes to this rank are a send's header, and names that peer. Peers are
// looked at in turn from `after` + 1, so that a busy sender cannot starve
// the others. A peer's failure fails the wait (its sends would never come)
// where this rank has a connection to it; a look opens none (a TCP peer not
// met yet is connected by its own first send: tcp/lazy_connection.h).
weftResult_t waitForAnySender(CollContext& ctx, int after, int* source);

}  // namespace weft

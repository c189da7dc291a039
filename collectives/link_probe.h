// Measures one link at init for the tuner: a ping-pong of small messages
// gives the one-way latency (software included), a large message answered
// by a small one gives the bandwidth. Both ranks of the pair call it.
#pragma once

#include "collectives/coll_context.h"
#include "collectives/tuner.h"

namespace weft {

// `peer` is a ctx rank; the initiator's *out gets the figures (the peer's is
// left alone). Uses ctx.staging as its buffers.
weftResult_t probeLink(CollContext& ctx, int peer, bool initiator, LinkModel* out);

}  // namespace weft

// The transport contract: what the communicator and the collectives ask of
// every transport once it is set up (each is set up from the bootstrap at
// communicator init, src/core/api_init.cc).
//
//  - reaches(peer): whether it carries our traffic to that peer. Decided at
//    setup, the same on both ends of a pair; the channel table takes, per
//    peer, the first transport of the preference order that reaches it.
//  - channels: for a peer it reaches, one ordered byte stream per (stream,
//    direction) (channel.h). headerSendChannel/headerRecvChannel are where
//    call headers go; they default to the data channels.
//  - per-call hooks: beginCall before each collective (with its bytes per
//    rank, equal on every rank: the call header checks it), endCall after it,
//    endCalls once the API call or group returns (user buffers may be freed
//    from then on).
//  - liveness: a channel to a dead or closed peer fails with weftRemoteError
//    naming it (channel.h), or checkPeer() says so; waiting is the flow
//    engine's, as each channel's wake() says.
#pragma once

#include <cstddef>

#include "transports/channel.h"

namespace weft {

class Transport {
 public:
  virtual ~Transport() = default;
  virtual const char* name() const = 0;  // "shm", "verbs", "tcp"
  virtual bool reaches(int peer) const = 0;
  virtual Channel* sendChannel(int peer, int stream) = 0;
  virtual Channel* recvChannel(int peer, int stream) = 0;
  virtual Channel* headerSendChannel(int peer, int stream) { return sendChannel(peer, stream); }
  virtual Channel* headerRecvChannel(int peer, int stream) { return recvChannel(peer, stream); }
  virtual void beginCall(size_t bytesPerRank) { (void)bytesPerRank; }
  // ChannelTable::setWide, for the channels this transport hands out.
  virtual void setWide(bool wide) { (void)wide; }
  virtual void endCall() {}
  virtual void endCalls() {}
};

}  // namespace weft

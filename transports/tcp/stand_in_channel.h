// A channel that stands in for one whose connection is not open yet (TCP's
// lanes, tcp_transport.h; connection A made on first use, lazy_connection.h):
// each move first asks for the real channel, which may advance its opening,
// and moves nothing until there is one (the engine retries, sleeping on
// waitWake meanwhile). Once there is one, everything goes to it.
#pragma once

#include "transports/channel.h"

namespace weft {

class StandInChannel : public Channel {
 public:
  weftResult_t prepare() override;
  weftResult_t trySend(const void* d, size_t n, size_t* moved) override;
  weftResult_t trySendStable(const void* d, size_t n, size_t* moved) override;
  weftResult_t tryRecv(void* d, size_t n, size_t* moved) override;
  weftResult_t tryPeek(void* d, size_t n, size_t* got) override;
  ChannelWake wake() const override;
  weftResult_t checkPeer() const override;

 protected:
  // The real channel, or nullptr while it is not open. `open`: this use may
  // open it (a look from any source, tryPeek, may not: see lazy_connection.h).
  virtual weftResult_t target(bool open, Channel** out) = 0;
  // The real channel if it is open already, without advancing anything.
  virtual Channel* opened() const = 0;
  // What to sleep on while it is not.
  virtual ChannelWake waitWake() const = 0;
  // Whether a look (tryPeek) may open it.
  virtual bool lookOpens() const { return true; }
};

}  // namespace weft

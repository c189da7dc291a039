// The verbs transport when weft is built with rdma-core, else an empty
// stand-in that reaches no peer, so the rest of weft needs no #ifdefs.
#pragma once

#ifdef WEFT_HAVE_VERBS
#include "transports/ib/ib_transport.h"
#else
#include "transports/channel.h"
#include "transports/rdma_memory.h"

namespace weft {
class IbTransport {
 public:
  RdmaMemory* rdma() { return nullptr; }
  bool reaches(int) const { return false; }
  Channel* sendChannel(int, int) { return nullptr; }
  Channel* recvChannel(int, int) { return nullptr; }
  void endCalls() {}
};
}  // namespace weft
#endif

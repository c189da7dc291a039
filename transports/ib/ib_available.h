// The verbs transport when weft is built with rdma-core, else an empty
// stand-in that reaches no peer, so the rest of weft needs no #ifdefs.
#pragma once

#ifdef WEFT_HAVE_VERBS
#include "transports/ib/ib_transport.h"
#else
#include "transports/channel.h"
#include "transports/rdma_memory.h"
#include "transports/transport.h"

namespace weft {
class IbTransport : public Transport {
 public:
  const char* name() const override { return "verbs"; }
  RdmaMemory* rdma() { return nullptr; }
  bool reaches(int) const override { return false; }
  Channel* sendChannel(int, int) override { return nullptr; }
  Channel* recvChannel(int, int) override { return nullptr; }
};
}  // namespace weft
#endif

// See any_source.h.
#include "collectives/any_source.h"

#include <cstdint>

#include "base/error.h"
#include "base/wait.h"
#include "collectives/p2p_header.h"
#include "transports/channel.h"

namespace weft {

weftResult_t waitForAnySender(CollContext& ctx, int after, int* source) {
  const int n = ctx.nranks;
  Waiter waiter(ctx.run);
  for (;;) {
    for (int k = 1; k <= n; ++k) {
      const int p = (after + k) % n;
      if (p == ctx.rank) continue;
      Channel* ch = ctx.channels->recvChannel(p, 0);  // where sends travel (point_to_point.cc)
      uint32_t magic = 0;
      size_t got = 0;
      WEFT_CHECK(ch->tryPeek(&magic, sizeof magic, &got));
      if (got == sizeof magic && magic == kP2PMagic) {
        *source = p;
        return weftSuccess;
      }
      if (got == 0) WEFT_CHECK(ch->checkPeer());
    }
    switch (waiter.idle()) {
      case Waiter::Idle::kAborted:
        return setError(weftInvalidUsage, "communicator aborted");
      case Waiter::Idle::kTimedOut:
        return setError(weftTimeout,
                        "no rank sent to rank %d within WEFT_TIMEOUT=%g s (a receive from any "
                        "source waits for the first send from any rank)",
                        ctx.rank, waiter.timeoutSec());
      case Waiter::Idle::kSleep:
        Waiter::nap();
        break;
      case Waiter::Idle::kLook:
        break;
    }
  }
}

}  // namespace weft

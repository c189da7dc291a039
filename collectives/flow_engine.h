// The CPU executor's engine. A collective is described as a set of flows; a
// flow is an ordered list of items (chunks) moved over one channel in one
// direction. An item may depend on a receive item of another flow (the ring
// forwards a chunk only after it arrived and was reduced; a tree takes its
// second child's chunk only after the first one's was reduced); receive items
// complete in order within their flow, so "item j of flow g is done" is just
// done[g] > j. The engine moves whatever can move without blocking, and when
// nothing can, backs off: spin, yield, then sleep in poll() on the channels.
// It fails with a sentence naming the peer when a channel breaks, and with
// weftTimeout when no byte moved for WEFT_TIMEOUT.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "base/config.h"
#include "base/wait.h"
#include "transports/channel.h"

namespace weft {

struct FlowItem {
  char* data = nullptr;  // send: source; receive: where the bytes land
  size_t bytes = 0;
  int depFlow = -1;  // this item waits until flow depFlow has done > depItem
  int64_t depItem = -1;
  // A second wait, for a receive that both reads a result another flow made
  // and overwrites bytes a send flow may still be reading (recursive doubling).
  int depFlow2 = -1;
  int64_t depItem2 = -1;
  // Adds a wait: the first, or the second once the first is set.
  void waitFor(int flow, int64_t item) {
    if (depFlow < 0) {
      depFlow = flow;
      depItem = item;
    } else {
      depFlow2 = flow;
      depItem2 = item;
    }
  }
  // Send items only: the plan offers these bytes for sending by reference
  // (Channel::trySendStable). It may only where it guarantees they stay
  // unchanged until the receiver has read them, within the call and after it
  // returns (the receiver's later sends that this rank waits for depend on
  // them), and does where it is worth it (CollContext::stableCallMax).
  bool stable = false;
};

// What a collective tells the engine. Items are produced on demand so that a
// call allocates nothing per chunk.
class FlowPlan {
 public:
  virtual ~FlowPlan() = default;
  virtual int numFlows() const = 0;
  virtual Channel* channel(int flow) const = 0;
  virtual bool isSend(int flow) const = 0;
  virtual int64_t numItems(int flow) const = 0;
  virtual FlowItem item(int flow, int64_t index) const = 0;
  // Called once a receive item has fully landed (reduce it, for example).
  virtual void onReceived(int /*flow*/, int64_t /*index*/) {}
  // Checked after each onReceived: a plan that found the received data
  // unacceptable (a mismatched call header) returns its error, already set.
  virtual weftResult_t failure() const { return weftSuccess; }
  // When a peer's failure ends the run, for every flow with items: item
  // `index` of `flow` is the one it was at (numItems: all done), with its
  // first `landed` bytes moved (received in place, or sent).
  virtual void onStopped(int /*flow*/, int64_t /*index*/, size_t /*landed*/) {}
};

struct CallCheck;  // base/call_header.h

// Takes a plan instead of running it: the simulator (tools/weft_sim) asks
// the algorithms for every rank's plans this way, so that what it times is
// what weft would run. The plan is only valid during record(), and, as the
// engine does, a recorder asks channel() only of flows that have items.
class FlowRecorder {
 public:
  virtual ~FlowRecorder() = default;
  virtual weftResult_t record(const FlowPlan& plan) = 0;
};

// The wait policy (base/wait.h: abort flag and the knobs' values, which a
// communicator sets from its configuration), and what a run needs besides.
struct FlowRunOptions : WaitPolicy {
  Doorbell* doorbell = nullptr;  // this rank's, when shared-memory channels are in use
  // When set and pending, the first board publish or flow run of a call sends
  // and checks the call header (base/call_header.h).
  CallCheck* check = nullptr;
  FlowRecorder* recorder = nullptr;  // set: runFlows records, moves nothing
};

weftResult_t runFlows(FlowPlan& plan, const FlowRunOptions& opts);

}  // namespace weft

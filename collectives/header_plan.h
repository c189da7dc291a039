// A FlowPlan wrapper that puts the call header (base/call_header.h) in
// front of a collective's data on the FIFO path: on stream 0 of every peer, in
// both directions, the header is the first thing on the wire. Where the inner
// plan already has a flow on that channel the header goes ahead of its items
// (so the data follows in the same byte stream); otherwise a header-only flow
// is added. Headers are sent eagerly, before the engine moves any data, so
// that a rank that stops at the first mismatch it sees has told every peer
// its call; a first item that is small (or, over a socket, up to 256 KiB)
// leaves with its header in one send (one TCP segment: the check then costs
// the receiver one extra read, no extra wait).
// Received headers are compared before any data behind them is read.
// The header table (CallCheck::channels) may differ from the plan's: over TCP
// a large call sends its data on a connection per direction while its header
// stays on the shared one (tcp_transport.h), so that flow becomes a
// header-only one, and the data may be read before the header; a mismatch
// then still fails the call, with the sentence.
#pragma once

#include <string>
#include <vector>

#include "base/call_header.h"
#include "collectives/flow_engine.h"

namespace weft {

class HeaderedPlan : public FlowPlan {
 public:
  HeaderedPlan(FlowPlan& inner, CallCheck& check);
  int numFlows() const override { return static_cast<int>(flows_.size()); }
  Channel* channel(int f) const override { return flows_[f].channel; }
  bool isSend(int f) const override { return flows_[f].send; }
  int64_t numItems(int f) const override;
  FlowItem item(int f, int64_t index) const override;
  void onReceived(int f, int64_t index) override;
  void onStopped(int f, int64_t index, size_t landed) override;
  weftResult_t failure() const override { return failure_; }
  // After a transport failure: reads the headers not yet received, each at
  // least once, for up to 500 ms in all (a closed connection ends its wait),
  // on from the bytes the engine had read (onStopped).
  // A peer that found a mismatch may close its end at once, and we would
  // blame its exit instead of the mismatch; its header was sent before that.
  // Returns weftInvalidUsage (error set) when one of them disagrees, else
  // weftSuccess.
  weftResult_t salvageHeaders();
  // "1,3": peers whose header has not arrived, i.e. that have not entered
  // this call (for the timeout sentence); "" when all did.
  std::string missingPeers() const;

  struct Flow {
    int inner = -1;  // index in the inner plan, -1 for a header-only flow
    int peer = -1;   // >= 0 when this flow carries the header for that peer
    bool send = false;
    Channel* channel = nullptr;
    // An extra first item ahead of the inner ones: the received header, or
    // what the eager send left of the header (+ first inner item).
    char* head = nullptr;
    size_t headBytes = 0;
    int64_t innerFrom = 0;    // first inner item after the head (1: item 0 left with the header)
    bool headerDone = false;  // receive: the header arrived and was compared
    size_t landed = 0;        // receive: header bytes the engine read before a failure
  };

 private:
  // Sends the header of send flow `fl` (with its first inner item when small)
  // as far as the channel takes it now; the rest becomes the flow's head.
  void sendEarly(Flow& fl, int index);
  int64_t headItems(const Flow& fl) const { return fl.head != nullptr ? 1 : 0; }

  FlowPlan& inner_;
  CallCheck& check_;
  // The inner flows first, in their order, then header-only ones. Reused per
  // thread, so a call allocates nothing once the thread has run one.
  std::vector<Flow>& flows_;
  weftResult_t failure_ = weftSuccess;
};

// Sends and checks the pending call header alone: what a collective with
// count 0 puts on the FIFO path, so that a rank passing 0 where the others
// pass more is told, rather than left behind.
weftResult_t exchangeCallHeader(const FlowRunOptions& run);

}  // namespace weft

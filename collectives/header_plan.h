// A FlowPlan wrapper that runs the call check (base/call_header.h) beside a
// collective's data on the FIFO path.
//
// Who tells whom: radix-R dissemination (dissemination.h; R =
// WEFT_CHECK_RADIX), ceil(log_R n) steps, in step k to the ranks j * R^k
// ahead and from those behind (1 <= j < R, j * R^k < n).
// Step 0 carries the rank's own 24-byte header; later steps a CallSummary
// (least and greatest header seen so far). With n <= R there is one step, to
// every peer, and a rank fails at the first header that disagrees. With more
// steps a rank fails only after the last one, having sent all of its own
// (a rank that stopped early would leave the ranks after it without the
// news), so that every rank sees the same least and greatest header and
// reports the disagreement between one of them and its own call.
//
// On the wire: on stream 0 of each pair the schedule joins, in its direction,
// the check's message is the first thing; where the inner plan already has a
// flow on that channel it goes ahead of its items (the data follows in the
// same byte stream); otherwise a message-only flow is added. Step 0 is sent
// eagerly, before the engine moves any data; a first item that is small (or,
// over a socket, up to 256 KiB) leaves with it in one send. A later step's
// message waits for every message of the steps before it, through a gate
// flow of empty receive items (each waits for one message; the engine runs
// a flow's items in order, so one dependency on the gate waits for them all).
// Received messages are taken in before any data behind them is read.
// The check's table (CallCheck::channels) may differ from the plan's: over
// TCP a large call sends its data on a connection per direction while the
// check stays on the shared one (tcp_transport.h), so that flow becomes a
// message-only one, and the data may be read before the header; a mismatch
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
  // After a transport failure: reads the check's messages not yet received,
  // each at least once, for up to 500 ms in all (a closed connection ends its
  // wait), on from the bytes the engine had read (onStopped).
  // A peer that found a mismatch may close its end at once, and we would
  // blame its exit instead of the mismatch; its message was sent before that.
  // Returns weftInvalidUsage (error set) when what arrived disagrees, else
  // weftSuccess.
  weftResult_t salvageHeaders();
  // For the timeout sentence: "; ranks that have not arrived: 1,3" (the
  // ranks this one hears from directly whose header is missing: they have
  // not entered this call; with one step, any peer), else what the later
  // steps still lack, else that every rank entered.
  std::string arrivalNote() const;

  struct Flow {
    int inner = -1;  // index in the inner plan, -1 for a message-only or the gate flow
    int peer = -1;   // >= 0 when this flow carries the check's message for that peer
    int step = -1;   // the check's step of that message
    bool send = false;
    bool gate = false;  // the gate flow: its items are the gate's waits
    Channel* channel = nullptr;
    // An extra first item ahead of the inner ones: the received message, or
    // what is left to send of it (+ first inner item).
    char* head = nullptr;
    size_t headBytes = 0;
    int64_t innerFrom = 0;    // first inner item after the head (1: item 0 left with the header)
    bool headerDone = false;  // receive: the message arrived and was taken in
    size_t landed = 0;        // receive: message bytes the engine read before a failure
  };
  // One empty item of the gate flow: it waits for flow `flow`'s head; at the
  // last wait of step k, snapshot the summary for step k + 1 (`snapshot`);
  // the last of all gives the verdict.
  struct GateItem {
    int flow = -1;
    int snapshot = -1;
  };

 private:
  // Sends the header of send flow `fl` (with its first inner item when small)
  // as far as the channel takes it now; the rest becomes the flow's head.
  void sendEarly(Flow& fl, int index);
  int64_t headItems(const Flow& fl) const { return fl.head != nullptr ? 1 : 0; }
  // The flow that carries the check's message to or from `peer` (the first
  // inner flow on that channel and direction, or a new message-only one).
  int carrierFor(int peer, bool send);
  void addGate(const std::vector<std::vector<int>>& recvByStep, const std::vector<int>& laterSends);
  // A message arrived whole (or was salvaged): compare it (one step) or fold
  // it into the summary. Returns the mismatch error of a one-step check.
  weftResult_t takeIn(Flow& fl);
  // Whether every message of the steps before `step` arrived (or its peer is gone).
  bool receivedBefore(int step) const;
  // The verdict of a check of several steps: weftInvalidUsage with the
  // sentence when the summary disagrees.
  weftResult_t verdict();

  FlowPlan& inner_;
  CallCheck& check_;
  // The inner flows first, in their order, then message-only ones, then the
  // gate. Reused per thread, so a call allocates nothing once the thread
  // has run one.
  std::vector<Flow>& flows_;
  int steps_ = 1;
  int gate_ = -1;              // index of the gate flow (several steps only)
  std::vector<int>& gateEnd_;  // [k]: the gate item after which step k + 1 may send
  CallSummary seen_;           // what this rank knows so far (several steps)
  weftResult_t failure_ = weftSuccess;
};

// Sends and checks the pending call header alone: what a collective with
// count 0 puts on the FIFO path, so that a rank passing 0 where the others
// pass more is told, rather than left behind.
weftResult_t exchangeCallHeader(const FlowRunOptions& run);

}  // namespace weft

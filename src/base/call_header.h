// Collective-mismatch detection. Every collective carries a 24-byte header
// describing the call (kind, count, datatype, op, root, collective sequence
// number) to every peer: on the shared-memory boards it is published next to
// the board's sequence counter (same cache line, so it costs no extra miss);
// on FIFO paths (TCP, shared-memory channels) it is the first item of the call
// on stream 0 of every peer pair, in both directions. Each rank compares what
// it received with its own call, so ranks that disagree fail with
// weftInvalidUsage and a sentence naming the rank and the field, instead of
// hanging or exchanging wrong data.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "weft/weft.h"

namespace weft {

class ChannelTable;

struct CallHeader {
  uint32_t magic = 0;  // kCallMagic, or 0 for "no call starts here"
  uint8_t kind = 0;    // CollKind
  uint8_t datatype = 0;
  uint8_t op = 0;
  uint8_t turn = 0;  // times the calling thread changed before this call, mod 256
  int32_t root = 0;
  uint32_t seq = 0;  // collectives this rank has put on the wire, this one included
  uint64_t count = 0;
};
static_assert(sizeof(CallHeader) == 24, "CallHeader is a wire format");

constexpr uint32_t kCallMagic = 0x57434831;  // "WCH1"

// What one communicator needs to check its calls. The dispatcher fills `mine`
// and sets `pending` before a collective; the first board publish or flow run
// of the call sends the header and clears `pending` (the call's later rounds
// carry none).
struct CallCheck {
  CallHeader mine;
  bool pending = false;
  bool mismatch = false;  // set when a check failed (the communicator is then broken)
  int rank = 0;
  int nranks = 1;
  ChannelTable* channels = nullptr;
  std::vector<CallHeader> theirs;  // [peer]: what each peer sent on the FIFO path
};

// Compares `theirs` (from rank `peer`) with `check.mine`. On disagreement sets
// check.mismatch and the thread's error sentence, and returns weftInvalidUsage.
weftResult_t compareCall(CallCheck& check, int peer, const CallHeader& theirs);

// "allreduce (1024 x float, sum)" for a header (used in mismatch sentences).
std::string describeHeader(const CallHeader& h);

}  // namespace weft

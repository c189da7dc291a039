// Collective-mismatch detection. Every collective carries a 24-byte header
// describing the call (kind, count, datatype, op, root, collective sequence
// number): on the shared-memory boards it is published next to the board's
// sequence counter (same cache line, so it costs no extra miss) for every
// rank to read; on FIFO paths (TCP, shared-memory channels) it is the first
// item of the call on stream 0 between the ranks that the check's schedule
// pairs (collectives/header_plan.h: every pair up to WEFT_CHECK_RADIX ranks,
// then ceil(log_R n) steps that pass a CallSummary on). Ranks that disagree
// fail with weftInvalidUsage and a sentence naming a rank and the field,
// instead of hanging or exchanging wrong data.
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

// What the check's steps after the first carry: the least and the greatest
// call header a rank has seen so far (as canonicalHeader bytes, ties broken by
// rank) and whose they are. Ranks whose calls all agree hold lo == hi; one
// disagreeing rank anywhere makes them differ on every rank once the last
// step has passed everything on.
struct CallSummary {
  CallHeader lo, hi;
  int32_t loRank = -1, hiRank = -1;
};
static_assert(sizeof(CallSummary) == 56, "CallSummary is a wire format");

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
  int radix = 8;  // WEFT_CHECK_RADIX
  ChannelTable* channels = nullptr;
};

// Compares `theirs` (from rank `peer`) with `check.mine`. On disagreement sets
// check.mismatch and the thread's error sentence, and returns weftInvalidUsage.
weftResult_t compareCall(CallCheck& check, int peer, const CallHeader& theirs);

// `h` with the fields its collective ignores (op, root) zeroed, so that two
// headers compareCall finds alike are alike byte for byte; a header without
// the magic is left as it came.
CallHeader canonicalHeader(const CallHeader& h);

// A summary of one header, and the union of two summaries.
CallSummary summaryOf(const CallHeader& h, int rank);
void mergeSummary(CallSummary& into, const CallSummary& from);
bool summaryAgrees(const CallSummary& s);

// "allreduce (1024 x float, sum)" for a header (used in mismatch sentences).
std::string describeHeader(const CallHeader& h);

}  // namespace weft

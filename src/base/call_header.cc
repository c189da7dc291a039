// Comparing call headers and wording the disagreement (see call_header.h).
#include "base/call_header.h"

#include <cstdio>
#include <cstring>

#include "base/coll_kind.h"
#include "base/datatype.h"
#include "base/error.h"

namespace weft {
namespace {

bool hasOp(uint8_t kind) {
  auto k = static_cast<CollKind>(kind);
  return k == CollKind::kAllReduce || k == CollKind::kReduceScatter || k == CollKind::kReduce;
}

bool hasRoot(uint8_t kind) {
  auto k = static_cast<CollKind>(kind);
  return k == CollKind::kBroadcast || k == CollKind::kReduce;
}

const char* kindName(uint8_t kind) {
  return kind <= static_cast<uint8_t>(CollKind::kBarrier) ? collName(static_cast<CollKind>(kind))
                                                          : "an unknown operation";
}

const char* typeName(uint8_t dt) {
  return dt < weftNumTypes ? datatypeName(static_cast<weftDataType_t>(dt)) : "?";
}

const char* opName(uint8_t op) {
  return op < weftNumOps ? redOpName(static_cast<weftRedOp_t>(op)) : "?";
}

}  // namespace

// Two threads took turns on the communicator in different orders on two
// ranks: the calls paired here were issued by different threads' code.
static weftResult_t threadOrderMismatch(CallCheck& check, int peer, const CallHeader& theirs) {
  check.mismatch = true;
  return setError(weftInvalidUsage,
                  "collective mismatch: %s was issued after the calling thread changed %u times "
                  "(mod 256) on rank %d and %u times on this rank (%d): threads call this "
                  "communicator in a different order on different ranks (docs/api.md, Threads; "
                  "WEFT_CHECK_THREADS=0 turns this check off)",
                  describeHeader(check.mine).c_str(), theirs.turn, peer, check.mine.turn,
                  check.rank);
}

CallHeader canonicalHeader(const CallHeader& h) {
  CallHeader c = h;
  if (c.magic != kCallMagic) return c;
  if (!hasOp(c.kind)) c.op = 0;
  if (!hasRoot(c.kind)) c.root = 0;
  return c;
}

CallSummary summaryOf(const CallHeader& h, int rank) {
  CallSummary s;
  s.lo = s.hi = canonicalHeader(h);
  s.loRank = s.hiRank = rank;
  return s;
}

namespace {
// The order the summaries keep: bytes first, then rank, so that every rank
// ends with the same two (the wire layout is the same on every rank).
int order(const CallHeader& a, int ra, const CallHeader& b, int rb) {
  const int c = std::memcmp(&a, &b, sizeof(CallHeader));
  if (c != 0) return c;
  return ra < rb ? -1 : (ra > rb ? 1 : 0);
}
}  // namespace

void mergeSummary(CallSummary& into, const CallSummary& from) {
  if (order(from.lo, from.loRank, into.lo, into.loRank) < 0) {
    into.lo = from.lo;
    into.loRank = from.loRank;
  }
  if (order(from.hi, from.hiRank, into.hi, into.hiRank) > 0) {
    into.hi = from.hi;
    into.hiRank = from.hiRank;
  }
}

bool summaryAgrees(const CallSummary& s) {
  return std::memcmp(&s.lo, &s.hi, sizeof(CallHeader)) == 0;
}

std::string describeHeader(const CallHeader& h) {
  char buf[160];
  int len = snprintf(buf, sizeof(buf), "%s #%u (%llu x %s", kindName(h.kind), h.seq,
                     static_cast<unsigned long long>(h.count), typeName(h.datatype));
  if (hasOp(h.kind)) len += snprintf(buf + len, sizeof(buf) - len, ", %s", opName(h.op));
  if (hasRoot(h.kind)) len += snprintf(buf + len, sizeof(buf) - len, ", root %d", h.root);
  snprintf(buf + len, sizeof(buf) - len, ")");
  return buf;
}

weftResult_t compareCall(CallCheck& check, int peer, const CallHeader& theirs) {
  const CallHeader& mine = check.mine;
  char what[96] = "";
  if (theirs.magic != kCallMagic) {
    check.mismatch = true;
    return setError(weftInvalidUsage,
                    "collective mismatch: rank %d is not starting a collective here (it is in "
                    "point-to-point calls or in the middle of a different collective) while this "
                    "rank (%d) starts %s",
                    peer, check.rank, describeHeader(mine).c_str());
  }
  if (theirs.seq != mine.seq)
    snprintf(what, sizeof(what), "it is at collective #%u, this rank at #%u (a call was skipped)",
             theirs.seq, mine.seq);
  else if (theirs.turn != mine.turn)
    return threadOrderMismatch(check, peer, theirs);
  else if (theirs.kind != mine.kind)
    snprintf(what, sizeof(what), "the collectives differ (%s vs %s)", kindName(theirs.kind),
             kindName(mine.kind));
  else if (theirs.count != mine.count)
    snprintf(what, sizeof(what), "the counts differ (%llu vs %llu)",
             static_cast<unsigned long long>(theirs.count),
             static_cast<unsigned long long>(mine.count));
  else if (theirs.datatype != mine.datatype)
    snprintf(what, sizeof(what), "the datatypes differ (%s vs %s)", typeName(theirs.datatype),
             typeName(mine.datatype));
  else if (hasOp(mine.kind) && theirs.op != mine.op)
    snprintf(what, sizeof(what), "the ops differ (%s vs %s)", opName(theirs.op), opName(mine.op));
  else if (hasRoot(mine.kind) && theirs.root != mine.root)
    snprintf(what, sizeof(what), "the roots differ (%d vs %d)", theirs.root, mine.root);
  else
    return weftSuccess;
  check.mismatch = true;
  return setError(weftInvalidUsage, "collective mismatch: rank %d called %s, this rank (%d) %s: %s",
                  peer, describeHeader(theirs).c_str(), check.rank, describeHeader(mine).c_str(),
                  what);
}

}  // namespace weft

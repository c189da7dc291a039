// Building and checking point-to-point size headers (see p2p_header.h).
#include "collectives/p2p_header.h"

#include "base/call_header.h"
#include "base/error.h"
#include "collectives/reduce.h"

namespace weft {
namespace {

const char* typeName(int dt) {
  return dt >= 0 && dt < weftNumTypes ? datatypeName(static_cast<weftDataType_t>(dt)) : "?";
}

}  // namespace

P2PHeader makeP2PHeader(uint64_t count, int datatype) {
  P2PHeader h;
  h.magic = kP2PMagic;
  h.datatype = static_cast<uint8_t>(datatype);
  h.count = count;
  return h;
}

weftResult_t compareP2PHeader(const P2PHeader& theirs, int peer, int rank, uint64_t count,
                              int datatype) {
  if (theirs.magic != kP2PMagic)
    return setError(weftInvalidUsage,
                    "point-to-point mismatch: this rank (%d) receives %llu x %s from rank %d, "
                    "but rank %d is not sending here (%s)",
                    rank, static_cast<unsigned long long>(count), typeName(datatype), peer, peer,
                    theirs.magic == kCallMagic ? "it starts a collective"
                                               : "its calls are out of step with this rank's");
  if (theirs.count == count && theirs.datatype == datatype) return weftSuccess;
  return setError(weftInvalidUsage,
                  "point-to-point mismatch: rank %d sends %llu x %s to this rank (%d), which "
                  "receives %llu x %s from it (counts and datatypes of a weftSend and its "
                  "weftRecv must agree)",
                  peer, static_cast<unsigned long long>(theirs.count), typeName(theirs.datatype),
                  rank, static_cast<unsigned long long>(count), typeName(datatype));
}

}  // namespace weft

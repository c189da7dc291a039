// The kinds of call weft executes, shared by the call header on the wire
// (call_header.h), the collectives and the API.
#pragma once

namespace weft {

enum class CollKind {
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kBroadcast,
  kReduce,
  kAllToAll,
  kSend,
  kRecv,
  kBarrier
};

const char* collName(CollKind kind);
bool isP2P(CollKind kind);

}  // namespace weft

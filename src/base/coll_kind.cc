// Names of the kinds of call (coll_kind.h).
#include "base/coll_kind.h"

namespace weft {

const char* collName(CollKind kind) {
  switch (kind) {
    case CollKind::kAllReduce:
      return "allreduce";
    case CollKind::kAllGather:
      return "allgather";
    case CollKind::kReduceScatter:
      return "reducescatter";
    case CollKind::kBroadcast:
      return "broadcast";
    case CollKind::kReduce:
      return "reduce";
    case CollKind::kAllToAll:
      return "alltoall";
    case CollKind::kSend:
      return "send";
    case CollKind::kRecv:
      return "recv";
    case CollKind::kBarrier:
      return "barrier";
  }
  return "?";
}

bool isP2P(CollKind kind) { return kind == CollKind::kSend || kind == CollKind::kRecv; }

}  // namespace weft

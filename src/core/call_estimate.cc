// What weftGroupSimulateEnd reports: the time of one call by the communicator's
// cost model (collectives/tuner.h), which is measured at init and shared by
// every rank. Allreduce and allgather are the tuner's own predictions of the
// algorithm it would pick. The other kinds reuse its links: a reduce-scatter
// moves what an allgather of the same block does, plus the reduction; a
// broadcast or reduce is one pipelined pass over the ranks, half the two
// passes of a ring allreduce; an all-to-all and a send or receive cost one
// message per peer on the link that reaches that peer.
#include <algorithm>

#include "base/datatype.h"
#include "core/call.h"
#include "core/comm.h"

namespace weft {

namespace {

bool sameNode(const weftComm* comm, int peer) {
  return comm->places[static_cast<size_t>(peer)].node ==
         comm->places[static_cast<size_t>(comm->rank)].node;
}

double messageUs(const weftComm* comm, int peer, double bytes) {
  const LinkModel& link = sameNode(comm, peer) ? comm->tuner.intra() : comm->tuner.inter();
  return link.alphaUs + Tuner::kPerMessageUs + bytes * link.usPerByte();
}

}  // namespace

double estimateCallUs(const weftComm* comm, const Call& call) {
  const size_t bytes = call.args.count * datatypeSize(call.args.datatype);
  const int n = comm->nranks;
  if (n == 1 || (bytes == 0 && call.kind != CollKind::kBarrier)) return 0;
  const double reduceUs = bytes * 1e-3 / Tuner::kReduceGBps;
  switch (call.kind) {
    case CollKind::kAllReduce:
      return comm->tuner.pickAllReduce(bytes).predictedUs;
    case CollKind::kAllGather:
      return comm->tuner.pickAllGather(bytes).predictedUs;
    case CollKind::kReduceScatter:
      return comm->tuner.pickAllGather(bytes).predictedUs + reduceUs * (n - 1);
    case CollKind::kBroadcast:
    case CollKind::kReduce:
      return comm->tuner.pickAllReduce(bytes).predictedUs / 2 +
             (call.kind == CollKind::kReduce ? reduceUs : 0);
    case CollKind::kAllToAll: {
      double us = 0;
      for (int peer = 0; peer < n; ++peer)
        if (peer != comm->rank) us += messageUs(comm, peer, bytes);
      return us;
    }
    case CollKind::kSend:
    case CollKind::kRecv:
      return call.peer == comm->rank ? 0 : messageUs(comm, std::max(call.peer, 0), bytes);
    case CollKind::kBarrier:
      return comm->tuner.pickAllReduce(8).predictedUs;
  }
  return 0;
}

}  // namespace weft

// The init-time allgather of every rank's place (see rank_place.h).
#include "topo/rank_place.h"

#include <unistd.h>

#include "base/config.h"
#include "base/error.h"
#include "bootstrap/bootstrap.h"
#include "topo/node_id.h"
#include "topo/topology.h"

namespace weft {

weftResult_t gatherRankPlaces(Bootstrap& bs, std::vector<RankPlace>* places) {
  const int n = bs.nranks(), me = bs.rank();
  places->assign(n, RankPlace{0, 0, -1, CpuShare{}});
  (*places)[me] = {nodeIdentityHash(), static_cast<int64_t>(getpid()),
                   topo::gpuRingPosition(configString("WEFT_RANK_GPU")), readCpuShare()};
  if (n > 1) WEFT_CHECK(bs.allgather(places->data(), sizeof(RankPlace)));
  return weftSuccess;
}

void localIndexOf(const std::vector<RankPlace>& places, int rank, int* index, int* count) {
  *index = 0;
  *count = 0;
  for (int r = 0; r < static_cast<int>(places.size()); ++r) {
    if (places[r].node != places[rank].node) continue;
    if (r < rank) ++*index;
    ++*count;
  }
}

NodeCpus nodeCpusOf(const std::vector<RankPlace>& places, int rank) {
  std::vector<uint64_t> nodes;
  std::vector<CpuShare> shares;
  for (const RankPlace& p : places) {
    nodes.push_back(p.node);
    shares.push_back(p.cpu);
  }
  return judgeNodeCpus(nodes, shares, rank);
}

}  // namespace weft

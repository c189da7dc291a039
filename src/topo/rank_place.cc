// The init-time allgather of every rank's place (see rank_place.h).
#include "topo/rank_place.h"

#include <unistd.h>

#include "base/config.h"
#include "base/error.h"
#include "base/log.h"
#include "bootstrap/bootstrap.h"
#include "topo/node_id.h"
#include "topo/topology.h"

namespace weft {

namespace {

// Our leaf in WEFT_FABRIC (or kFabric*); *why says what went wrong here.
int64_t locateInFabric(Bootstrap& bs, topo::Fabric* fabric, std::string* why) {
  if (!configIsSet("WEFT_FABRIC") || configString("WEFT_FABRIC").empty()) return kFabricUnset;
  if (topo::loadFabric(configString("WEFT_FABRIC"), fabric) != weftSuccess) {
    *why = lastError();
    return kFabricUnreadable;
  }
  std::string address = bs.peerAddr(bs.rank()).str();
  address = address.substr(0, address.rfind(':'));
  if (address.size() > 2 && address.front() == '[') address = address.substr(1, address.size() - 2);
  const std::vector<std::string> names = topo::fabricNamesOfThisNode(address);
  const int leaf = fabric->findLeaf(names);
  if (leaf >= 0) return leaf;
  std::string list;
  for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
  *why = "this node (" + list +
         ") is in no leaf of WEFT_FABRIC; list it, or name it with "
         "WEFT_FABRIC_NODE";
  return kFabricNotListed;
}

// The same verdict on every rank from the gathered places.
weftResult_t checkFabricAgreement(const std::vector<RankPlace>& places, int me,
                                  const std::string& mine) {
  for (int r = 0; r < static_cast<int>(places.size()); ++r) {
    const RankPlace& p = places[r];
    if (p.fabricLeaf == kFabricUnreadable || p.fabricLeaf == kFabricNotListed)
      return setError(weftInvalidArgument, "rank %d: %s", r,
                      r == me ? mine.c_str()
                      : p.fabricLeaf == kFabricNotListed
                          ? "its node is in no leaf of WEFT_FABRIC (its log names the node)"
                          : "it could not read WEFT_FABRIC (its log says why)");
    if ((p.fabricLeaf == kFabricUnset) != (places[0].fabricLeaf == kFabricUnset))
      return setError(weftInvalidArgument,
                      "WEFT_FABRIC is set on rank %d but not on rank %d: set it on every rank "
                      "or on none",
                      p.fabricLeaf == kFabricUnset ? 0 : r, p.fabricLeaf == kFabricUnset ? r : 0);
    if (p.fabricHash != places[0].fabricHash)
      return setError(weftInvalidArgument,
                      "ranks 0 and %d read different WEFT_FABRIC descriptions: every rank must "
                      "read the same file",
                      r);
  }
  return weftSuccess;
}

}  // namespace

weftResult_t gatherRankPlaces(Bootstrap& bs, std::vector<RankPlace>* places, topo::Fabric* fabric) {
  const int n = bs.nranks(), me = bs.rank();
  *fabric = topo::Fabric();
  std::string why;
  const int64_t leaf = locateInFabric(bs, fabric, &why);
  if (leaf != kFabricUnset && !why.empty()) WEFT_WARN(INIT, "%s", why.c_str());
  places->assign(n, RankPlace{0, 0, -1, CpuShare{}, kFabricUnset, 0});
  (*places)[me] = {nodeIdentityHash(),
                   static_cast<int64_t>(getpid()),
                   topo::gpuRingPosition(configString("WEFT_RANK_GPU")),
                   readCpuShare(),
                   leaf,
                   leaf >= 0 ? fabric->hash : 0};
  if (n > 1) {
    weftResult_t gathered = bs.allgather(places->data(), sizeof(RankPlace));
    // Where this rank could not use WEFT_FABRIC, its own reason is what its
    // caller needs, even when the gathering was cut short by another rank
    // failing on the same file first.
    if (gathered != weftSuccess && (leaf == kFabricUnreadable || leaf == kFabricNotListed)) {
      *fabric = topo::Fabric();
      return setError(weftInvalidArgument, "rank %d: %s", me, why.c_str());
    }
    WEFT_CHECK(gathered);
  }
  weftResult_t r = checkFabricAgreement(*places, me, why);
  if (r != weftSuccess) *fabric = topo::Fabric();
  return r;
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

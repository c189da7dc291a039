// One GPU's ranking of the usable NICs (see nic_rank.h).
#include "topo/nic_rank.h"

#include <algorithm>
#include <cstdio>

namespace weft::topo {

std::string gbpsText(double gbps) {
  if (gbps <= 0) return "unknown GB/s";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f GB/s", gbps);
  return buf;
}

std::string bridgesText(int n) { return std::to_string(n) + (n == 1 ? " bridge" : " bridges"); }

std::string describeCandidate(const Machine& m, const NicCandidate& c) {
  return m.nics[c.nic].name + " (" + pathClassName(c.path.cls) + ", " + gbpsText(c.path.gbps) +
         ", " + bridgesText(c.path.bridges) + ")";
}

std::vector<NicCandidate> nearestClass(const std::vector<NicCandidate>& all) {
  std::vector<NicCandidate> near;
  if (all.empty()) return near;
  PathClass best = all.front().path.cls;
  for (const NicCandidate& c : all) best = std::min(best, c.path.cls);
  for (const NicCandidate& c : all) {
    if (c.path.cls == best) near.push_back(c);
  }
  return near;
}

namespace {

// The fastest NIC of a farther class that would have won had bandwidth come
// first (faster than every NIC of the pool beyond the tolerance), or null.
const NicCandidate* fasterButFarther(const std::vector<NicCandidate>& all,
                                     const std::vector<NicCandidate>& pool) {
  double poolBest = 0;
  for (const NicCandidate& c : pool) {
    if (c.path.gbps <= 0) return nullptr;  // unknown speeds: nothing to compare
    poolBest = std::max(poolBest, c.path.gbps);
  }
  const NicCandidate* best = nullptr;
  for (const NicCandidate& c : all) {
    if (c.path.cls <= pool.front().path.cls || c.path.gbps * kBandwidthTolerance <= poolBest)
      continue;
    if (best == nullptr || c.path.gbps > best->path.gbps) best = &c;
  }
  return best;
}

}  // namespace

std::vector<NicCandidate> preferredNics(const Machine& m, const std::vector<NicCandidate>& all,
                                        const std::vector<NicCandidate>& pool, std::string* why) {
  if (pool.empty()) return pool;
  const PathClass cls = pool.front().path.cls;
  // Bandwidth counts only when every speed in the pool is known; a missing
  // speed must not look slower (or faster) than a known one.
  bool bandwidthKnown =
      std::all_of(pool.begin(), pool.end(), [](const NicCandidate& c) { return c.path.gbps > 0; });
  double bestGbps = 0;
  for (const NicCandidate& c : pool) bestGbps = std::max(bestGbps, c.path.gbps);
  std::vector<NicCandidate> fast;
  for (const NicCandidate& c : pool) {
    if (!bandwidthKnown || c.path.gbps >= bestGbps * kBandwidthTolerance) fast.push_back(c);
  }
  // Bridge count only separates NICs inside the GPU's own switch tree (the
  // NIC in its sub-switch); beyond the host bridge, more bridges on the NIC's
  // side cost no bandwidth, and spreading GPUs over those NICs is worth more.
  const bool inSwitchTree = cls == PathClass::kPIX || cls == PathClass::kPXB;
  int fewestBridges = fast.front().path.bridges;
  for (const NicCandidate& c : fast) fewestBridges = std::min(fewestBridges, c.path.bridges);
  std::vector<NicCandidate> tied;
  for (const NicCandidate& c : fast) {
    if (!inSwitchTree || c.path.bridges == fewestBridges) tied.push_back(c);
  }

  const std::string count = std::to_string(pool.size()) + " " + pathClassName(cls) + " NICs";
  const bool fartherExists =
      std::any_of(all.begin(), all.end(), [&](const NicCandidate& c) { return c.path.cls > cls; });
  if (all.size() == 1) {
    *why = "the only usable RDMA NIC";
  } else if (pool.size() > fast.size()) {
    *why = "highest bandwidth among the " + count;
  } else if (fast.size() > tied.size()) {
    *why = "fewest bridges among the " + count;
  } else if (fartherExists || pool.size() < all.size()) {
    *why = std::string("closest class (") + pathClassName(cls) + ")";
  } else {
    *why = "all usable NICs are equally near";
  }
  if (const NicCandidate* lost = fasterButFarther(all, pool))
    *why += "; nearer than the faster " + describeCandidate(m, *lost);
  if (!bandwidthKnown && pool.size() > 1) *why += "; link speeds unknown, bandwidth not compared";
  return tied;
}

}  // namespace weft::topo

// Whether the ranks of a node outnumber the CPUs they may run on. Then a
// waiting rank must give its core away at once: the peer it waits for may be
// queued on that very core, and every microsecond spent spinning delays it
// (small calls then take about twice as long). Open MPI makes the same switch (mpi_yield_when_idle)
// when it knows a node is oversubscribed.
//
// A rank's CPUs are its thread's affinity mask, capped by its cgroup's CPU
// quota (a container started with --cpus=2 still sees every host CPU in its
// mask). Each rank sends its share in the init-time allgather (rank_place.h);
// the node's CPUs are the union of its ranks' masks, capped by their largest
// quota (ranks of one node share a container, so they share its quota).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace weft {

struct CpuShare {
  static constexpr int kMaskWords = 16;  // CPU_SETSIZE (1024) bits
  uint64_t mask[kMaskWords];             // all zero: unknown (no limit assumed)
  int32_t quotaCpus;                     // the cgroup's quota in whole CPUs, rounded up; 0: none
  // 1 when a communicator of this process already found its node
  // oversubscribed: a communicator split from it has fewer ranks, but the
  // node still runs them all.
  int32_t oversubscribedSeen;
};

// This thread's share, and the process-wide "seen" flag.
CpuShare readCpuShare();

// Whole CPUs a cgroup quota allows, rounded up; 0 where there is none.
// v2 cpu.max: "max 100000" or "150000 100000"; v1: quota -1 (none) and a period.
int quotaCpusFromCpuMax(const std::string& cpuMax);
int quotaCpusFromV1(const std::string& quotaUs, const std::string& periodUs);

struct NodeCpus {
  int ranks = 0;  // ranks of our node in this communicator
  int cpus = 0;   // CPUs they may run on; 0: unknown
  bool oversubscribed = false;
};

// Judges the node of `me` from every rank's node id and share (same order).
// Oversubscribed: more ranks than known CPUs, or a rank of the node has seen it so.
NodeCpus judgeNodeCpus(const std::vector<uint64_t>& nodes, const std::vector<CpuShare>& shares,
                       int me);

// Remembers an oversubscribed verdict for this process (CpuShare::oversubscribedSeen).
void noteOversubscribed();

}  // namespace weft

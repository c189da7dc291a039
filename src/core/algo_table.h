// The selection table: every algorithm a host collective can run with, as a
// row {algorithm, kinds, applies}, in one place (algo_table.cc); the tuner
// costs the modelled rows, and runSelected runs the row picked.
//
// Selection: across nodes, an allreduce or allgather is modelled (the tuner
// predicts every row's time from the measured links): the rows that apply
// are filtered by WEFT_ALGO and the cheapest runs. Elsewhere (one node, or
// the other collectives) no model covers the rows, and the first row that
// applies in the table's order runs; the order is the measured preference
// (boards, then single copy, then the one-round and pipelined forms over the
// channels, each within its size limit). WEFT_DEBUG=INFO
// WEFT_DEBUG_SUBSYS=TUNING logs each choice and why, once per run of calls of
// one kind and size.
#pragma once

#include <cstddef>

#include "collectives/algo_id.h"
#include "collectives/tuner.h"
#include "core/call.h"
#include "weft/weft.h"

struct weftComm;

namespace weft {

struct AlgoPick {
  AlgoId id = AlgoId::kRing;
  AlgoChoice plan;  // chunk, streams and predicted time where modelled
  bool modelled = false;
  const char* why = "";  // "cheapest", "WEFT_ALGO", "first that applies"
};

// The algorithm `call` runs with on `comm` (bytes: per rank, as the API counts).
AlgoPick selectAlgo(const weftComm* comm, const Call& call, size_t bytes);

// Selects (logging the choice) and runs one collective.
weftResult_t runSelected(weftComm* comm, const Call& call, size_t bytes);

// The GPU ring's row, asked for a call on a CUDA stream made alone (not in a
// group; stream_call.cc): whether it runs as the GPU ring kernel
// (device/device_ring.h) rather than staged through host memory on the rows
// above. It applies when the ring is on and the call is an allreduce,
// reduce-scatter or reduce with a ring op (sum, prod, max, min), an
// allgather or a broadcast, of at least one element; WEFT_ALGO other than
// auto, ring (the ring on either executor) or gpu-ring filters it out.
bool selectGpuRing(const weftComm* comm, const Call& call);

// Limits of the one-round forms outside the model (one node, auto mode): a
// rank receives every peer's message, so their cost grows with (n-1) x the
// message, and they run while that stays within a limit (and the message
// within WEFT_ONESHOT_MAX). Allreduce also reduces what it receives, so its
// limit is lower. Over loopback TCP allreduce's one round beats the ring and
// the tree up to about 32 KiB at 3-4 ranks and 8 KiB at 8, and allgather's
// direct form beats the ring up to 32 KiB per rank at 4 ranks and 16 KiB at 8
// (docs/performance-history.md has the runs). At 2 ranks both forms move
// what the ring moves, and the limits cost nothing.
constexpr size_t kOneshotReceiveMax = 96 << 10;
constexpr size_t kDirectGatherReceiveMax = 128 << 10;

// One node without shared memory (WEFT_SHM_DISABLE=1, or segments that could
// not be mapped), auto mode: an allreduce past the one-round limit takes the
// double binary tree up to 64 KiB when there are 3 or more ranks, then the
// ring (measured over loopback TCP at 4 and 8 ranks; at 8 ranks and 128 KiB
// the ring wins). The tuner's link model comes from a
// two-rank probe and does not see ranks queueing for cores, so it is not
// asked here.
constexpr size_t kSingleNodeTreeMax = 64 << 10;
// Above this many ranks a small broadcast takes the binomial tree, not the
// root's n - 1 sends in one round, and a small allreduce on one node over the
// channels recursive doubling, not the one round.
constexpr int kDirectRanksMax = 8;

}  // namespace weft

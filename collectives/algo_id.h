// The algorithms weft runs collectives with: one enum for the tuner's model
// (tuner.h), the selection table (src/core/algo_table.h) and WEFT_ALGO (where
// kAuto means "let the table choose").
#pragma once

namespace weft {

enum class AlgoId {
  kAuto,        // WEFT_ALGO unset or "auto": no algorithm forced
  kBoard,       // one node, small calls: the shared-memory publication boards
  kSingleCopy,  // one node, larger calls: straight between the mapped user buffers
  kOneshot,     // one round over the channels: every rank sends its whole buffer to every peer
  kDirect,      // one round, rooted or gathering forms (allgather, broadcast, reduce, all-to-all)
  kRing,        // pipelined ring (allreduce: reduce-scatter then allgather)
  kChain,       // pipelined chain along the ring (broadcast, reduce)
  kTree,        // double binary tree
  kHierRing,    // inside each node, then a ring across nodes
  kHierTree,    // inside each node, then a tree across nodes
  kHierLeaf,    // inside each node, then rings inside each leaf and across leaves
  kRd,          // recursive doubling
  kRhd,         // recursive halving-doubling
  kGpuRing,     // a call on a CUDA stream, alone: the data-movement kernel over the GPU peer ring
  kCount
};

// "board", "single-copy", "oneshot", ... as WEFT_ALGO and the logs spell them.
const char* algoName(AlgoId id);

}  // namespace weft

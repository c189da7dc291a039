// The checks of mp_coll_full (reduce-scatter, broadcast, reduce, all-to-all,
// send/recv, barrier, groups, async forms, communicator split) and the single
// cases they share: the split test runs the same cases on sub-communicators,
// from several threads at once. Every case checks the whole result against a
// reference computed from the per-rank input formulas of mp_values.h, the
// guard bytes behind each output, and that inputs were not modified.
#pragma once

#include <weft/weft.h>

#include <cstddef>
#include <string>
#include <vector>

#include "mp_common.h"

namespace mp {

// The odd per-rank block count of reduce-scatter and all-to-all that goes
// with job.largeCount (their buffers hold nranks blocks).
size_t largeBlock(const Job& job);
// Roots 0, a middle rank and nranks-1, without duplicates.
std::vector<int> testRoots(int nranks);
// Logs "<what>: returned <result>: <last error>" when r is not weftSuccess.
bool callOk(const Job& job, Log& log, const std::string& what, weftResult_t r);

// How a broadcast is called: out of place (non-roots pass sendbuff = NULL),
// in place through weftBroadcast (sendbuff == recvbuff), or weftBcast. Once
// the call returns, the root scribbles over its data (after checking it),
// which breaks peers that still read it.
enum class BcastForm { kOutOfPlace, kInPlace, kBcast };

// Single cases. Each returns false only when the call itself failed (the
// communicator may then be broken and the caller stops); wrong results are
// logged and return true.
// scribble: overwrite the input as soon as the call returns (instead of
// checking that it is intact), which breaks peers that still read it.
bool reduceScatterCase(const Job& job, Log& log, weftDataType_t dt, weftRedOp_t op,
                       size_t recvcount, bool inPlace, bool scribble);
bool broadcastCase(const Job& job, Log& log, weftDataType_t dt, size_t count, int root,
                   BcastForm form);
// `expected` (the root's result) may be null: the case computes it.
bool reduceCase(const Job& job, Log& log, weftDataType_t dt, weftRedOp_t op, size_t count, int root,
                bool inPlace, const void* expected);
// Scribbles over the input on return when the offsets are not both 0.
bool allToAllCase(const Job& job, Log& log, weftDataType_t dt, size_t count, size_t sendOffset,
                  size_t recvOffset);
// One group with a bidirectional ring exchange (send to next and previous,
// receive from previous and next) of `count` elements.
bool ringGroupCase(const Job& job, Log& log, weftDataType_t dt, size_t count);
// `rounds` barriers (every `asyncEvery`-th through weftBarrierAsync): before
// each one, every rank leaves a marker file, the round's late rank first
// sleeps; after it, each rank checks that all markers are there.
bool barrierCase(const Job& job, Log& log, int rounds, int asyncEvery);

// The check groups, one file each. False when a call failed: the
// communicator may be broken, and the program skips the remaining groups.
bool checkReduceScatterFull(const Job& job, Log& log);
bool checkBroadcastFull(const Job& job, Log& log);
bool checkReduceFull(const Job& job, Log& log);
bool checkAllToAllFull(const Job& job, Log& log);
bool checkSendRecvFull(const Job& job, Log& log);
bool checkGroupsFull(const Job& job, Log& log);
bool checkAsyncFull(const Job& job, Log& log);
bool checkSplitFull(const Job& job, Log& log);

}  // namespace mp

// Which user buffers a call touches on this rank, and how a call on a stream
// is staged through pinned host memory: the regions it needs in a staging
// block, the copies in (device -> staging, before the collective) and out
// (staging -> device, after it), and the call rewritten onto the staging
// memory. The rewritten call always runs in place where the collective allows
// it, so that one region serves as both input and output.
#pragma once

#include <cstddef>
#include <vector>

#include "base/device_runtime.h"
#include "core/call.h"

namespace weft {

struct BufferUse {
  const char* name;  // "sendbuff" / "recvbuff", for error sentences
  const void* ptr;
  size_t bytes;
};

// The buffers `call` reads or writes on `rank` of `nranks` (none when count
// is 0); returns how many were written to out[].
int buffersOf(const Call& call, int rank, int nranks, BufferUse out[2]);
// The device of the first of call.buffers[0..n) that is device or managed
// memory, as validateCall classified them; -1 when none is (all pinned).
int deviceOfBuffers(const Call& call, int n);

struct StagedCopy {
  void* user;     // the caller's buffer (source of an input, target of an output)
  size_t offset;  // in the staging block
  size_t bytes;
};

struct StagedCall {
  Call call;            // what the progress thread runs
  bool staged = false;  // false: runs on the caller's pinned buffers as they are
  size_t sendOffset = 0, recvOffset = 0;
  bool copiesScalar = false;  // a weftScalarDevice op's scalar, copied to scalarOffset
  size_t scalarOffset = 0;
  std::vector<StagedCopy> in, out;
};

// Plans `call` at `*cursor` bytes into a staging block (advancing it).
// `allPinned`: every buffer of the call is pinned host memory (no staging).
void planCall(const Call& call, int rank, int nranks, bool allPinned, size_t* cursor,
              StagedCall* out);
// Points a staged call's buffers into the block's data at `base`.
void placeCall(StagedCall* sc, char* base);

}  // namespace weft

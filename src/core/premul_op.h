// Reduction ops a user creates (weftRedOpCreatePreMulSum): the communicator's
// table of live ops, and the step of validation that turns a call's op handle
// into kOpPreMulSum plus this rank's scalar. Handle numbers are local (ranks
// may create ops in different orders), so only kOpPreMulSum reaches the call
// header, and the scalar never leaves the rank.
#pragma once

#include <mutex>
#include <vector>

#include "weft/weft.h"

struct weftComm;

namespace weft {

struct Call;

struct UserRedOps {
  struct Entry {
    bool live = false;
    weftDataType_t datatype = weftFloat32;
    const void* read = nullptr;   // weftScalarDevice: read when a call runs
    unsigned char value[8] = {};  // weftScalarHostImmediate: read at creation
  };
  std::mutex mu;               // ops may be created on any thread
  std::vector<Entry> entries;  // handle = weftNumOps + index; freed slots reused
};

// For a reducing call whose op is not one of weftRedOp_t's named ops: the
// live op of `comm` it names, checked against the call's datatype and stream,
// becomes call->args.op = kOpPreMulSum and call->premul.
weftResult_t resolveUserOp(weftComm* comm, const char* fn, Call* call, weftStream_t stream);

}  // namespace weft

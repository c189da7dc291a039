// What this libweft was compiled with, as the library itself saw it (its own
// compile definitions, not the configure cache): weft-info prints it, and
// users can ask a running library instead of guessing from a build log.
#pragma once

#include <string>

namespace weft {

struct BuildInfo {
  bool verbs = false;  // the InfiniBand/RoCE transport (rdma-core was found)
  bool cuda = false;   // calls on CUDA streams and the GPU ring kernel
};

BuildInfo buildInfo();

// "shm tcp verbs": the transports this build can use, in preference order.
std::string transportsBuilt();

}  // namespace weft

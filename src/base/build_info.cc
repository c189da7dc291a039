// Compiled with the library's own feature definitions (WEFT_HAVE_*), so the
// answer is the build's, whatever the caller was compiled with.
#include "base/build_info.h"

namespace weft {

BuildInfo buildInfo() {
  BuildInfo info;
#ifdef WEFT_HAVE_VERBS
  info.verbs = true;
#endif
#ifdef WEFT_HAVE_CUDA
  info.cuda = true;
#endif
  return info;
}

std::string transportsBuilt() {
  // Shared memory and TCP are always built; verbs only with rdma-core.
  std::string names = "shm";
  if (buildInfo().verbs) names += " verbs";
  names += " tcp";
  return names;
}

}  // namespace weft

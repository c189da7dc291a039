// Names of the algorithms (algo_id.h).
#include "collectives/algo_id.h"

namespace weft {

const char* algoName(AlgoId id) {
  static const char* const kNames[] = {"auto",      "board", "single-copy", "oneshot", "direct",
                                       "ring",      "chain", "tree",        "hier",    "hier-tree",
                                       "hier-leaf", "rd",    "rhd",         "gpu-ring"};
  static_assert(sizeof(kNames) / sizeof(kNames[0]) == static_cast<int>(AlgoId::kCount),
                "one name per algorithm");
  const int i = static_cast<int>(id);
  return i >= 0 && i < static_cast<int>(AlgoId::kCount) ? kNames[i] : "?";
}

}  // namespace weft

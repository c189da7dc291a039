// Node identity: which ranks share a machine (and so can use shared memory).
// A node is hostname + boot id + network namespace + PID namespace:
//  - emulated hosts in separate network namespaces count as separate nodes;
//  - so do ranks in separate PID namespaces (containers started with host
//    networking but their own PIDs, e.g. `docker run --net=host`, or the
//    containers of a Kubernetes pod): shared memory reaches a peer through
//    /proc/<its pid>, and there its pid means another process or none. Both
//    ranks of a pair once took pid 1 for the other's and each mapped its own
//    segment: a hang until WEFT_TIMEOUT.
// WEFT_HOSTID overrides it. Never derived from LOCAL_WORLD_SIZE or launcher hints.
#pragma once

#include <cstdint>
#include <string>

namespace weft {

// The text the id is made from (for logs): "host/bootid/net:[4026531840]/pid:[4026531836]".
std::string nodeIdentityText();
// A 64-bit hash of nodeIdentityText().
uint64_t nodeIdentityHash();

}  // namespace weft

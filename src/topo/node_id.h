// Node identity: which ranks share a machine (and so can use shared memory).
// A node is hostname + boot id + network namespace, so that emulated hosts in
// separate namespaces of one machine count as separate nodes; WEFT_HOSTID
// overrides it. Never derived from LOCAL_WORLD_SIZE or launcher hints.
#pragma once

#include <cstdint>
#include <string>

namespace weft {

// The text the id is made from (for logs): "host/bootid/net:[4026531840]".
std::string nodeIdentityText();
// A 64-bit hash of nodeIdentityText().
uint64_t nodeIdentityHash();

}  // namespace weft

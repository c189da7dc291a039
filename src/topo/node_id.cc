// Node identity (see node_id.h).
#include "topo/node_id.h"

#include <unistd.h>

#include <fstream>

#include "bootstrap/wire.h"
#include "core/config.h"

namespace weft {

std::string nodeIdentityText() {
  std::string forced = configString("WEFT_HOSTID");
  if (!forced.empty()) return "hostid:" + forced;
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  std::string boot;
  std::ifstream("/proc/sys/kernel/random/boot_id") >> boot;
  char ns[128] = {0};
  ssize_t n = readlink("/proc/self/ns/net", ns, sizeof(ns) - 1);
  if (n < 0) ns[0] = '\0';
  return std::string(host) + "/" + boot + "/" + ns;
}

uint64_t nodeIdentityHash() {
  std::string text = nodeIdentityText();
  return fnv1a(text.data(), text.size());
}

}  // namespace weft

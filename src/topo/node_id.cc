// Node identity (see node_id.h).
#include "topo/node_id.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "base/config.h"
#include "bootstrap/wire.h"

namespace weft {
namespace {

// "net:[4026531840]"; empty where /proc does not say.
std::string namespaceLink(const char* kind) {
  char path[64], link[128] = {0};
  std::snprintf(path, sizeof(path), "/proc/self/ns/%s", kind);
  ssize_t n = readlink(path, link, sizeof(link) - 1);
  return n > 0 ? std::string(link, static_cast<size_t>(n)) : std::string();
}

}  // namespace

std::string nodeIdentityText() {
  std::string forced = configString("WEFT_HOSTID");
  if (!forced.empty()) return "hostid:" + forced;
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  std::string boot;
  std::ifstream("/proc/sys/kernel/random/boot_id") >> boot;
  std::string text =
      std::string(host) + "/" + boot + "/" + namespaceLink("net") + "/" + namespaceLink("pid");
  // A /proc mounted for another PID namespace numbers processes otherwise
  // than getpid() does, so no peer could be found through it: this rank is
  // a node of its own.
  char self[32] = {0};
  if (readlink("/proc/self", self, sizeof(self) - 1) > 0 && std::atol(self) != getpid())
    text += "/proc-of-another-pid-namespace:" + std::to_string(getpid()) + "@" + self;
  return text;
}

uint64_t nodeIdentityHash() {
  std::string text = nodeIdentityText();
  return fnv1a(text.data(), text.size());
}

}  // namespace weft

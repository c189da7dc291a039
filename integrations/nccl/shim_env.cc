// NCCL_* environment variables that have a weft equivalent, translated into
// weft's when the drop-in is loaded (before weft reads any knob). A WEFT_*
// variable that is set wins. One row per variable; docs/nccl.md prints the
// same table for users.
#include <cstdlib>
#include <cstring>
#include <string>

#include "shim.h"

namespace {

// The value for weft, or "" when `value` has no weft equivalent.
using Translate = std::string (*)(const std::string& value);

std::string same(const std::string& v) { return v; }

std::string debugLevel(const std::string& v) {
  if (v == "VERSION" || v == "ABORT") return "WARN";
  if (v == "WARN" || v == "INFO" || v == "TRACE" || v == "NONE") return v;
  return "";
}

// NCCL's subsystem names folded onto weft's (INIT, BOOTSTRAP, NET, COLL, TUNING).
std::string debugSubsys(const std::string& v) {
  if (v.empty() || v[0] == '^') return "";
  std::string out;
  size_t pos = 0;
  while (pos <= v.size()) {
    size_t comma = v.find(',', pos);
    if (comma == std::string::npos) comma = v.size();
    std::string name = v.substr(pos, comma - pos);
    pos = comma + 1;
    if (name == "P2P" || name == "SHM" || name == "PROXY" || name == "REG") name = "NET";
    if (name == "GRAPH" || name == "ENV" || name == "ALLOC") name = "INIT";
    if (name == "CALL") name = "COLL";
    if (name != "INIT" && name != "BOOTSTRAP" && name != "NET" && name != "COLL" &&
        name != "TUNING" && name != "ALL")
      continue;
    if (out.find(name) == std::string::npos) out += (out.empty() ? "" : ",") + name;
  }
  return out;
}

// One algorithm by name; NCCL's lists and exclusions have no weft form.
std::string algo(const std::string& v) {
  if (strcasecmp(v.c_str(), "Ring") == 0) return "ring";
  if (strcasecmp(v.c_str(), "Tree") == 0) return "tree";
  return "";
}

std::string gdrLevel(const std::string& v) {
  for (const char* name : {"PIX", "PXB", "PHB", "SYS"})
    if (v == name) return v;
  return "";
}

struct EnvRow {
  const char* nccl;
  const char* weft;
  Translate translate;
};

const EnvRow kEnvRows[] = {
    {"NCCL_DEBUG", "WEFT_DEBUG", debugLevel},
    {"NCCL_DEBUG_SUBSYS", "WEFT_DEBUG_SUBSYS", debugSubsys},
    {"NCCL_DEBUG_FILE", "WEFT_DEBUG_FILE", same},
    {"NCCL_SOCKET_IFNAME", "WEFT_SOCKET_IFNAME", same},
    {"NCCL_SOCKET_FAMILY", "WEFT_SOCKET_FAMILY", same},
    {"NCCL_ALGO", "WEFT_ALGO", algo},
    {"NCCL_SHM_DISABLE", "WEFT_SHM_DISABLE", same},
    {"NCCL_NET_GDR_LEVEL", "WEFT_NET_GDR_LEVEL", gdrLevel},
    {"NCCL_IB_HCA", "WEFT_IB_HCA", same},
    {"NCCL_IB_DISABLE", "WEFT_IB_DISABLE", same},
    {"NCCL_IB_GID_INDEX", "WEFT_IB_GID_INDEX", same},
    {"NCCL_IB_TC", "WEFT_IB_TC", same},
    {"NCCL_IB_SL", "WEFT_IB_SL", same},
    {"NCCL_IB_TIMEOUT", "WEFT_IB_TIMEOUT", same},
    {"NCCL_IB_RETRY_CNT", "WEFT_IB_RETRY_CNT", same},
    {"NCCL_IB_QPS_PER_CONNECTION", "WEFT_IB_QPS_PER_CONNECTION", same},
    {"NCCL_MAX_CTAS", "WEFT_MAX_CTAS", same},
    {"NCCL_MAX_NCHANNELS", "WEFT_MAX_CTAS", same},
    {"NCCL_NTHREADS", "WEFT_NTHREADS", same},
    {"NCCL_TOPO_FILE", "WEFT_TOPO_FILE", same},
    {"NCCL_HOSTID", "WEFT_HOSTID", same},
};

// Runs when libnccl.so.2 is loaded: weft reads its knobs later, at first use.
__attribute__((constructor)) void translateNcclEnvironment() {
  for (const EnvRow& row : kEnvRows) {
    const char* value = getenv(row.nccl);
    if (value == nullptr || getenv(row.weft) != nullptr) continue;
    const std::string translated = row.translate(value);
    if (!translated.empty()) setenv(row.weft, translated.c_str(), 0);
  }
}

}  // namespace

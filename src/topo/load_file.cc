// Reads a topology file, tells its format from the root element (<topology>:
// hwloc XML, <system>: NCCL/RCCL) and refuses files that cannot answer the
// GPU-to-NIC question: unreadable, not XML, an unknown root, or no GPU.
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "base/error.h"
#include "topo/loaders.h"
#include "topo/xml_reader.h"

namespace weft::topo {
namespace {

// Real topology files are well under a megabyte; anything this big is a mistake.
constexpr off_t kMaxFileBytes = 64 << 20;

weftResult_t readWholeFile(const std::string& path, std::string* text) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    return setError(weftSystemError, "cannot read topology file %s: %s", path.c_str(),
                    std::strerror(errno));
  }
  if (!S_ISREG(st.st_mode)) {
    return setError(weftInvalidArgument, "topology file %s is not a regular file", path.c_str());
  }
  if (st.st_size > kMaxFileBytes) {
    return setError(weftInvalidArgument,
                    "topology file %s is %lld bytes, too large to be a topology file", path.c_str(),
                    static_cast<long long>(st.st_size));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return setError(weftSystemError, "cannot read topology file %s: %s", path.c_str(),
                    std::strerror(errno));
  }
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad())
    return setError(weftSystemError, "error while reading topology file %s", path.c_str());
  *text = buf.str();
  return weftSuccess;
}

}  // namespace

weftResult_t loadTopologyFile(const std::string& path, Machine* out) {
  std::string text;
  WEFT_CHECK(readWholeFile(path, &text));
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) {
    return setError(weftInvalidArgument, "topology file %s is empty", path.c_str());
  }
  XmlElement root;
  std::string error;
  if (!sniffRootElement(text, &root, &error)) {
    return setError(weftInvalidArgument, "topology file %s is not XML: %s", path.c_str(),
                    error.c_str());
  }
  Machine m;
  if (root.name == "topology") {
    WEFT_CHECK(loadHwlocXml(path, text, &m));
  } else if (root.name == "system") {
    WEFT_CHECK(loadNcclXml(path, text, &m));
  } else {
    return setError(
        weftInvalidArgument,
        "topology file %s starts with <%s>: expected <topology> (hwloc XML) or <system> "
        "(NCCL/RCCL topology)",
        path.c_str(), root.name.c_str());
  }
  if (m.gpus.empty()) {
    return setError(weftInvalidArgument,
                    "topology file %s (%s) describes no GPU: %zu PCI nodes, none with a GPU class "
                    "(03xx/1200) from NVIDIA or AMD, so there is nothing to map to a NIC",
                    path.c_str(), m.format.c_str(), m.pci.size());
  }
  *out = std::move(m);
  return weftSuccess;
}

}  // namespace weft::topo

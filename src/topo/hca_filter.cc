// WEFT_IB_HCA parsing and matching (see hca_filter.h).
#include "topo/hca_filter.h"

#include <algorithm>
#include <cstdlib>

#include "topo/pci.h"

namespace weft::topo {
namespace {

bool allOf(const std::string& s, const char* chars) {
  return !s.empty() && s.find_first_not_of(chars) == std::string::npos;
}

// "mlx5_0:1" is device mlx5_0, port 1. NICs without an RDMA name are named by
// bus id, whose colons are not port separators: "0000:12" is a bus-id
// prefix, while "0000:12:00.0:1" is port 1 of that bus id.
bool isPortSuffix(const std::string& name, const std::string& port) {
  if (!allOf(port, "0123456789") || std::atoi(port.c_str()) <= 0) return false;
  PciAddress addr;
  if (parseBusId(name, &addr)) return true;
  return name.find(':') == std::string::npos && !allOf(name, "0123456789abcdefABCDEF");
}

}  // namespace

HcaFilter::HcaFilter(const std::string& spec) : spec_(spec) {
  std::string rest = spec;
  if (!rest.empty() && rest[0] == '^') exclude_ = true, rest.erase(0, 1);
  if (!rest.empty() && rest[0] == '=') exact_ = true, rest.erase(0, 1);
  size_t pos = 0;
  while (pos <= rest.size()) {
    size_t comma = rest.find(',', pos);
    std::string token =
        rest.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    // Leading/trailing blanks are a typing accident, not part of a device name.
    size_t first = token.find_first_not_of(" \t");
    size_t last = token.find_last_not_of(" \t");
    token = first == std::string::npos ? "" : token.substr(first, last - first + 1);
    if (!token.empty()) {
      Entry entry;
      entry.name = token;
      size_t colon = token.rfind(':');
      if (colon != std::string::npos &&
          isPortSuffix(token.substr(0, colon), token.substr(colon + 1))) {
        entry.name = token.substr(0, colon);
        entry.port = std::atoi(token.c_str() + colon + 1);
      }
      if (!entry.name.empty()) entries_.push_back(entry);
    }
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
}

bool HcaFilter::allows(const std::string& name, const std::vector<int>& ports) const {
  if (entries_.empty()) return true;
  bool hit = false;
  for (const Entry& e : entries_) {
    bool nameMatches = exact_ ? name == e.name : name.compare(0, e.name.size(), e.name) == 0;
    bool portMatches =
        e.port < 0 || ports.empty() || std::find(ports.begin(), ports.end(), e.port) != ports.end();
    if (nameMatches && portMatches) hit = true;
  }
  return exclude_ ? !hit : hit;
}

}  // namespace weft::topo

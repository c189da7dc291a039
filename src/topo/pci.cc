// PCI bus ids, device classification and link bandwidth (see pci.h).
#include "topo/pci.h"

#include <cstdio>
#include <cstdlib>
#include <tuple>

namespace weft::topo {
namespace {

constexpr int kVendorNvidia = 0x10de;
constexpr int kVendorAmd = 0x1002;
constexpr int kVendorAmazon = 0x1d0f;
constexpr int kVendorCray = 0x17db;  // HPE Slingshot (Cassini) NICs

// Parses exactly `maxDigits` or fewer hex digits from text[pos...] up to `stop`.
bool parseHexField(const std::string& text, size_t* pos, char stop, size_t maxDigits,
                   uint32_t* out) {
  size_t start = *pos;
  uint32_t value = 0;
  while (*pos < text.size() && text[*pos] != stop) {
    char c = text[*pos];
    int digit;
    if (c >= '0' && c <= '9')
      digit = c - '0';
    else if (c >= 'a' && c <= 'f')
      digit = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F')
      digit = c - 'A' + 10;
    else
      return false;
    value = value * 16 + static_cast<uint32_t>(digit);
    ++*pos;
    if (*pos - start > maxDigits) return false;
  }
  if (*pos == start) return false;
  *out = value;
  return true;
}

}  // namespace

bool parseBusId(const std::string& text, PciAddress* out) {
  // Count the colons to know whether a domain is present.
  size_t colons = 0;
  for (char c : text) colons += c == ':';
  if (colons != 1 && colons != 2) return false;
  PciAddress addr;
  size_t pos = 0;
  if (colons == 2) {
    if (!parseHexField(text, &pos, ':', 8, &addr.domain)) return false;
    ++pos;
  }
  if (!parseHexField(text, &pos, ':', 2, &addr.bus) || pos >= text.size()) return false;
  ++pos;
  if (!parseHexField(text, &pos, '.', 2, &addr.dev) || pos >= text.size()) return false;
  ++pos;
  if (!parseHexField(text, &pos, '\0', 1, &addr.fn) || pos != text.size()) return false;
  if (addr.dev > 0x1f || addr.fn > 7) return false;
  *out = addr;
  return true;
}

std::string formatBusId(const PciAddress& addr) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%04x:%02x:%02x.%x", addr.domain, addr.bus, addr.dev, addr.fn);
  return buf;
}

bool busIdLess(const PciAddress& a, const PciAddress& b) {
  return std::tie(a.domain, a.bus, a.dev, a.fn) < std::tie(b.domain, b.bus, b.dev, b.fn);
}

bool sameAdapter(const PciAddress& a, const PciAddress& b) {
  return a.domain == b.domain && a.bus == b.bus && a.dev == b.dev;
}

const char* nicKindName(NicKind kind) {
  switch (kind) {
    case NicKind::kNone:
      return "none";
    case NicKind::kEthernet:
      return "Ethernet";
    case NicKind::kInfiniBand:
      return "InfiniBand";
    case NicKind::kRoce:
      return "RoCE";
    case NicKind::kEfa:
      return "EFA";
    case NicKind::kSlingshot:
      return "Slingshot";
    case NicKind::kRdmaOther:
      return "RDMA";
  }
  return "?";
}

bool isRdma(NicKind kind) { return kind != NicKind::kNone && kind != NicKind::kEthernet; }

NicKind classifyNic(uint32_t classId, int vendor, int device, bool hasVerbsDevice) {
  // 0207 is InfiniBand; old ConnectX-2 cards report IB as serial-bus class 0c06.
  if (classId == 0x0207 || classId == 0x0c06) return NicKind::kInfiniBand;
  if ((classId >> 8) != 0x02) return NicKind::kNone;
  if (vendor == kVendorAmazon && device >= 0 && (device & 0xfff0) == 0xefa0) return NicKind::kEfa;
  if (vendor == kVendorCray) return NicKind::kSlingshot;
  if (hasVerbsDevice) return classId == 0x0200 ? NicKind::kRoce : NicKind::kRdmaOther;
  return NicKind::kEthernet;
}

bool looksLikeGpu(uint32_t classId, int vendor, int device) {
  bool gpuClass = (classId >> 8) == 0x03 || classId == 0x1200;
  if (!gpuClass) return false;
  if (vendor < 0) return true;  // no vendor in the file: the class is all there is
  if (vendor == kVendorNvidia) return true;
  if (vendor == kVendorAmd) return device < 0 || device >= 0x6000;
  return false;
}

double pcieLinkGBps(double gigaTransfers, int width) {
  if (gigaTransfers <= 0 || width <= 0) return 0;
  double encoding = gigaTransfers <= 5.0 ? 8.0 / 10.0 : 128.0 / 130.0;
  return gigaTransfers * width * encoding / 8.0;
}

double parseGigaTransfers(const std::string& text) {
  const char* begin = text.c_str();
  char* end = nullptr;
  double value = std::strtod(begin, &end);
  if (end == begin || value <= 0) return 0;
  return value;
}

}  // namespace weft::topo

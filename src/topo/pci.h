// PCI facts the topology code needs: bus ids (parse, print, order), what a
// device is from its class/vendor/device ids (GPU, RDMA NIC, Ethernet port),
// and link bandwidth from a PCIe speed and width. Pure functions, no hwloc.
#pragma once

#include <cstdint>
#include <string>

namespace weft::topo {

struct PciAddress {
  uint32_t domain = 0;
  uint32_t bus = 0;
  uint32_t dev = 0;
  uint32_t fn = 0;
};

// Accepts "0000:07:00.0", CUDA's "00000000:07:00.0" and the domain-less
// "07:00.0"; hex digits in either case. False on anything else.
bool parseBusId(const std::string& text, PciAddress* out);
// Canonical lower-case form "dddd:bb:dd.f" (a domain above 0xffff keeps all its digits).
std::string formatBusId(const PciAddress& addr);
// Bus order: domain, bus, device, function.
bool busIdLess(const PciAddress& a, const PciAddress& b);
// The same physical adapter: everything but the function number matches.
bool sameAdapter(const PciAddress& a, const PciAddress& b);

// What kind of network device a PCI function is. Only the RDMA kinds are
// candidates for a GPU's NIC; Ethernet ports are kept for TCP and display.
enum class NicKind { kNone, kEthernet, kInfiniBand, kRoce, kEfa, kSlingshot, kRdmaOther };
const char* nicKindName(NicKind kind);
bool isRdma(NicKind kind);

// vendor/device are -1 when the file does not say (Azure's static NCCL files).
// `hasVerbsDevice`: the OS exposes an RDMA (OpenFabrics/verbs) device on it.
NicKind classifyNic(uint32_t classId, int vendor, int device, bool hasVerbsDevice);

// A GPU by PCI class (display 03xx or processing accelerator 1200) and vendor
// (NVIDIA, AMD). Onboard BMC graphics is not: other vendors (ASPEED, Matrox) and
// AMD's legacy display ids below 0x6000 (Rage XL, ES1000/RN50) are left out.
bool looksLikeGpu(uint32_t classId, int vendor, int device);

// GB/s of a PCIe link from its transfer rate in GT/s and lane count, after the
// line encoding (8b/10b up to 5 GT/s, 128b/130b from 8 GT/s). 0 when unknown.
double pcieLinkGBps(double gigaTransfers, int width);
// Parses NCCL's link_speed text ("16 GT/s", "16.0 GT/s PCIe"); 0 when empty or unknown.
double parseGigaTransfers(const std::string& text);

}  // namespace weft::topo

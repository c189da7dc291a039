// weft-topo: prints the machine as weft sees it (GPUs, NICs, path classes,
// each GPU's NIC and why, GDR decisions, CPU/NUMA affinity). Reads the live
// machine, WEFT_TOPO_FILE, or --file F (hwloc XML or NCCL/RCCL topology XML).
// Exit status: 0 printed, 1 the topology could not be used (reason on stderr),
// 2 bad command line.
#include <cstdio>
#include <cstring>
#include <string>

#include "base/error.h"
#include "tools/weft_topo.h"

namespace {

void usage(FILE* out) {
  std::fprintf(
      out,
      "usage: weft-topo [--file FILE] [--json]\n"
      "  --file FILE  read an hwloc XML or NCCL/RCCL topology file instead of this machine\n"
      "               (default: $WEFT_TOPO_FILE, else live discovery)\n"
      "  --json       machine-readable output\n"
      "Honours WEFT_NET_GDR_LEVEL and WEFT_IB_HCA like the library does.\n");
}

}  // namespace

int main(int argc, char** argv) {
  std::string file;
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--json") == 0) {
      json = true;
    } else if (std::strcmp(argv[i], "--file") == 0 || std::strcmp(argv[i], "-f") == 0) {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "weft-topo: %s needs a file name\n", argv[i]);
        return 2;
      }
      file = argv[++i];
    } else if (std::strncmp(argv[i], "--file=", 7) == 0) {
      file = argv[i] + 7;
    } else if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      usage(stdout);
      return 0;
    } else {
      std::fprintf(stderr, "weft-topo: unknown argument %s\n", argv[i]);
      usage(stderr);
      return 2;
    }
  }
  if (argc > 1 && file.empty() && std::strncmp(argv[argc - 1], "--file", 6) == 0) {
    std::fprintf(stderr, "weft-topo: --file needs a file name\n");
    return 2;
  }
  weft::topo::Topology topo;
  if (weft::topo::loadTopology(file, &topo) != weftSuccess) {
    std::fprintf(stderr, "weft-topo: %s\n", weft::lastError().c_str());
    return 1;
  }
  if (json)
    weft::topo::printJsonReport(topo, stdout);
  else
    weft::topo::printHumanReport(topo, stdout);
  return 0;
}

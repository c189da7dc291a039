// Where a Machine comes from: the live system through hwloc, an hwloc XML
// file, or an NCCL/RCCL topology file. Each loader fills a Machine or returns
// an error with a sentence (setError) naming the file and what is wrong.
#pragma once

#include <string>

#include "topo/machine.h"
#include "weft/weft.h"

namespace weft::topo {

// The machine this process runs on (hwloc discovery with PCI devices,
// bridges and OS devices kept). No GPU or no NIC is not an error here.
weftResult_t loadLive(Machine* out);

// Reads a topology file of either format (told apart by its root element)
// and checks that it is usable: a file that cannot be read or parsed, or that
// yields no GPU, is an error. `text` is the file's content.
weftResult_t loadTopologyFile(const std::string& path, Machine* out);

// The format-specific halves, for a file already read into memory.
weftResult_t loadHwlocXml(const std::string& path, const std::string& text, Machine* out);
weftResult_t loadNcclXml(const std::string& path, const std::string& text, Machine* out);

}  // namespace weft::topo

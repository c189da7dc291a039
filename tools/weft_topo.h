// weft-topo's two views of a loaded topology: the human report (a matrix like
// `nvidia-smi topo -m`, then each GPU's NIC with the reason, GDR and CPU
// affinity) and the JSON document for scripts.
#pragma once

#include <cstdio>

#include "topo/topology.h"

namespace weft::topo {

void printHumanReport(const Topology& topo, FILE* out);
void printJsonReport(const Topology& topo, FILE* out);

// Path class text between any two devices of the matrix ("X" for itself).
// Each device is given as (PCI node index or -1, locality).
const char* matrixCell(const Machine& m, int pciA, int locA, int pciB, int locB);

}  // namespace weft::topo

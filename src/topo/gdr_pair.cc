// GPUDirect RDMA for one GPU-NIC pair (gdr_pair.h).
#include "topo/gdr_pair.h"

#include "topo/paths.h"

namespace weft::topo {

GdrChoice gdrForPair(const Topology* topo, const std::string& topoWhyNot, const std::string& gpu,
                     const std::string& nic) {
  GdrChoice out;
  if (topo == nullptr) {
    out.reason = "off: no topology (" + topoWhyNot + ")";
    return out;
  }
  const Machine& m = topo->machine;
  const int g = gpu.empty() ? -1 : findGpu(m, gpu);
  const int n = findNicByName(m, nic);
  if (g < 0) {
    out.reason =
        "off: GPU " + (gpu.empty() ? std::string("(unnamed)") : gpu) + " is not in the topology";
    return out;
  }
  if (n < 0) {
    out.reason = "off: NIC " + nic + " is not in the topology";
    return out;
  }
  const PathInfo path =
      gpuNicPath(m, m.gpus[static_cast<size_t>(g)], m.nics[static_cast<size_t>(n)]);
  const std::string cls = pathClassName(path.cls);
  const std::string level = pathClassName(topo->options.gdrLevel);
  if (!m.gpus[static_cast<size_t>(g)].gdrCapable) {
    out.reason = "off: the topology file marks GPU " + gpu + " gdr=0";
  } else if (!m.nics[static_cast<size_t>(n)].gdrCapable) {
    out.reason = "off: the topology file marks NIC " + nic + " gdr=0";
  } else if (path.cls <= topo->options.gdrLevel) {
    out.on = true;
    out.reason =
        "on: GPU " + gpu + " and " + nic + " are " + cls + ", within WEFT_NET_GDR_LEVEL=" + level;
  } else {
    out.reason = "off: GPU " + gpu + " and " + nic + " are " + cls +
                 ", farther than WEFT_NET_GDR_LEVEL=" + level;
  }
  return out;
}

}  // namespace weft::topo

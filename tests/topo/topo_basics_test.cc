// The pure pieces: PCI bus ids, device classification, link bandwidth, path
// class names, the WEFT_IB_HCA filter syntax, and the live-machine helpers
// (verbs device -> PCI via sysfs, thread binding, GPU lookup), node identity.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <string>

#include "topo/hca_filter.h"
#include "topo/node_id.h"
#include "topo/pci.h"
#include "topo_test_util.h"

namespace weft::testing {
namespace {

using namespace weft::topo;

TEST(TopoBasics, BusIds) {
  PciAddress a;
  ASSERT_TRUE(parseBusId("0000:07:00.0", &a));
  EXPECT_EQ(formatBusId(a), "0000:07:00.0");
  ASSERT_TRUE(parseBusId("00000000:3B:1F.7", &a));  // CUDA's 8-digit domain, upper case
  EXPECT_EQ(formatBusId(a), "0000:3b:1f.7");
  ASSERT_TRUE(parseBusId("c4:00.1", &a));
  EXPECT_EQ(formatBusId(a), "0000:c4:00.1");
  ASSERT_TRUE(parseBusId("10000:01:00.0", &a));
  EXPECT_EQ(formatBusId(a), "10000:01:00.0");
  for (const char* bad : {"", "0000:07:00", "0000:07:00.8", "0000:07:20.0", "zz:00.0",
                          "0000:07:00.0x", "1:2:3:4.0"}) {
    EXPECT_FALSE(parseBusId(bad, &a)) << bad;
  }
  PciAddress b;
  parseBusId("0000:07:00.1", &b);
  parseBusId("0000:07:00.0", &a);
  EXPECT_TRUE(busIdLess(a, b));
  EXPECT_TRUE(sameAdapter(a, b));
}

TEST(TopoBasics, Classification) {
  EXPECT_TRUE(looksLikeGpu(0x0302, 0x10de, 0x20b0));
  EXPECT_TRUE(looksLikeGpu(0x1200, 0x1002, 0x74a0));   // MI300A
  EXPECT_TRUE(looksLikeGpu(0x0380, 0x1002, 0x67a0));   // FirePro
  EXPECT_TRUE(looksLikeGpu(0x0302, -1, -1));           // Azure files: class only
  EXPECT_FALSE(looksLikeGpu(0x0300, 0x1002, 0x515e));  // ES1000 BMC graphics
  EXPECT_FALSE(looksLikeGpu(0x0300, 0x1a03, 0x2000));  // ASPEED
  EXPECT_FALSE(looksLikeGpu(0x0200, 0x10de, 0x1234));
  EXPECT_EQ(classifyNic(0x0207, 0x15b3, 0x101b, false), NicKind::kInfiniBand);
  EXPECT_EQ(classifyNic(0x0c06, 0x15b3, 0x6746, false), NicKind::kInfiniBand);  // ConnectX-2
  EXPECT_EQ(classifyNic(0x0200, 0x1d0f, 0xefa0, false), NicKind::kEfa);
  EXPECT_EQ(classifyNic(0x0200, 0x1d0f, 0xec20, false), NicKind::kEthernet);  // ENA
  EXPECT_EQ(classifyNic(0x0200, 0x17db, 0x0501, false), NicKind::kSlingshot);
  EXPECT_EQ(classifyNic(0x0200, 0x15b3, 0x1015, true), NicKind::kRoce);
  EXPECT_EQ(classifyNic(0x0200, 0x8086, 0x1521, false), NicKind::kEthernet);
  EXPECT_EQ(classifyNic(0x0108, 0x144d, 0xa808, false), NicKind::kNone);
  EXPECT_FALSE(isRdma(NicKind::kEthernet));
  EXPECT_TRUE(isRdma(NicKind::kEfa));
}

TEST(TopoBasics, LinkBandwidth) {
  EXPECT_NEAR(pcieLinkGBps(8, 16), 15.75, 0.01);
  EXPECT_NEAR(pcieLinkGBps(2.5, 1), 0.25, 0.001);
  EXPECT_NEAR(pcieLinkGBps(parseGigaTransfers("32.0 GT/s PCIe"), 16), 63.0, 0.05);
  EXPECT_EQ(pcieLinkGBps(parseGigaTransfers(""), 16), 0);
  EXPECT_EQ(pcieLinkGBps(16, 0), 0);
}

TEST(TopoBasics, PathClassNames) {
  PathClass c;
  ASSERT_TRUE(parsePathClass("node", &c));
  EXPECT_EQ(c, PathClass::kNODE);
  ASSERT_TRUE(parsePathClass("2", &c));
  EXPECT_EQ(c, PathClass::kPXB);
  ASSERT_TRUE(parsePathClass("pkg", &c));
  EXPECT_EQ(c, PathClass::kPKG);
  ASSERT_TRUE(parsePathClass("6", &c));
  EXPECT_EQ(c, PathClass::kSYS);
  EXPECT_FALSE(parsePathClass("LOC", &c));
  EXPECT_FALSE(parsePathClass("7", &c));
  EXPECT_STREQ(pathClassName(PathClass::kSYS), "SYS");
  // Nearest first: the order GDR levels and NIC ranking compare in.
  EXPECT_LT(PathClass::kNODE, PathClass::kPKG);
  EXPECT_LT(PathClass::kPKG, PathClass::kSYS);
}

TEST(TopoBasics, HcaFilterSyntax) {
  std::vector<int> port1{1}, unknown;
  EXPECT_TRUE(HcaFilter("").allows("anything", unknown));
  HcaFilter prefix("mlx5");
  EXPECT_TRUE(prefix.allows("mlx5_10", port1));
  EXPECT_FALSE(prefix.allows("hsi0", port1));
  HcaFilter exact("=mlx5_1");
  EXPECT_TRUE(exact.allows("mlx5_1", port1));
  EXPECT_FALSE(exact.allows("mlx5_10", port1));
  HcaFilter exclude("^mlx5_1");
  EXPECT_FALSE(exclude.allows("mlx5_10", port1));  // prefix exclusion
  EXPECT_TRUE(exclude.allows("mlx5_2", port1));
  HcaFilter excludeExact("^=mlx5_1");
  EXPECT_TRUE(excludeExact.allows("mlx5_10", port1));
  EXPECT_FALSE(excludeExact.allows("mlx5_1", port1));
  HcaFilter ports("mlx5_0:2, mlx5_1:1");
  EXPECT_FALSE(ports.allows("mlx5_0", port1));
  EXPECT_TRUE(ports.allows("mlx5_0", std::vector<int>{1, 2}));
  EXPECT_TRUE(ports.allows("mlx5_1", port1));
  EXPECT_TRUE(ports.allows("mlx5_0", unknown));  // ports unknown: cannot be told apart
  // NICs named by bus id: colons belong to the name unless a full bus id precedes a port.
  EXPECT_FALSE(HcaFilter("^0000:12").allows("0000:12:00.0", unknown));
  EXPECT_TRUE(HcaFilter("^0000:12").allows("0000:14:00.0", unknown));
  EXPECT_TRUE(HcaFilter("=0000:12:00.0:1").allows("0000:12:00.0", port1));
  EXPECT_FALSE(HcaFilter("=0000:12:00.0:2").allows("0000:12:00.0", port1));
}

TEST(TopoBasics, VerbsDeviceToPciThroughSysfs) {
  char root[] = "/tmp/weft_sysfs_XXXXXX";
  ASSERT_NE(mkdtemp(root), nullptr);
  std::string base = root;
  std::string devDir = base + "/devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0";
  ASSERT_EQ(std::system(("mkdir -p " + devDir + " " + base + "/class/infiniband/mlx5_9").c_str()),
            0);
  ASSERT_EQ(symlink(devDir.c_str(), (base + "/class/infiniband/mlx5_9/device").c_str()), 0);
  EXPECT_EQ(verbsDeviceBusId("mlx5_9", base), "0000:3b:00.0");
  EXPECT_EQ(verbsDeviceBusId("mlx5_8", base), "");
  EXPECT_EQ(verbsDeviceBusId("../x", base), "");
  int cleaned = std::system(("rm -rf " + base).c_str());
  EXPECT_EQ(cleaned, 0);
}

TEST(TopoBasics, FindGpuByBusIdOrOsDevice) {
  std::string io = hostBridge(pciBridge("0000:00:01.0", nvidiaGpu("0000:07:00.0", 15.75, "cuda0")) +
                              pciBridge("0000:00:02.0", nvidiaGpu("0000:08:00.0", 15.75, "cuda1")));
  Topology t;
  ASSERT_EQ(loadXml(hwlocMachine({io}), &t), weftSuccess) << lastError();
  EXPECT_EQ(findGpu(t.machine, "00000000:08:00.0"), 1);
  EXPECT_EQ(findGpu(t.machine, "cuda0"), 0);
  EXPECT_EQ(findGpu(t.machine, "0000:09:00.0"), -1);
  EXPECT_EQ(t.machine.gpus[0].label, "cuda0");
}

TEST(TopoBasics, BindThread) {
  cpu_set_t before;
  ASSERT_EQ(pthread_getaffinity_np(pthread_self(), sizeof(before), &before), 0);
  int first = -1;
  for (int c = 0; c < CPU_SETSIZE && first < 0; ++c) {
    if (CPU_ISSET(c, &before)) first = c;
  }
  ASSERT_GE(first, 0);
  EXPECT_EQ(bindCurrentThreadToCpus(std::to_string(first)), weftSuccess) << lastError();
  EXPECT_NE(bindCurrentThreadToCpus("3-1"), weftSuccess);
  EXPECT_NE(bindCurrentThreadToCpus("abc"), weftSuccess);
  pthread_setaffinity_np(pthread_self(), sizeof(before), &before);
}

TEST(TopoBasics, LiveMachineLoads) {
  // This machine may have no GPU and no RDMA NIC; loading must still work.
  Topology t;
  ASSERT_EQ(topo::loadLive(&t.machine), weftSuccess) << lastError();
  EXPECT_EQ(t.machine.source, "live");
  // Every PCI device hangs off some CPU locality.
  if (!t.machine.pci.empty()) {
    EXPECT_FALSE(t.machine.localities.empty());
  }
  std::vector<GpuNic> nics = chooseNics(t.machine, SelectOptions());
  EXPECT_EQ(nics.size(), t.machine.gpus.size());
}

// Which ranks count as one node: ranks in other network or PID namespaces
// must not (their /proc/<pid> is not ours; see topo/node_id.h).
TEST(NodeIdentity, NamesNetworkAndPidNamespaces) {
  unsetenv("WEFT_HOSTID");
  const std::string text = nodeIdentityText();
  char link[128] = {0};
  if (readlink("/proc/self/ns/pid", link, sizeof(link) - 1) <= 0)
    GTEST_SKIP() << "no /proc/self/ns";
  EXPECT_NE(text.find(std::string("/") + link), std::string::npos) << text;
  EXPECT_NE(text.find("/net:["), std::string::npos) << text;
  EXPECT_EQ(text.find("proc-of-another-pid-namespace"), std::string::npos) << text;
  EXPECT_EQ(nodeIdentityHash(), nodeIdentityHash());
  setenv("WEFT_HOSTID", "rack7-node3", 1);
  EXPECT_EQ(nodeIdentityText(), "hostid:rack7-node3");
  unsetenv("WEFT_HOSTID");
}

}  // namespace
}  // namespace weft::testing

// NIC choice rules on hand-written NCCL-format trees: ties spread evenly and
// deterministically, the most constrained GPU chooses first, a GPU leaves
// another GPU's only near adapter alone unless it must share, dual-port
// adapters are spread by adapter, WEFT_IB_HCA and WEFT_NET_GDR_LEVEL apply,
// and NCCL's bridge-node rule gives PIX/PXB.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>

#include "topo_test_util.h"

namespace weft::testing {
namespace {

using topo::Topology;

// Clears the knobs this file sets, before and after each test.
class TopoSelect : public ::testing::Test {
 protected:
  void SetUp() override { clearEnv(); }
  void TearDown() override { clearEnv(); }
  static void clearEnv() {
    unsetenv("WEFT_IB_HCA");
    unsetenv("WEFT_NET_GDR_LEVEL");
    unsetenv("WEFT_TOPO_FILE");
  }
};

// Two GPUs and two NICs under one switch: a 2-way tie for both GPUs.
const char* kTwoByTwo = R"(<system version="1">
  <cpu numaid="0" affinity="0000ffff" arch="x86_64" vendor="GenuineIntel">
    <pci busid="0000:10:00.0" class="0x060400" link_speed="16 GT/s" link_width="16">
      <pci busid="0000:12:00.0" class="0x020700" link_speed="16 GT/s" link_width="16"/>
      <pci busid="0000:11:00.0" class="0x030200" link_speed="16 GT/s" link_width="16"/>
      <pci busid="0000:13:00.0" class="0x030200" link_speed="16 GT/s" link_width="16"/>
      <pci busid="0000:14:00.0" class="0x020700" link_speed="16 GT/s" link_width="16"/>
    </pci>
  </cpu>
</system>)";

TEST_F(TopoSelect, TiedGpusSpreadOverTiedNicsInBusOrder) {
  Topology t;
  ASSERT_EQ(loadXml(kTwoByTwo, &t), weftSuccess) << lastError();
  EXPECT_EQ(nicOf(t, "0000:11:00.0"), "0000:12:00.0");
  EXPECT_EQ(nicOf(t, "0000:13:00.0"), "0000:14:00.0");
  EXPECT_EQ(pathOf(t, "0000:11:00.0"), "PIX");
  EXPECT_EQ(t.gpuNics[0].tied.size(), 2u);
  // Deterministic: loading again gives the same answer.
  Topology again;
  ASSERT_EQ(loadXml(kTwoByTwo, &again), weftSuccess);
  EXPECT_EQ(again.gpuNics[0].nic, t.gpuNics[0].nic);
  EXPECT_EQ(again.gpuNics[1].nic, t.gpuNics[1].nic);
}

TEST_F(TopoSelect, FourGpusOverTwoNicsTakeTwoEach) {
  const char* xml = R"(<system version="1"><cpu numaid="0" affinity="ff">
    <pci busid="0000:10:00.0" class="0x060400">
      <pci busid="0000:11:00.0" class="0x030200"/><pci busid="0000:12:00.0" class="0x030200"/>
      <pci busid="0000:13:00.0" class="0x030200"/><pci busid="0000:14:00.0" class="0x030200"/>
      <pci busid="0000:15:00.0" class="0x020700"/><pci busid="0000:16:00.0" class="0x020700"/>
    </pci></cpu></system>)";
  Topology t;
  ASSERT_EQ(loadXml(xml, &t), weftSuccess) << lastError();
  std::map<std::string, int> use;
  for (const auto& c : t.gpuNics) ++use[t.machine.nics[c.nic].name];
  EXPECT_EQ(use["0000:15:00.0"], 2);
  EXPECT_EQ(use["0000:16:00.0"], 2);
}

TEST_F(TopoSelect, MostConstrainedGpuChoosesFirst) {
  // GPU 01 (directly under the CPU) ties NIC 12 and NIC 21 at PHB; GPU 11
  // shares a switch with NIC 12 only. Bus order alone would put both on 12.
  const char* xml = R"(<system version="1"><cpu numaid="0" affinity="ff">
    <pci busid="0000:01:00.0" class="0x030200"/>
    <pci busid="0000:10:00.0" class="0x060400">
      <pci busid="0000:11:00.0" class="0x030200"/><pci busid="0000:12:00.0" class="0x020700"/>
    </pci>
    <pci busid="0000:20:00.0" class="0x060400"><pci busid="0000:21:00.0" class="0x020700"/></pci>
  </cpu></system>)";
  Topology t;
  ASSERT_EQ(loadXml(xml, &t), weftSuccess) << lastError();
  EXPECT_EQ(nicOf(t, "0000:11:00.0"), "0000:12:00.0");
  EXPECT_EQ(nicOf(t, "0000:01:00.0"), "0000:21:00.0");
  EXPECT_EQ(pathOf(t, "0000:01:00.0"), "PHB");
}

TEST_F(TopoSelect, GpuWhoseNearNicsAreAllNeededElsewhereShares) {
  // GPU 11 has only NIC 12 near (its bridge), GPU 21 only NIC 22; GPU 01,
  // directly under the CPU, is PHB to both, so it has to share one: both are
  // used once, bus order picks 12.
  const char* xml = R"(<system version="1"><cpu numaid="0" affinity="ff">
    <pci busid="0000:01:00.0" class="0x030200"/>
    <pci busid="0000:10:00.0" class="0x060400">
      <pci busid="0000:11:00.0" class="0x030200"/><pci busid="0000:12:00.0" class="0x020700"/></pci>
    <pci busid="0000:20:00.0" class="0x060400">
      <pci busid="0000:21:00.0" class="0x030200"/><pci busid="0000:22:00.0" class="0x020700"/></pci>
  </cpu></system>)";
  Topology t;
  ASSERT_EQ(loadXml(xml, &t), weftSuccess) << lastError();
  EXPECT_EQ(nicOf(t, "0000:11:00.0"), "0000:12:00.0");
  EXPECT_EQ(nicOf(t, "0000:21:00.0"), "0000:22:00.0");
  EXPECT_EQ(nicOf(t, "0000:01:00.0"), "0000:12:00.0");
  EXPECT_NE(t.gpuNics[0].reason.find("shared"), std::string::npos) << t.gpuNics[0].reason;
}

TEST_F(TopoSelect, OnlyNearAdapterKeepsBothItsPorts) {
  // GPU 11's only near adapter is the dual-port NIC 12 (mlx5_0, mlx5_1). GPU
  // 01 is PHB to it and to the x8 NIC 02 (mlx5_2): it takes mlx5_2, though
  // the dual-port adapter is faster and GPU 11 only needs one of its ports.
  const char* xml = R"(<system version="1"><cpu numaid="0" affinity="ff">
    <pci busid="0000:01:00.0" class="0x030200" link_speed="16 GT/s" link_width="16"/>
    <pci busid="0000:02:00.0" class="0x020000" vendor="0x15b3" link_speed="16 GT/s" link_width="8">
      <nic><net name="mlx5_2" port="1" guid="0x2" gdr="1"/></nic></pci>
    <pci busid="0000:10:00.0" class="0x060400" link_speed="16 GT/s" link_width="16">
      <pci busid="0000:11:00.0" class="0x030200" link_speed="16 GT/s" link_width="16"/>
      <pci busid="0000:12:00.0" class="0x020000" vendor="0x15b3" link_speed="16 GT/s" link_width="16">
        <nic><net name="mlx5_0" port="1" guid="0x1" gdr="1"/><net name="mlx5_1" port="2" guid="0x1" gdr="1"/></nic></pci>
    </pci></cpu></system>)";
  Topology t;
  ASSERT_EQ(loadXml(xml, &t), weftSuccess) << lastError();
  EXPECT_EQ(nicOf(t, "0000:11:00.0"), "mlx5_0");
  EXPECT_EQ(nicOf(t, "0000:01:00.0"), "mlx5_2");
  EXPECT_EQ(pathOf(t, "0000:01:00.0"), "PHB");
}

TEST_F(TopoSelect, DualPortAdaptersSpreadByAdapterFirst) {
  // Two GPUs tie over two dual-port NICs (4 ports): each GPU gets its own adapter.
  const char* xml = R"(<system version="1"><cpu numaid="0" affinity="ff">
    <pci busid="0000:10:00.0" class="0x060400">
      <pci busid="0000:11:00.0" class="0x030200"><gpu dev="0" gdr="1"/></pci>
      <pci busid="0000:12:00.0" class="0x030200"><gpu dev="1" gdr="1"/></pci>
      <pci busid="0000:13:00.0" class="0x020000" vendor="0x15b3"><nic>
        <net name="mlx5_0" port="1" guid="0x1" gdr="1"/><net name="mlx5_1" port="2" guid="0x1" gdr="1"/></nic></pci>
      <pci busid="0000:14:00.0" class="0x020000" vendor="0x15b3"><nic>
        <net name="mlx5_2" port="1" guid="0x2" gdr="1"/><net name="mlx5_3" port="2" guid="0x2" gdr="1"/></nic></pci>
    </pci></cpu></system>)";
  Topology t;
  ASSERT_EQ(loadXml(xml, &t), weftSuccess) << lastError();
  EXPECT_EQ(nicOf(t, "0000:11:00.0"), "mlx5_0");
  EXPECT_EQ(nicOf(t, "0000:12:00.0"), "mlx5_2");
  EXPECT_EQ(t.gpuNics[0].tied.size(), 4u);
  EXPECT_EQ(t.machine.gpus[1].label, "dev 1");
}

TEST_F(TopoSelect, NcclRuleOneBridgeNodeIsPixMoreIsPxb) {
  // Upstream port -> two downstream ports: three bridge nodes, PXB by NCCL's rule.
  const char* xml = R"(<system version="1"><cpu numaid="0" affinity="ff">
    <pci busid="0000:08:00.0" class="0x060400">
      <pci busid="0000:0d:00.0" class="0x060400"><pci busid="0000:0f:00.0" class="0x030200"/></pci>
      <pci busid="0000:0a:00.0" class="0x060400"><pci busid="0000:0c:00.0" class="0x020700"/></pci>
    </pci></cpu></system>)";
  Topology t;
  ASSERT_EQ(loadXml(xml, &t), weftSuccess) << lastError();
  EXPECT_EQ(pathOf(t, "0000:0f:00.0"), "PXB");
  EXPECT_EQ(t.gpuNics[0].path.bridges, 3);
  EXPECT_TRUE(t.gpuNics[0].gdr);
}

TEST_F(TopoSelect, IbHcaFilterRemovesNics) {
  setenv("WEFT_IB_HCA", "^0000:12", 1);
  Topology t;
  ASSERT_EQ(loadXml(kTwoByTwo, &t), weftSuccess) << lastError();
  EXPECT_EQ(nicOf(t, "0000:11:00.0"), "0000:14:00.0");
  EXPECT_EQ(nicOf(t, "0000:13:00.0"), "0000:14:00.0");
  setenv("WEFT_IB_HCA", "=nothing_here", 1);
  ASSERT_EQ(loadXml(kTwoByTwo, &t), weftSuccess) << lastError();
  EXPECT_EQ(nicOf(t, "0000:11:00.0"), "none");
  EXPECT_NE(t.gpuNics[0].reason.find("WEFT_IB_HCA"), std::string::npos) << t.gpuNics[0].reason;
}

TEST_F(TopoSelect, GdrLevelDecidesPerPair) {
  // GPU 01 reaches NIC 02 through the CPU only: PHB.
  const char* xml = R"(<system version="1"><cpu numaid="0" affinity="ff">
    <pci busid="0000:01:00.0" class="0x030200"/><pci busid="0000:02:00.0" class="0x020700"/>
  </cpu></system>)";
  Topology t;
  ASSERT_EQ(loadXml(xml, &t), weftSuccess) << lastError();
  EXPECT_FALSE(t.gpuNics[0].gdr);
  EXPECT_NE(t.gpuNics[0].gdrReason.find("farther than WEFT_NET_GDR_LEVEL=PXB"), std::string::npos);
  setenv("WEFT_NET_GDR_LEVEL", "phb", 1);
  ASSERT_EQ(loadXml(xml, &t), weftSuccess) << lastError();
  EXPECT_TRUE(t.gpuNics[0].gdr) << t.gpuNics[0].gdrReason;
  setenv("WEFT_NET_GDR_LEVEL", "1", 1);  // numbers are accepted: 1 = PIX
  ASSERT_EQ(loadXml(xml, &t), weftSuccess) << lastError();
  EXPECT_FALSE(t.gpuNics[0].gdr);
  setenv("WEFT_NET_GDR_LEVEL", "bogus", 1);
  std::string warning;
  topo::SelectOptions options = topo::selectOptionsFromConfig(&warning);
  EXPECT_EQ(options.gdrLevel, topo::PathClass::kPXB);
  EXPECT_NE(warning.find("bogus"), std::string::npos);
}

TEST_F(TopoSelect, FileSaysNoGdr) {
  const char* xml = R"(<system version="1"><cpu numaid="0" affinity="ff">
    <pci busid="0000:10:00.0" class="0x060400">
      <pci busid="0000:11:00.0" class="0x030200"><gpu dev="0" gdr="0"/></pci>
      <pci busid="0000:12:00.0" class="0x020700"/>
    </pci></cpu></system>)";
  Topology t;
  ASSERT_EQ(loadXml(xml, &t), weftSuccess) << lastError();
  EXPECT_EQ(pathOf(t, "0000:11:00.0"), "PIX");
  EXPECT_FALSE(t.gpuNics[0].gdr);
}

TEST_F(TopoSelect, SocketNetWithoutPciIsNotRdmaAndCpusDecideSys) {
  const char* xml = R"(<system version="1">
    <cpu numaid="0" affinity="0000000f"><pci busid="0001:00:00.0" class="0x030200" link_speed=""/>
      <nic><net name="eth0" dev="0" port="0" guid="0x0" gdr="0"/></nic></cpu>
    <cpu numaid="1" affinity="000000f0"><pci busid="0002:00:00.0" class="0x030200"/>
      <pci busid="0101:00:00.0" class="0x020700"/></cpu>
  </system>)";
  Topology t;
  ASSERT_EQ(loadXml(xml, &t), weftSuccess) << lastError();
  EXPECT_EQ(nicOf(t, "0001:00:00.0"), "0101:00:00.0");
  EXPECT_EQ(pathOf(t, "0001:00:00.0"), "SYS");
  EXPECT_EQ(pathOf(t, "0002:00:00.0"), "PHB");
  int eth = topo::findNicByName(t.machine, "eth0");
  ASSERT_GE(eth, 0);
  EXPECT_EQ(t.machine.nics[eth].kind, topo::NicKind::kEthernet);
  const topo::Locality* loc = topo::gpuLocality(t.machine, 1);
  ASSERT_NE(loc, nullptr);
  EXPECT_EQ(loc->cpus, "4-7");
  EXPECT_EQ(loc->numaNodes, std::vector<int>{1});
}

TEST_F(TopoSelect, RingOrderKeepsSwitchNeighboursTogether) {
  const char* xml = R"(<system version="1"><cpu numaid="0" affinity="ff">
    <pci busid="0000:10:00.0" class="0x060400">
      <pci busid="0000:11:00.0" class="0x030200"/><pci busid="0000:40:00.0" class="0x030200"/></pci>
    <pci busid="0000:20:00.0" class="0x060400">
      <pci busid="0000:21:00.0" class="0x030200"/><pci busid="0000:30:00.0" class="0x030200"/></pci>
  </cpu></system>)";
  Topology t;
  ASSERT_EQ(loadXml(xml, &t), weftSuccess) << lastError();
  // Bus order: 11, 21, 30, 40 -> GPU0..3. Switch 10 holds GPU0 and GPU3.
  std::vector<int> ring = topo::ringOrder(t.machine);
  ASSERT_EQ(ring.size(), 4u);
  EXPECT_EQ(ring, (std::vector<int>{0, 3, 1, 2}));
}

}  // namespace
}  // namespace weft::testing

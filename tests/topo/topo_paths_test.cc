// Path classes on small hand-written hwloc trees: one switch (PIX), a
// two-level switch (PXB), one host bridge (PHB), one NUMA node (NODE), two
// sockets (SYS); hop counts breaking ties inside a switch tree; class
// ranked before bandwidth; Ethernet ports never chosen.
#include <gtest/gtest.h>

#include "topo_test_util.h"

namespace weft::testing {
namespace {

using topo::Topology;

// Package 0: host bridge A { root port 00:01.0 { switch 01:00.0 { 02:00.0 { GPU 03:00.0 },
// 02:01.0 { mlx5_0 04:00.0 } } }, root port 00:02.0 { mlx5_1 05:00.0 } }, host bridge B
// { root port 10:01.0 { mlx5_2 11:00.0 } }. Package 1: host bridge { root port 80:01.0 { mlx5_3
// 81:00.0 } }.
std::string fiveClassMachine(const std::string& extraInSwitch = "") {
  std::string sw =
      pciBridge("0000:01:00.0",
                pciBridge("0000:02:00.0", nvidiaGpu("0000:03:00.0", 15.753846, "cuda0")) +
                    pciBridge("0000:02:01.0", ibNic("0000:04:00.0", "mlx5_0")) + extraInSwitch);
  std::string pkg0 = hostBridge(pciBridge("0000:00:01.0", sw, 15.753846, "8086:2030") +
                                pciBridge("0000:00:02.0", ibNic("0000:05:00.0", "mlx5_1"),
                                          15.753846, "8086:2030")) +
                     hostBridge(pciBridge("0000:10:01.0", ibNic("0000:11:00.0", "mlx5_2"),
                                          15.753846, "8086:2030"));
  std::string pkg1 = hostBridge(
      pciBridge("0000:80:01.0", ibNic("0000:81:00.0", "mlx5_3"), 15.753846, "8086:2030"));
  return hwlocMachine({pkg0, pkg1});
}

const char* classBetween(const Topology& t, const std::string& gpuBusId,
                         const std::string& nicName) {
  int g = topo::findGpu(t.machine, gpuBusId);
  int n = topo::findNicByName(t.machine, nicName);
  if (g < 0 || n < 0) return "missing";
  return topo::pathClassName(topo::gpuNicPath(t.machine, t.machine.gpus[g], t.machine.nics[n]).cls);
}

TEST(TopoPaths, EachClassOnOneHwlocTree) {
  Topology t;
  ASSERT_EQ(loadXml(fiveClassMachine(), &t), weftSuccess) << lastError();
  ASSERT_EQ(t.machine.gpus.size(), 1u);
  EXPECT_STREQ(classBetween(t, "0000:03:00.0", "mlx5_0"), "PIX");
  EXPECT_STREQ(classBetween(t, "0000:03:00.0", "mlx5_1"), "PHB");
  EXPECT_STREQ(classBetween(t, "0000:03:00.0", "mlx5_2"), "NODE");
  EXPECT_STREQ(classBetween(t, "0000:03:00.0", "mlx5_3"), "SYS");
  EXPECT_EQ(nicOf(t, "0000:03:00.0"), "mlx5_0");
  EXPECT_TRUE(t.gpuNics[0].gdr) << t.gpuNics[0].gdrReason;
}

TEST(TopoPaths, TwoLevelSwitchIsPxbAndHopsBreakTheTie) {
  // Root port { US 01:00.0 { DS 02:00.0 { sub-switch US 03:00.0 { DS 04:00.0 { GPU-side bridge
  // 05:00.0 { GPU 06:00.0 } }, DS 04:01.0 { mlx5_0 07:00.0 } } }, DS 02:01.0 { sub-switch
  // 08:00.0 { DS 09:00.0 { mlx5_1 0a:00.0 } } } } }: both NICs PXB, mlx5_0 fewer bridges.
  std::string subA =
      pciBridge("0000:03:00.0",
                pciBridge("0000:04:00.0", pciBridge("0000:05:00.0", nvidiaGpu("0000:06:00.0"))) +
                    pciBridge("0000:04:01.0", ibNic("0000:07:00.0", "mlx5_0")));
  std::string subB =
      pciBridge("0000:08:00.0", pciBridge("0000:09:00.0", ibNic("0000:0a:00.0", "mlx5_1")));
  std::string tree = pciBridge(
      "0000:00:01.0",
      pciBridge("0000:01:00.0", pciBridge("0000:02:00.0", subA) + pciBridge("0000:02:01.0", subB)));
  Topology t;
  ASSERT_EQ(loadXml(hwlocMachine({hostBridge(tree)}), &t), weftSuccess) << lastError();
  EXPECT_STREQ(classBetween(t, "0000:06:00.0", "mlx5_0"), "PXB");
  EXPECT_STREQ(classBetween(t, "0000:06:00.0", "mlx5_1"), "PXB");
  EXPECT_EQ(nicOf(t, "0000:06:00.0"), "mlx5_0");
  EXPECT_EQ(t.gpuNics[0].tied.size(), 1u);
  EXPECT_NE(t.gpuNics[0].reason.find("fewest bridges"), std::string::npos) << t.gpuNics[0].reason;
}

TEST(TopoPaths, BridgeCountDoesNotSplitTiesBeyondTheHostBridge) {
  // Two GPUs in a switch on root port 00:01.0; mlx5_0 directly on root port
  // 00:02.0, mlx5_1 behind a switch on 00:03.0. Both PHB: the extra bridges on
  // mlx5_1's side cost nothing, so the GPUs spread over both NICs.
  std::string gpus =
      pciBridge("0000:01:00.0", pciBridge("0000:02:00.0", nvidiaGpu("0000:03:00.0")) +
                                    pciBridge("0000:02:01.0", nvidiaGpu("0000:04:00.0")));
  std::string far =
      pciBridge("0000:20:00.0", pciBridge("0000:21:00.0", ibNic("0000:22:00.0", "mlx5_1")));
  std::string io = hostBridge(pciBridge("0000:00:01.0", gpus) +
                              pciBridge("0000:00:02.0", ibNic("0000:10:00.0", "mlx5_0")) +
                              pciBridge("0000:00:03.0", far));
  Topology t;
  ASSERT_EQ(loadXml(hwlocMachine({io}), &t), weftSuccess) << lastError();
  EXPECT_EQ(pathOf(t, "0000:03:00.0"), "PHB");
  EXPECT_EQ(t.gpuNics[0].tied.size(), 2u);
  EXPECT_EQ(nicOf(t, "0000:03:00.0"), "mlx5_0");
  EXPECT_EQ(nicOf(t, "0000:04:00.0"), "mlx5_1");
}

TEST(TopoPaths, CloserClassBeatsHigherBandwidth) {
  // mlx5_0 shares the GPU's switch but has a x4 Gen3 link (3.9 GB/s); mlx5_1 is
  // behind the host bridge on x16 (15.8 GB/s): class is ranked first, and the
  // reason names the faster NIC that lost.
  std::string sw =
      pciBridge("0000:01:00.0",
                pciBridge("0000:02:00.0", nvidiaGpu("0000:03:00.0")) +
                    pciBridge("0000:02:01.0", ibNic("0000:04:00.0", "mlx5_0", 3.938462), 3.938462));
  std::string io = hostBridge(pciBridge("0000:00:01.0", sw) +
                              pciBridge("0000:00:02.0", ibNic("0000:05:00.0", "mlx5_1")));
  Topology t;
  ASSERT_EQ(loadXml(hwlocMachine({io}), &t), weftSuccess) << lastError();
  EXPECT_EQ(nicOf(t, "0000:03:00.0"), "mlx5_0");
  EXPECT_EQ(pathOf(t, "0000:03:00.0"), "PIX");
  EXPECT_TRUE(t.gpuNics[0].gdr);
  EXPECT_NE(t.gpuNics[0].reason.find("nearer than the faster mlx5_1 (PHB"), std::string::npos)
      << t.gpuNics[0].reason;
}

TEST(TopoPaths, BandwidthDecidesWithinOneClass) {
  // Both NICs on their own root port of the GPU's host bridge (PHB): the x16
  // one wins over the x4 one.
  std::string io =
      hostBridge(pciBridge("0000:00:01.0", nvidiaGpu("0000:03:00.0")) +
                 pciBridge("0000:00:02.0", ibNic("0000:04:00.0", "mlx5_0", 3.938462), 3.938462) +
                 pciBridge("0000:00:03.0", ibNic("0000:05:00.0", "mlx5_1")));
  Topology t;
  ASSERT_EQ(loadXml(hwlocMachine({io}), &t), weftSuccess) << lastError();
  EXPECT_EQ(nicOf(t, "0000:03:00.0"), "mlx5_1");
  EXPECT_EQ(pathOf(t, "0000:03:00.0"), "PHB");
  EXPECT_NE(t.gpuNics[0].reason.find("highest bandwidth among the 2 PHB NICs"), std::string::npos)
      << t.gpuNics[0].reason;
}

TEST(TopoPaths, NearlyEqualBandwidthStillGoesByClass) {
  // 31.0 vs 31.5 GB/s is rounding noise in dumps, not a reason to leave the switch.
  std::string sw =
      pciBridge("0000:01:00.0",
                pciBridge("0000:02:00.0", nvidiaGpu("0000:03:00.0", 31.5)) +
                    pciBridge("0000:02:01.0", ibNic("0000:04:00.0", "mlx5_0", 31.0), 31.0),
                31.5);
  std::string io =
      hostBridge(pciBridge("0000:00:01.0", sw, 31.5) +
                 pciBridge("0000:00:02.0", ibNic("0000:05:00.0", "mlx5_1", 31.5), 31.5));
  Topology t;
  ASSERT_EQ(loadXml(hwlocMachine({io}), &t), weftSuccess) << lastError();
  EXPECT_EQ(nicOf(t, "0000:03:00.0"), "mlx5_0");
  EXPECT_EQ(pathOf(t, "0000:03:00.0"), "PIX");
}

TEST(TopoPaths, EthernetPortInTheSwitchIsNeverTheRdmaNic) {
  std::string eth = pciBridge("0000:02:02.0", ethernetPort("0000:09:00.0", "eno1"));
  Topology t;
  // Remove mlx5_0 from the switch: only the I350-like port is near, mlx5_1 is PHB.
  std::string sw =
      pciBridge("0000:01:00.0", pciBridge("0000:02:00.0", nvidiaGpu("0000:03:00.0")) + eth);
  std::string io = hostBridge(pciBridge("0000:00:01.0", sw) +
                              pciBridge("0000:00:02.0", ibNic("0000:05:00.0", "mlx5_1")));
  ASSERT_EQ(loadXml(hwlocMachine({io}), &t), weftSuccess) << lastError();
  EXPECT_EQ(nicOf(t, "0000:03:00.0"), "mlx5_1");
  int eno1 = topo::findNicByName(t.machine, "eno1");
  ASSERT_GE(eno1, 0);
  EXPECT_EQ(t.machine.nics[eno1].kind, topo::NicKind::kEthernet);
}

TEST(TopoPaths, UnknownLinkSpeedsFallBackToClass) {
  // hwloc 1.x files often carry no link speed at all.
  std::string sw = pciBridge("0000:01:00.0",
                             pciBridge("0000:02:00.0", nvidiaGpu("0000:03:00.0", 0), 0) +
                                 pciBridge("0000:02:01.0", ibNic("0000:04:00.0", "mlx5_0", 0), 0),
                             0);
  std::string io = hostBridge(pciBridge("0000:00:01.0", sw, 0) +
                              pciBridge("0000:00:02.0", ibNic("0000:05:00.0", "mlx5_1"), 0));
  Topology t;
  ASSERT_EQ(loadXml(hwlocMachine({io}), &t), weftSuccess) << lastError();
  EXPECT_EQ(nicOf(t, "0000:03:00.0"), "mlx5_0");
}

}  // namespace
}  // namespace weft::testing

// NIC choice on the hand-made machines of tests/topo/cases (README.md there):
// path class before bandwidth, NODE / PKG / SYS told apart, a GPU never
// taking the NIC another GPU has as its only near one (also when that rule
// has to be applied again), and the ring order's switch claim only where
// GPUs share a switch.
#include <gtest/gtest.h>

#include <cstdlib>

#include "topo_test_util.h"

namespace weft::testing {
namespace {

using topo::Topology;

class TopoNicCases : public ::testing::Test {
 protected:
  void SetUp() override {
    unsetenv("WEFT_IB_HCA");
    unsetenv("WEFT_NET_GDR_LEVEL");
    unsetenv("WEFT_TOPO_FILE");
  }
  // Loads cases/NAME; the answers are for default settings.
  void load(const char* name) {
    ASSERT_EQ(topo::loadTopology(std::string(WEFT_TOPO_CASES_DIR) + "/" + name, &t), weftSuccess)
        << lastError();
  }
  std::string reasonOf(const std::string& busId) const {
    const int g = topo::findGpu(t.machine, busId);
    return g < 0 ? "no such GPU" : t.gpuNics[g].reason;
  }
  bool gdrOf(const std::string& busId) const {
    const int g = topo::findGpu(t.machine, busId);
    return g >= 0 && t.gpuNics[g].gdr;
  }
  std::string classBetween(const std::string& busId, const std::string& nicName) const {
    const int g = topo::findGpu(t.machine, busId);
    const int n = topo::findNicByName(t.machine, nicName);
    if (g < 0 || n < 0) return "missing";
    return topo::pathClassName(
        topo::gpuNicPath(t.machine, t.machine.gpus[g], t.machine.nics[n]).cls);
  }
  Topology t;
};

// (a) Each GPU shares a switch with one HCA; GPU 03's is Gen4 (31.5 GB/s),
// the other socket's is Gen5 (63 GB/s). Ranking bandwidth first sent both
// GPUs to mlx5_1 across the sockets, without GDR, and left mlx5_0 idle.
TEST_F(TopoNicCases, SwitchNeighbourBeatsFasterNicAcrossTheSockets) {
  load("near-slow-nic-far-fast-nic.hwloc.xml");
  EXPECT_EQ(nicOf(t, "0000:03:00.0"), "mlx5_0");
  EXPECT_EQ(pathOf(t, "0000:03:00.0"), "PIX");
  EXPECT_TRUE(gdrOf("0000:03:00.0"));
  EXPECT_NE(reasonOf("0000:03:00.0").find("nearer than the faster mlx5_1 (SYS, 63.0 GB/s"),
            std::string::npos)
      << reasonOf("0000:03:00.0");
  EXPECT_EQ(nicOf(t, "0000:83:00.0"), "mlx5_1");
  EXPECT_EQ(pathOf(t, "0000:83:00.0"), "PIX");
  EXPECT_TRUE(gdrOf("0000:83:00.0"));
}

// (b) Two packages of two NUMA nodes each; mlx5_0 on NUMA 0, mlx5_1 on NUMA 3.
TEST_F(TopoNicCases, NumaNodeThenPackageThenOtherPackage) {
  load("numa-node-vs-package.hwloc.xml");
  EXPECT_EQ(classBetween("0000:03:00.0", "mlx5_0"), "PIX");
  EXPECT_EQ(classBetween("0000:11:00.0", "mlx5_0"), "NODE");  // other host bridge, NUMA 0
  EXPECT_EQ(classBetween("0000:43:00.0", "mlx5_0"), "PKG");   // NUMA 1, same package
  EXPECT_EQ(classBetween("0000:43:00.0", "mlx5_1"), "SYS");   // the other package
  EXPECT_EQ(classBetween("0000:83:00.0", "mlx5_1"), "PKG");
  EXPECT_EQ(classBetween("0000:83:00.0", "mlx5_0"), "SYS");
  // Counted as SYS, both NICs would tie for GPU 43 and 83 and one of them
  // would cross the sockets; each takes its own package's NIC, with no tie.
  EXPECT_EQ(nicOf(t, "0000:43:00.0"), "mlx5_0");
  EXPECT_EQ(pathOf(t, "0000:43:00.0"), "PKG");
  EXPECT_EQ(nicOf(t, "0000:83:00.0"), "mlx5_1");
  EXPECT_EQ(pathOf(t, "0000:83:00.0"), "PKG");
  EXPECT_EQ(t.gpuNics[topo::findGpu(t.machine, "0000:43:00.0")].tied.size(), 1u);
  EXPECT_EQ(nicOf(t, "0000:05:00.0"), "mlx5_0");
  EXPECT_EQ(nicOf(t, "0000:c4:00.0"), "mlx5_1");
  // GDR follows the chosen pair's class: PKG is beyond the default PXB, within PKG.
  EXPECT_FALSE(gdrOf("0000:43:00.0"));
  setenv("WEFT_NET_GDR_LEVEL", "PKG", 1);
  load("numa-node-vs-package.hwloc.xml");
  unsetenv("WEFT_NET_GDR_LEVEL");
  EXPECT_TRUE(gdrOf("0000:43:00.0"));
  EXPECT_TRUE(gdrOf("0000:11:00.0"));
}

// (c) mlx5_0 is GPU 03's only near NIC (its switch); GPU 07 is PHB to both
// NICs and would rather have mlx5_0 for its bandwidth.
TEST_F(TopoNicCases, OnlyNearNicIsLeftToItsGpu) {
  load("only-near-nic.hwloc.xml");
  EXPECT_EQ(nicOf(t, "0000:03:00.0"), "mlx5_0");
  EXPECT_EQ(pathOf(t, "0000:03:00.0"), "PIX");
  EXPECT_EQ(nicOf(t, "0000:07:00.0"), "mlx5_1");
  EXPECT_EQ(pathOf(t, "0000:07:00.0"), "PHB");
  EXPECT_NE(reasonOf("0000:07:00.0").find("mlx5_0 (GPU 0000:03:00.0)"), std::string::npos)
      << reasonOf("0000:07:00.0");
}

// (d) GPU 05 needs mlx5_0; that leaves GPU 09 only mlx5_1, which GPU 10 must
// then leave too, though it is faster than mlx5_2.
TEST_F(TopoNicCases, OnlyNearNicRuleRepeats) {
  load("only-near-nic-chain.hwloc.xml");
  EXPECT_EQ(nicOf(t, "0000:05:00.0"), "mlx5_0");
  EXPECT_EQ(nicOf(t, "0000:09:00.0"), "mlx5_1");
  EXPECT_EQ(pathOf(t, "0000:09:00.0"), "PXB");
  EXPECT_EQ(nicOf(t, "0000:10:00.0"), "mlx5_2");
  EXPECT_EQ(pathOf(t, "0000:10:00.0"), "PHB");
}

TEST_F(TopoNicCases, SwitchSharingIsOnlyClaimedWhereGpusShareOne) {
  load("near-slow-nic-far-fast-nic.hwloc.xml");
  EXPECT_FALSE(topo::gpusShareASwitch(t.machine));
  load("numa-node-vs-package.hwloc.xml");  // GPUs 03 and 05 share a switch
  EXPECT_TRUE(topo::gpusShareASwitch(t.machine));
}

}  // namespace
}  // namespace weft::testing

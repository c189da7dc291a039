// chooseRankNic: which verbs device one rank uses, on real topology files
// (tests/topo/data) and without a topology.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdlib>

#include "base/error.h"
#include "topo/gdr_pair.h"
#include "topo/rank_nic.h"

namespace weft::topo {
namespace {

const std::vector<std::string> kJuwelsNics = {"mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"};

class RankNic : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(
        loadTopology(std::string(WEFT_TOPO_DATA_DIR) + "/juwels-booster-4xa100-4xhdr200.hwloc.xml",
                     &juwels_),
        weftSuccess)
        << lastError();
  }
  Topology juwels_;
};

TEST(CpuLists, ParseFormatAndIntersect) {
  EXPECT_EQ(parseCpuList("3,0-2,7,x,9-8,5"), (std::vector<int>{0, 1, 2, 3, 5, 7}));
  EXPECT_EQ(formatCpuList({0, 1, 2, 3, 5, 7, 8}), "0-3,5,7-8");
  EXPECT_EQ(intersectCpuLists("18-23,66-71", "0-20,70"), "18-20,70");
  EXPECT_EQ(intersectCpuLists("0-3", "4-7"), "");
  EXPECT_EQ(intersectCpuLists("", "0-3"), "");
  EXPECT_FALSE(currentCpuAffinity().empty());
}

TEST_F(RankNic, GpuRankTakesItsGpusNearestNic) {
  RankNicRequest req;
  req.candidates = kJuwelsNics;
  req.gpu = "0000:44:00.0";  // GPU1, behind the switch of mlx5_1 (bus order is not NIC order)
  req.allowedCpus = "0-95";
  RankNicChoice c = chooseRankNic(&juwels_, "", req);
  EXPECT_EQ(req.candidates[c.index], "mlx5_1") << c.reason;
  EXPECT_TRUE(c.gdr);
  EXPECT_EQ(c.nearCpus, "6-11,54-59");
  EXPECT_NE(c.reason.find("PIX"), std::string::npos) << c.reason;
  // CUDA's bus id form names the same GPU.
  req.gpu = "00000000:C4:00.0";
  c = chooseRankNic(&juwels_, "", req);
  EXPECT_EQ(req.candidates[c.index], "mlx5_3") << c.reason;
}

TEST_F(RankNic, GpuWhoseNicIsDownFallsBackToCpuLocality) {
  RankNicRequest req;
  req.candidates = {"mlx5_0", "mlx5_2", "mlx5_3"};  // mlx5_1's port is down
  req.gpu = "0000:44:00.0";
  req.allowedCpus = "42-47";  // pinned to NUMA 7, mlx5_2's
  RankNicChoice c = chooseRankNic(&juwels_, "", req);
  EXPECT_EQ(req.candidates[c.index], "mlx5_2") << c.reason;
  EXPECT_FALSE(c.gdr);
  EXPECT_NE(c.reason.find("not usable"), std::string::npos) << c.reason;
}

TEST_F(RankNic, CpuRanksTakeTheDeviceOfTheirNumaNode) {
  RankNicRequest req;
  req.candidates = kJuwelsNics;
  req.allowedCpus = "30-35";  // NUMA 5: mlx5_3
  RankNicChoice c = chooseRankNic(&juwels_, "", req);
  EXPECT_EQ(req.candidates[c.index], "mlx5_3") << c.reason;
  EXPECT_EQ(c.nearCpus, "30-35");
}

TEST_F(RankNic, UnboundCpuRanksSpreadOverAllRails) {
  RankNicRequest req;
  req.candidates = kJuwelsNics;
  req.allowedCpus = "0-95";
  req.localRanks = 4;
  std::vector<std::string> got;
  for (int i = 0; i < 4; ++i) {
    req.localIndex = i;
    got.push_back(req.candidates[chooseRankNic(&juwels_, "", req).index]);
  }
  EXPECT_EQ(got, kJuwelsNics);
}

TEST_F(RankNic, UnknownGpuIsSaidAndCpuRuleUsed) {
  RankNicRequest req;
  req.candidates = kJuwelsNics;
  req.gpu = "0000:99:00.0";
  req.allowedCpus = "6-11";
  RankNicChoice c = chooseRankNic(&juwels_, "", req);
  EXPECT_EQ(req.candidates[c.index], "mlx5_1");
  EXPECT_NE(c.reason.find("not in the topology"), std::string::npos) << c.reason;
}

TEST(RankNicNoTopology, LocalIndexSpreadsOverDevices) {
  RankNicRequest req;
  req.candidates = {"rxe0", "rxe1"};
  req.localRanks = 3;
  req.localIndex = 2;
  RankNicChoice c = chooseRankNic(nullptr, "not loaded", req);
  EXPECT_EQ(c.index, 0);
  req.localIndex = 1;
  c = chooseRankNic(nullptr, "not loaded", req);
  EXPECT_EQ(c.index, 1);
  EXPECT_NE(c.reason.find("no device is local"), std::string::npos) << c.reason;
  EXPECT_EQ(c.nearCpus, "");
}

TEST(RankNicNoTopology, KernelCpuListsPlaceCpuRanks) {
  RankNicRequest req;
  req.candidates = {"mlx5_0", "mlx5_1"};
  req.candidateCpus = {"0-3", "4-7"};
  req.allowedCpus = "5-6";
  RankNicChoice c = chooseRankNic(nullptr, "not loaded", req);
  EXPECT_EQ(c.index, 1) << c.reason;
  EXPECT_EQ(c.nearCpus, "5-6");
}

TEST(RankNicNoTopology, GpuRankSaysWhyItCannotBePlaced) {
  RankNicRequest req;
  req.candidates = {"mlx5_0", "mlx5_1"};
  req.gpu = "0000:07:00.0";
  RankNicChoice c = chooseRankNic(nullptr, "hwloc failed", req);
  EXPECT_NE(c.reason.find("hwloc failed"), std::string::npos) << c.reason;
}

TEST(VerbsSysfs, LocalCpusOfADeviceFromAFakeSysfs) {
  char dir[] = "/tmp/weft_sysfs_XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string root = dir;
  const std::string dev = root + "/class/infiniband/mlx5_9/device";
  ASSERT_EQ(std::system(("mkdir -p " + dev + " && echo 0-3,8 > " + dev + "/local_cpulist").c_str()),
            0);
  EXPECT_EQ(verbsDeviceLocalCpus("mlx5_9", root), "0-3,8");
  EXPECT_EQ(verbsDeviceLocalCpus("rxe0", root), "");
  std::system(("rm -rf " + root).c_str());
}

// GPUDirect for the NIC in use, which need not be the GPU's nearest.
TEST_F(RankNic, GdrForThePairInUse) {
  GdrChoice c = gdrForPair(&juwels_, "", "0000:44:00.0", "mlx5_1");  // behind one switch
  EXPECT_TRUE(c.on) << c.reason;
  EXPECT_NE(c.reason.find("PIX"), std::string::npos) << c.reason;
  c = gdrForPair(&juwels_, "", "00000000:44:00.0", "mlx5_0");  // another switch: through the CPU
  EXPECT_FALSE(c.on) << c.reason;
  EXPECT_NE(c.reason.find("farther than WEFT_NET_GDR_LEVEL=PXB"), std::string::npos) << c.reason;
  c = gdrForPair(&juwels_, "", "0000:99:00.0", "mlx5_1");
  EXPECT_FALSE(c.on);
  EXPECT_NE(c.reason.find("not in the topology"), std::string::npos) << c.reason;
  c = gdrForPair(&juwels_, "", "0000:44:00.0", "rxe0");
  EXPECT_FALSE(c.on);
  EXPECT_NE(c.reason.find("NIC rxe0 is not in the topology"), std::string::npos) << c.reason;
  c = gdrForPair(nullptr, "hwloc failed", "0000:44:00.0", "mlx5_1");
  EXPECT_FALSE(c.on);
  EXPECT_NE(c.reason.find("hwloc failed"), std::string::npos) << c.reason;
}

// Lassen: GPU and NIC on one socket, no shared switch (NODE): off by default,
// on once WEFT_NET_GDR_LEVEL allows NODE.
TEST(GdrPair, LevelDecides) {
  const std::string file =
      std::string(WEFT_TOPO_DATA_DIR) + "/llnl-lassen-power9-4xv100-2xcx5.hwloc.xml";
  Topology t;
  ASSERT_EQ(loadTopology(file, &t), weftSuccess) << lastError();
  GdrChoice c = gdrForPair(&t, "", "0004:04:00.0", "mlx5_0");
  EXPECT_FALSE(c.on) << c.reason;
  EXPECT_NE(c.reason.find("NODE"), std::string::npos) << c.reason;
  setenv("WEFT_NET_GDR_LEVEL", "NODE", 1);
  Topology node;
  ASSERT_EQ(loadTopology(file, &node), weftSuccess) << lastError();
  unsetenv("WEFT_NET_GDR_LEVEL");
  c = gdrForPair(&node, "", "0004:04:00.0", "mlx5_0");
  EXPECT_TRUE(c.on) << c.reason;
}

}  // namespace
}  // namespace weft::topo

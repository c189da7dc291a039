// weft-sim's parts: max-min sharing, plans recorded from weft's own ring
// (the fabric-aware order), the two timing modes against each other, and the
// fabric-aware placement against the blind one on an oversubscribed fabric,
// all-to-all on rails, and exact mode's link sharing on a hand-made incast.
#include <gtest/gtest.h>

#include "sim_exact.h"
#include "sim_network.h"
#include "sim_record.h"
#include "sim_timing.h"

namespace {

using namespace weft::sim;

Cluster cluster(int ranks, int ppn, int leaves, double over, bool cyclic, bool blind) {
  Cluster c;
  c.nranks = ranks;
  c.ppn = ppn;
  const int nodes = ranks / ppn;
  c.fabric = syntheticFabric(leaves, (nodes + leaves - 1) / leaves, 0, 8, over, 1);  // 1 GB/s
  c.leafOfNode = placeNodes(c.fabric, nodes, cyclic);
  c.blind = blind;
  return c;
}

double simulate(const Cluster& c, bool exact, size_t bytes, weft::AlgoId algo) {
  Network net(c);
  SimCall call;
  call.bytesPerRank = bytes;
  call.forced = algo;
  weft::AlgoChoice choice;
  std::string why;
  EXPECT_TRUE(chooseAlgo(c, call, &choice, &why)) << why;
  SimResult res;
  if (exact) {
    std::vector<RankPlans> plans(c.nranks);
    for (int r = 0; r < c.nranks; ++r)
      EXPECT_TRUE(recordRank(c, call, choice, r, &plans[r], &why)) << why;
    EXPECT_TRUE(timeExact(c, net, plans, 3, &res, &why)) << why;
  } else {
    std::vector<int> ring = ringOrder(c);
    RankPlans plan;
    EXPECT_TRUE(recordRank(c, call, choice, ring[0], &plan, &why)) << why;
    EXPECT_TRUE(timePhase(c, net, plan, ring[0], ring, 3, &res, &why)) << why;
  }
  return res.timeUs;
}

TEST(WeftSim, MaxMinSharesAnOversubscribedUplink) {
  Cluster c = cluster(4, 1, 2, 2, false, false);  // nodes 0,1 on leaf 0; 2,3 on leaf 1
  Network net(c);
  // Two flows across the 2:1 uplink (1 GB/s for two 1 GB/s nodes) get half each;
  // a flow inside leaf 1 keeps its node link.
  std::vector<double> r = net.fairRates({{0, 2, 0}, {1, 3, 0}, {3, 2, 0}});
  EXPECT_NEAR(r[0], 0.5, 1e-9);
  EXPECT_NEAR(r[1], 0.5, 1e-9);
  EXPECT_NEAR(r[2], 0.5, 1e-9);  // node 2's down link: shared with flow 0
  std::vector<double> alone = net.fairRates({{0, 1, 0}});
  EXPECT_NEAR(alone[0], 1.0, 1e-9);
}

TEST(WeftSim, RecordsWeftsOwnRingInFabricOrder) {
  Cluster c = cluster(8, 1, 2, 2, true, false);  // leaves alternate in rank order
  EXPECT_EQ(ringOrder(c), (std::vector<int>{0, 2, 4, 6, 1, 3, 5, 7}));
  SimCall call;
  call.bytesPerRank = 1 << 20;
  call.forced = weft::AlgoId::kRing;
  weft::AlgoChoice choice;
  std::string why;
  ASSERT_TRUE(chooseAlgo(c, call, &choice, &why)) << why;
  RankPlans plan;
  ASSERT_TRUE(recordRank(c, call, choice, 6, &plan, &why)) << why;
  ASSERT_EQ(plan.phases.size(), 1u);
  uint64_t sent = 0;
  for (const SimFlow& f : plan.phases[0]) {
    EXPECT_EQ(f.peer, f.send ? 1 : 4);  // rank 6 sits between 4 and 1
    if (f.send)
      for (const SimItem& it : f.items) sent += it.bytes;
  }
  EXPECT_EQ(sent, 2u * 7 * (1 << 20) / 8);  // 2(n-1)/n of the buffer
}

TEST(WeftSim, PhaseModeAgreesWithExactOnTheRing) {
  for (size_t bytes : {size_t{64} << 10, size_t{16} << 20}) {
    Cluster c = cluster(64, 4, 4, 2, false, false);
    double exact = simulate(c, true, bytes, weft::AlgoId::kRing);
    double phase = simulate(c, false, bytes, weft::AlgoId::kRing);
    EXPECT_NEAR(phase / exact, 1.0, 0.05) << bytes << ": exact " << exact << " phase " << phase;
  }
}

TEST(WeftSim, FabricAwareRingBeatsBlindWhereUplinksAreThin) {
  const size_t bytes = 16 << 20;
  for (double over : {1.0, 2.0, 4.0}) {
    double aware = simulate(cluster(8, 1, 2, over, true, false), true, bytes, weft::AlgoId::kRing);
    double blind = simulate(cluster(8, 1, 2, over, true, true), true, bytes, weft::AlgoId::kRing);
    if (over == 1.0)
      EXPECT_NEAR(blind / aware, 1.0, 0.02);
    else
      EXPECT_GT(blind / aware, 0.9 * 4 / (4 / over));  // 4 crossings share what 1 had
  }
}

// Rails: 4 nodes of 4 ranks, 4 NICs each, rail switches at 4:1. weft's
// ring changes node only between equal local indices, so it stays on the rail
// switches; the blind ring's hops between nodes change rail and share the
// thin uplinks (4 crossings on a quarter of the NICs' rate).
TEST(WeftSim, RailAlignedRingStaysOffTheSpine) {
  auto railed = [](bool blind) {
    Cluster c;
    c.nranks = 16;
    c.ppn = 4;
    c.fabric = syntheticFabric(1, 4, 0, 8, 4, 1, 4);
    c.fabric.leaves[0].uplinkGbit = 8;  // one NIC's rate: 4:1 per rail switch
    c.leafOfNode = placeNodes(c.fabric, 4, false);
    c.blind = blind;
    return c;
  };
  const size_t bytes = 16 << 20;
  const double aware = simulate(railed(false), true, bytes, weft::AlgoId::kRing);
  const double blind = simulate(railed(true), true, bytes, weft::AlgoId::kRing);
  EXPECT_GT(blind / aware, 2.5) << "aware " << aware << " us, blind " << blind << " us";
  // On the rail switches alone, every NIC moves at its full rate: a ring of
  // 16 moves 2 x 15/16 of the buffer over each hop between nodes.
  EXPECT_NEAR(aware, 2.0 * 15 / 16 * bytes / 1e3, 0.1 * 2.0 * 15 / 16 * bytes / 1e3);
}

// All-to-all on the same kind of rails (8 nodes of 4 under one leaf): the
// direct form sends 3/4 of what leaves a node to another rail, through the
// 4:1 uplinks; through the node, every hop between nodes stays on a rail
// switch. Without oversubscription the direct form is faster (the form
// through the node adds its first phase), and auto picks each where it wins.
TEST(WeftSim, AllToAllThroughTheNodeStaysOnTheRails) {
  auto railed = [](double over) {
    Cluster c;
    c.nranks = 32;
    c.ppn = 4;
    c.fabric = syntheticFabric(1, 8, 0, 8, over, 1, 4);
    c.leafOfNode = placeNodes(c.fabric, 8, false);
    return c;
  };
  auto allToAll = [](const Cluster& c, weft::AlgoId algo, weft::AlgoId* picked) {
    SimCall call;
    call.allReduce = false;
    call.allToAll = true;
    call.bytesPerRank = 256 << 10;  // per peer: 8 MiB per rank
    call.forced = algo;
    weft::AlgoChoice choice;
    std::string why;
    EXPECT_TRUE(chooseAlgo(c, call, &choice, &why)) << why;
    *picked = choice.algo;
    std::vector<RankPlans> plans(c.nranks);
    for (int r = 0; r < c.nranks; ++r)
      EXPECT_TRUE(recordRank(c, call, choice, r, &plans[r], &why)) << why;
    SimResult res;
    EXPECT_TRUE(timeExact(c, Network(c), plans, 3, &res, &why)) << why;
    return res.timeUs;
  };
  weft::AlgoId picked = weft::AlgoId::kAuto;
  const Cluster thin = railed(4);
  const double direct = allToAll(thin, weft::AlgoId::kDirect, &picked);
  const double hier = allToAll(thin, weft::AlgoId::kHierRing, &picked);
  EXPECT_GT(direct / hier, 2.0) << "direct " << direct << " us, through the node " << hier;
  allToAll(thin, weft::AlgoId::kAuto, &picked);
  EXPECT_EQ(picked, weft::AlgoId::kHierRing);
  const Cluster full = railed(1);
  EXPECT_LT(allToAll(full, weft::AlgoId::kDirect, &picked),
            allToAll(full, weft::AlgoId::kHierRing, &picked));
  allToAll(full, weft::AlgoId::kAuto, &picked);
  EXPECT_EQ(picked, weft::AlgoId::kDirect);
}

TEST(WeftSim, AStragglerDelaysTheRingByItsLateness) {
  Cluster c = cluster(8, 1, 2, 1, false, false);
  const double onTime = simulate(c, true, 1 << 20, weft::AlgoId::kRing);
  c.lateUs.assign(8, 0);
  c.lateUs[5] = 5000;
  EXPECT_NEAR(simulate(c, true, 1 << 20, weft::AlgoId::kRing) - onTime, 5000, 50);
}

TEST(WeftSim, ExactModeTimesEveryModelledAllReduce) {
  Cluster c = cluster(16, 2, 2, 2, false, false);  // 8 nodes, 4 on each leaf
  for (weft::AlgoId a :
       {weft::AlgoId::kRing, weft::AlgoId::kTree, weft::AlgoId::kHierRing, weft::AlgoId::kHierTree,
        weft::AlgoId::kHierLeaf, weft::AlgoId::kRd, weft::AlgoId::kRhd}) {
    double t = simulate(c, true, 1 << 20, a);
    EXPECT_GT(t, 0) << weft::algoName(a);
    EXPECT_LT(t, 1e7) << weft::algoName(a);
  }
}

// Halving-doubling's ready marks (rhd_allreduce.cc), in the plans weft
// records: on 8 ranks (one per node) and 6 (two fold), with several chunks
// per step, each flow to a partner carries item for item what the partner's
// flow from us expects, and a send's second chunk of either phase waits for
// the partner's 8-byte mark on our flow from it.
TEST(WeftSim, HalvingDoublingWaitsForThePartnersReadyMark) {
  for (int n : {8, 6}) {
    Cluster c = cluster(n, 1, 1, 1, false, false);
    SimCall call;
    call.bytesPerRank = (16 << 20) + 4 * 7;  // odd halves: give and keep differ by an element
    call.forced = weft::AlgoId::kRhd;
    weft::AlgoChoice choice;
    std::string why;
    ASSERT_TRUE(chooseAlgo(c, call, &choice, &why)) << why;
    std::vector<RankPlans> plans(n);
    for (int r = 0; r < n; ++r) ASSERT_TRUE(recordRank(c, call, choice, r, &plans[r], &why)) << why;
    int marks = 0, gated = 0;
    for (int r = 0; r < n; ++r) {
      ASSERT_EQ(plans[r].phases.size(), 1u);
      const SimPhase& mine = plans[r].phases[0];
      for (size_t f = 2; f < mine.size(); ++f) {
        const SimFlow& flow = mine[f];
        if (flow.items.empty()) continue;
        // The partner's flow the other way: same step, opposite direction.
        const SimPhase& theirs = plans[flow.peer].phases[0];
        size_t g = 2;
        while (g < theirs.size() && !(theirs[g].peer == r && theirs[g].send != flow.send)) ++g;
        ASSERT_LT(g, theirs.size()) << "rank " << r << " flow " << f;
        ASSERT_EQ(theirs[g].items.size(), flow.items.size()) << "rank " << r << " flow " << f;
        for (size_t i = 0; i < flow.items.size(); ++i)
          ASSERT_EQ(theirs[g].items[i].bytes, flow.items[i].bytes) << "rank " << r << " item " << i;
        if (!flow.send) continue;
        // Our send flow: [mark] halving chunks [mark] doubling chunks; the flow
        // from the partner is next to it (f + 1) with the same layout reversed.
        const SimFlow& from = mine[f + 1];
        for (size_t i = 0; i < flow.items.size(); ++i) {
          if (flow.items[i].bytes != 8) continue;
          ++marks;
          // The chunk two after a mark is its phase's second: it waits for the
          // partner's mark of that phase, an 8-byte item of the flow from it.
          if (i + 2 < flow.items.size() && flow.items[i + 2].bytes > 8) {
            const SimItem& second = flow.items[i + 2];
            ASSERT_EQ(second.depFlow, static_cast<int>(f + 1)) << "rank " << r << " item " << i;
            EXPECT_EQ(from.items[second.depItem].bytes, 8u) << "rank " << r << " item " << i;
            ++gated;
          }
        }
      }
    }
    const int steps = n == 8 ? 3 : 2, active = n == 8 ? 8 : 4;
    EXPECT_EQ(marks, active * steps * 2) << n << " ranks: a mark per phase, step and rank";
    EXPECT_EQ(gated, marks) << n << " ranks";
  }
}

// Ranks 0 and 1 start sending 1 MB to rank 3 at the same instant; rank 2
// joins 500 us later. Rank 3's down link (1000 bytes/us) gives each mover an
// equal share from each start or stop on: 0 and 1 move 250 KB each by 500
// us, then all three share until 0 and 1 end at 2750 us, and rank 2's last
// 250 KB go alone: it ends at 3000 us, plus the route's latency.
TEST(WeftSim, ExactModeSharesALinkAmongItemsStartedTogetherOrLater) {
  Cluster c = cluster(4, 1, 1, 1, false, false);
  Network net(c);
  const double perUs = net.fairRates({{0, 3, 0}})[0] * 1e3;
  ASSERT_NEAR(perUs, 1000, 1e-6);
  std::vector<RankPlans> plans(4);
  for (int r = 0; r < 3; ++r) {
    SimFlow send;
    send.send = true;
    send.peer = 3;
    send.items = {SimItem{1000000}};
    plans[r].phases = {{send}};
    SimFlow recv;
    recv.peer = r;
    recv.items = {SimItem{1000000}};
    if (plans[3].phases.empty()) plans[3].phases.resize(1);
    plans[3].phases[0].push_back(recv);
  }
  std::vector<int> links;
  double latency = 0;
  net.route(Flow{2, 3, 0}, &links, &latency);
  double end = 0;
  std::string why;
  ASSERT_TRUE(runExact(net, plans, 0, {0, 0, 500, 0}, &end, &why)) << why;
  EXPECT_NEAR(end, 3000 + latency, 1e-6);
}

}  // namespace

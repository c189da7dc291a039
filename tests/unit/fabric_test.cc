// WEFT_FABRIC: the JSON reader, the description's checks, the order nodes
// take (leaf by leaf, pod by pod) and the uplink loads the tuner is given.
#include <gtest/gtest.h>

#include "collectives/comm_topo.h"
#include "collectives/fabric_shape.h"
#include "collectives/tuner.h"
#include "topo/fabric.h"
#include "topo/json_reader.h"

namespace {

using weft::topo::Fabric;
using weft::topo::JsonValue;

// Two leaves of four nodes each; uplinks `uplink` Gbit/s, nodes 100 Gbit/s.
std::string twoLeaves(int uplink) {
  std::string u = std::to_string(uplink);
  return R"({"node_gbit": 100, "leaves": [
      {"name": "a", "uplink_gbit": )" +
         u + R"(, "nodes": ["n0", "n2", "n4", "n6"]},
      {"name": "b", "uplink_gbit": )" +
         u + R"(, "nodes": ["n1", "n3", "n5", "n7"]}]})";
}

TEST(JsonReader, ReadsEveryKind) {
  JsonValue v;
  std::string why;
  ASSERT_TRUE(weft::topo::parseJson(
      R"( {"a": [1, -2.5e1, true, false, null], "b": {"c": "x\"y\u0041\n"}} )", &v, &why))
      << why;
  ASSERT_EQ(v.kind, JsonValue::Kind::kObject);
  const JsonValue* a = v.find("a");
  ASSERT_NE(a, nullptr);
  ASSERT_EQ(a->items.size(), 5u);
  EXPECT_EQ(a->items[1].number, -25);
  EXPECT_TRUE(a->items[2].boolean);
  EXPECT_EQ(a->items[4].kind, JsonValue::Kind::kNull);
  EXPECT_EQ(v.find("b")->find("c")->text, "x\"yA\n");
  EXPECT_EQ(v.find("nope"), nullptr);
}

TEST(JsonReader, NamesLineAndColumnOfTheFault) {
  JsonValue v;
  std::string why;
  EXPECT_FALSE(weft::topo::parseJson("{\n  \"a\" 1}", &v, &why));
  EXPECT_EQ(why, "line 2, column 7: expected ':' after an object key");
  const std::vector<std::string> bads = {"",       "[1,]",         "{\"a\":1,\"a\":2}",
                                         "\"open", "nan",          "-inf",
                                         "[1] 2",  "{\"a\":0x10}", std::string(100, '[')};
  for (const std::string& bad : bads) {
    why.clear();
    EXPECT_FALSE(weft::topo::parseJson(bad, &v, &why)) << bad;
    EXPECT_FALSE(why.empty()) << bad;
  }
}

TEST(FabricFile, ReadsLeavesPodsAndOversubscription) {
  Fabric f;
  std::string why;
  ASSERT_TRUE(weft::topo::parseFabric(R"({"node_gbit": 400,
      "hop_latency_us": {"leaf": 1.5, "spine": 2},
      "pods": [{"name": "p0", "uplink_gbit": 800}, {"name": "p1"}],
      "leaves": [{"name": "l0", "pod": "p0", "oversubscription": 2, "nodes": ["h1", "h2"]},
                 {"name": "l1", "pod": "p1", "uplink_gbit": 200, "nodes": ["10.0.0.3"]}]})",
                                      &f, &why))
      << why;
  ASSERT_EQ(f.leaves.size(), 2u);
  EXPECT_DOUBLE_EQ(f.leaves[0].uplinkGbit, 400);  // 2 nodes x 400 / 2
  EXPECT_DOUBLE_EQ(f.leafOversubscription(1), 2);
  EXPECT_EQ(f.leaves[1].pod, 1);
  EXPECT_DOUBLE_EQ(f.leafHopUs, 1.5);
  EXPECT_DOUBLE_EQ(f.coreHopUs, 1);
  EXPECT_EQ(f.findLeaf({"nowhere", "10.0.0.3"}), 1);
  EXPECT_EQ(f.findLeaf({"h3"}), -1);
  EXPECT_NE(f.hash, 0u);
}

TEST(FabricFile, RefusesWhatItCannotModel) {
  const std::pair<const char*, const char*> cases[] = {
      {R"({"leaves": [{"nodes": ["a"]}]})", "node_gbit is missing"},
      {R"({"node_gbit": 1, "leaves": [{"nodes": ["a"], "uplink_gbt": 1}]})",
       "unknown key \"uplink_gbt\""},
      {R"({"node_gbit": 1, "leaves": [{"nodes": ["a"]}, {"nodes": ["a"]}]})",
       "listed under two leaves"},
      {R"({"node_gbit": 1, "leaves": [{"nodes": ["a"], "pod": "p"}]})", "no \"pods\" list"},
      {R"({"node_gbit": 1, "pods": [{"name": "p"}], "leaves": [{"nodes": ["a"], "pod": "q"}]})",
       "\"q\" is not in \"pods\""},
      {R"({"node_gbit": -1, "leaves": [{"nodes": ["a"]}]})", "positive"},
      {R"({"node_gbit": 1, "leaves": []})", "non-empty"},
      {R"({"node_gbit": 1, "leaves": [{"nodes": ["a"], "uplink_gbit": 1,
          "oversubscription": 2}]})",
       "not both"},
      {"[1]", "must be an object"},
      {R"({"node_gbit": 1, "rails": 2.5, "leaves": [{"nodes": ["a"]}]})", "whole number"},
      {R"({"node_gbit": 1, "rails": 65, "leaves": [{"nodes": ["a"]}]})", "from 1 to 64"},
      {R"({"node_gbit": 1, "rails": 0, "leaves": [{"nodes": ["a"]}]})", "positive"},
  };
  for (const auto& c : cases) {
    Fabric f;
    std::string why;
    EXPECT_FALSE(weft::topo::parseFabric(c.first, &f, &why)) << c.first;
    EXPECT_NE(why.find(c.second), std::string::npos) << why;
  }
}

TEST(FabricFile, ReadsSlurmTopologyConf) {
  Fabric f;
  std::string why;
  ASSERT_TRUE(weft::topo::parseSlurmTopology(R"(# a two-level tree
SwitchName=s0 Nodes=tux[01-03],gpu7 LinkSpeed=100
switchname=s1 nodes=tux[04-05,9]
SwitchName=s2 Switches=s[0-1]
SwitchName=s3 Nodes=lonely
)",
                                             &f, &why))
      << why;
  ASSERT_EQ(f.leaves.size(), 3u);
  EXPECT_EQ(f.leaves[0].nodes, (std::vector<std::string>{"tux01", "tux02", "tux03", "gpu7"}));
  EXPECT_EQ(f.leaves[1].nodes, (std::vector<std::string>{"tux04", "tux05", "tux9"}));
  EXPECT_EQ(f.leaves[0].pod, f.leaves[1].pod);  // both under s2
  EXPECT_NE(f.leaves[2].pod, f.leaves[0].pod);
  EXPECT_EQ(f.findLeaf({"tux05"}), 1);
  EXPECT_DOUBLE_EQ(f.leafOversubscription(0), 1);  // no rates in the file: order only
  EXPECT_FALSE(weft::topo::parseSlurmTopology("SwitchName=s0 Nodes=tux[3-1]", &f, &why));
  EXPECT_NE(why.find("malformed range"), std::string::npos) << why;
  EXPECT_FALSE(weft::topo::parseSlurmTopology("NodeName=a", &f, &why));
}

TEST(FabricOrder, NodesGoLeafByLeafThenPodByPod) {
  Fabric f;
  std::string why;
  ASSERT_TRUE(weft::topo::parseFabric(R"({"node_gbit": 1, "pods": [{"name": "x"}, {"name": "y"}],
      "leaves": [{"pod": "y", "nodes": ["a"]}, {"pod": "x", "nodes": ["b"]},
                 {"pod": "y", "nodes": ["c"]}]})",
                                      &f, &why))
      << why;
  // Node k sits on leaf leafOfNode[k]; pod x (leaf 1) first, then pod y's leaves 0 and 2.
  EXPECT_EQ(weft::fabricNodeOrder(f, {0, 2, 1, 0, 2, 1}), (std::vector<int>{2, 5, 0, 3, 1, 4}));
}

// 8 one-rank nodes, rank r on node r: leaves alternate in rank order.
const std::vector<uint64_t> kAlternatingNodes{10, 11, 12, 13, 14, 15, 16, 17};
const std::vector<int> kAlternatingLeaves{0, 1, 0, 1, 0, 1, 0, 1};

Fabric twoLeavesOf(int uplink) {
  Fabric f;
  std::string why;
  EXPECT_TRUE(weft::topo::parseFabric(twoLeaves(uplink), &f, &why)) << why;
  return f;
}

std::vector<int> ringOf(const weft::CommTopo& t) {
  std::vector<int> out;
  for (int i = 0; i < t.ring->size(); ++i) out.push_back(t.ring->member(i));
  return out;
}

TEST(FabricOrder, RingLeavesEachLeafOnceWhereRanksAlternate) {
  const Fabric f = twoLeavesOf(100);
  const std::vector<uint64_t>& hashes = kAlternatingNodes;
  const std::vector<int>& leafOf = kAlternatingLeaves;
  weft::CommTopo blind, aware;
  blind.build(3, hashes, nullptr);
  aware.build(3, hashes, nullptr, {}, &f, leafOf);
  EXPECT_EQ(ringOf(blind), (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(ringOf(aware), (std::vector<int>{0, 2, 4, 6, 1, 3, 5, 7}));
  EXPECT_EQ(aware.ringPos, 5);
  EXPECT_EQ(aware.node, 5);
  EXPECT_EQ(aware.nodeOf[1], 4);
  EXPECT_FALSE(blind.fabric.known);
  // Uplinks of 100 Gbit/s for 4 x 100: the aware ring crosses each once (load 1).
  EXPECT_DOUBLE_EQ(aware.fabric.ringLoad, 1);
  // The same description with rank order kept would cross 4 times per uplink.
  weft::FabricShape kept = weft::fabricShape(f, leafOf, leafOf);
  EXPECT_DOUBLE_EQ(kept.ringLoad, 4);
  EXPECT_GT(kept.treeLoad, aware.fabric.treeLoad);
  EXPECT_DOUBLE_EQ(aware.fabric.pairLoad, 4);  // every node of a leaf at once
}

TEST(FabricOrder, TunerPaysForOversubscribedUplinks) {
  const Fabric wide = twoLeavesOf(400), narrow = twoLeavesOf(25);
  weft::CommTopo open, thin;
  open.build(0, kAlternatingNodes, nullptr, {}, &wide, kAlternatingLeaves);
  thin.build(0, kAlternatingNodes, nullptr, {}, &narrow, kAlternatingLeaves);
  EXPECT_DOUBLE_EQ(thin.fabric.ringLoad, 4);  // one crossing on a quarter of a node link
  weft::Tuner a, b;
  weft::LinkModel link{30, 1.25};
  a.setup(&open, link, link, 512 << 10, 4, 0);
  b.setup(&thin, link, link, 512 << 10, 4, 0);
  const size_t big = 64 << 20;
  EXPECT_GT(b.allReduceUs(weft::AlgoId::kRing, big, nullptr),
            2 * a.allReduceUs(weft::AlgoId::kRing, big, nullptr));
  EXPECT_GT(b.allGatherUs(weft::AlgoId::kRing, big, nullptr),
            2 * a.allGatherUs(weft::AlgoId::kRing, big, nullptr));
  EXPECT_NE(b.table().find("uplink load ring 4.00"), std::string::npos) << b.table();
}

// Recursive doubling over nodes in leaf order swaps inside the leaf at its
// near steps: only the last step (partners 4 apart) crosses the uplinks,
// with the whole leaf (load 4 on a quarter of 4 node links). In rank order
// (leaves alternating) the first step crosses instead. The tuner prices
// halving-doubling by step: its largest halves go at the near steps.
TEST(FabricOrder, PairStepsInsideALeafLoadNoUplink) {
  const Fabric f = twoLeavesOf(100);
  weft::CommTopo aware;
  aware.build(0, kAlternatingNodes, nullptr, {}, &f, kAlternatingLeaves);
  EXPECT_EQ(aware.fabric.pairStepLoad, (std::vector<double>{1, 1, 4}));
  EXPECT_DOUBLE_EQ(aware.fabric.pairLoad, 4);
  const weft::FabricShape kept = weft::fabricShape(f, kAlternatingLeaves, kAlternatingLeaves);
  EXPECT_EQ(kept.pairStepLoad, (std::vector<double>{4, 1, 1}));
  weft::FabricShape worst = aware.fabric;
  worst.pairStepLoad.clear();  // every step at the leaf's whole load
  weft::CommTopo flat;
  flat.build(0, kAlternatingNodes, nullptr, {}, &f, kAlternatingLeaves);
  flat.fabric = worst;
  weft::Tuner stepwise, whole;
  weft::LinkModel link{30, 1.25};
  stepwise.setup(&aware, link, link, 512 << 10, 4, 0);
  whole.setup(&flat, link, link, 512 << 10, 4, 0);
  const size_t big = 64 << 20;
  EXPECT_LT(stepwise.allReduceUs(weft::AlgoId::kRhd, big, nullptr),
            0.5 * whole.allReduceUs(weft::AlgoId::kRhd, big, nullptr));
  EXPECT_NE(stepwise.table().find("pairwise 4.00 (by step: 1.00 1.00 4.00)"), std::string::npos)
      << stepwise.table();
}

TEST(FabricOrder, LeafViewsSplitNodesIntoLeavesAndPlaces) {
  const Fabric f = twoLeavesOf(100);
  weft::CommTopo blind, aware;
  blind.build(3, kAlternatingNodes, nullptr);
  aware.build(3, kAlternatingNodes, nullptr, {}, &f, kAlternatingLeaves);
  EXPECT_EQ(blind.leafNodes, nullptr);
  ASSERT_NE(aware.leafNodes, nullptr);
  // Rank 3 is the second node of leaf 1 (ranks 1 3 5 7); place 1 of leaf 0 is rank 2.
  std::vector<int> leaf, cross;
  for (int i = 0; i < aware.leafNodes->size(); ++i) leaf.push_back(aware.leafNodes->member(i));
  for (int i = 0; i < aware.crossLeaves->size(); ++i) cross.push_back(aware.crossLeaves->member(i));
  EXPECT_EQ(leaf, (std::vector<int>{1, 3, 5, 7}));
  EXPECT_EQ(cross, (std::vector<int>{2, 3}));
  EXPECT_EQ(aware.leafNodesPos, 1);
  EXPECT_EQ(aware.crossLeavesPos, 1);
  // Four rings across the leaves leave each leaf's 100 Gbit/s uplink: four node links' worth.
  EXPECT_DOUBLE_EQ(aware.fabric.crossLeafLoad, 4);
  weft::Tuner t, b;
  weft::LinkModel link{30, 1.25};
  t.setup(&aware, link, link, 512 << 10, 4, 0);
  b.setup(&blind, link, link, 512 << 10, 4, 0);
  size_t chunk = 0;
  EXPECT_LT(t.allReduceUs(weft::AlgoId::kHierLeaf, 1 << 20, &chunk), 1e300);
  EXPECT_FALSE(b.allReduceUs(weft::AlgoId::kHierLeaf, 1 << 20, &chunk) < 1e300);
  // Leaves of unequal size (3 and 5 nodes): no leaf views.
  weft::CommTopo uneven;
  uneven.build(0, kAlternatingNodes, nullptr, {}, &f, {0, 0, 0, 1, 1, 1, 1, 1});
  EXPECT_EQ(uneven.leafNodes, nullptr);
}

TEST(FabricOrder, PodViewsSplitLeavesIntoPodsAndPlaces) {
  // 8 one-rank nodes; leaves a b (pod p) and c d (pod q), two nodes each;
  // ranks placed so that rank order crosses every level.
  Fabric f;
  std::string why;
  ASSERT_TRUE(weft::topo::parseFabric(R"({"node_gbit": 100,
      "pods": [{"name": "p", "uplink_gbit": 100}, {"name": "q", "uplink_gbit": 100}],
      "leaves": [{"name": "a", "pod": "p", "uplink_gbit": 100, "nodes": ["n0", "n4"]},
                 {"name": "b", "pod": "p", "uplink_gbit": 100, "nodes": ["n1", "n5"]},
                 {"name": "c", "pod": "q", "uplink_gbit": 100, "nodes": ["n2", "n6"]},
                 {"name": "d", "pod": "q", "uplink_gbit": 100, "nodes": ["n3", "n7"]}]})",
                                      &f, &why))
      << why;
  const std::vector<int> leafOf{0, 1, 2, 3, 0, 1, 2, 3};
  weft::CommTopo t;
  t.build(5, kAlternatingNodes, nullptr, {}, &f, leafOf);
  auto members = [](const std::unique_ptr<weft::RankView>& v) {
    std::vector<int> out;
    for (int i = 0; v && i < v->size(); ++i) out.push_back(v->member(i));
    return out;
  };
  // Rank 5 is place 1 of leaf b, the second leaf of pod p.
  EXPECT_EQ(members(t.leafNodes), (std::vector<int>{1, 5}));
  EXPECT_EQ(members(t.crossLeaves), (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(members(t.podLeaves), (std::vector<int>{4, 5}));
  EXPECT_EQ(members(t.crossPods), (std::vector<int>{5, 7}));
  EXPECT_EQ(t.podLeavesPos, 1);
  EXPECT_EQ(t.crossPodsPos, 0);
  // Two rings per leaf on its 100 Gbit/s uplink; four per pod on its 100 Gbit/s core link.
  EXPECT_DOUBLE_EQ(t.fabric.podLeafLoad, 2);
  EXPECT_DOUBLE_EQ(t.fabric.crossPodLoad, 4);
  // The pod level costs less than one ring across the four leaves where hops dominate.
  weft::Tuner tuner;
  weft::LinkModel link{30, 1.25};
  tuner.setup(&t, link, link, 512 << 10, 4, 0);
  weft::CommTopo flat;
  flat.build(5, kAlternatingNodes, nullptr, {}, &f, leafOf);
  flat.podLeaves.reset();
  flat.crossPods.reset();
  weft::Tuner flatTuner;
  flatTuner.setup(&flat, link, link, 512 << 10, 4, 0);
  size_t chunk = 0;
  EXPECT_LT(tuner.allReduceUs(weft::AlgoId::kHierLeaf, 4 << 10, &chunk),
            flatTuner.allReduceUs(weft::AlgoId::kHierLeaf, 4 << 10, &chunk));
  EXPECT_NE(tuner.table().find("across pods 4.00"), std::string::npos) << tuner.table();
  EXPECT_NE(tuner.table().find("hier-leaf levels: 2 nodes per leaf, 4 leaves in 2 pods of 2"),
            std::string::npos)
      << tuner.table();
  // One leaf per pod: the leaves are the pods, no level of its own.
  Fabric thin;
  ASSERT_TRUE(weft::topo::parseFabric(R"({"node_gbit": 100,
      "pods": [{"name": "p"}, {"name": "q"}],
      "leaves": [{"name": "a", "pod": "p", "nodes": ["n0", "n2", "n4", "n6"]},
                 {"name": "b", "pod": "q", "nodes": ["n1", "n3", "n5", "n7"]}]})",
                                      &thin, &why))
      << why;
  weft::CommTopo two;
  two.build(5, kAlternatingNodes, nullptr, {}, &thin, kAlternatingLeaves);
  EXPECT_NE(two.crossLeaves, nullptr);
  EXPECT_EQ(two.crossPods, nullptr);
}

// A rail-optimised fabric: one leaf of nodes with 4 ranks and 4 NICs each, on
// rail switches with 2:1 uplinks. Hops between nodes must join equal local
// indices (one rail), for even and odd numbers of nodes.
TEST(FabricOrder, RailsKeepRingHopsBetweenNodesOnOneRail) {
  for (int nodes : {4, 3}) {
    std::string names;
    for (int k = 0; k < nodes; ++k)
      names += std::string(k ? ", " : "") + "\"n" + std::to_string(k) + "\"";
    Fabric f;
    std::string why;
    ASSERT_TRUE(weft::topo::parseFabric(R"({"node_gbit": 100, "rails": 4, "leaves": [{"name": "a",
        "oversubscription": 2, "nodes": [)" +
                                            names + "]}]}",
                                        &f, &why))
        << why;
    EXPECT_EQ(f.rails, 4);
    EXPECT_NE(f.summary().find("4 rails"), std::string::npos) << f.summary();
    std::vector<uint64_t> hashes;
    for (int r = 0; r < 4 * nodes; ++r) hashes.push_back(100 + r / 4);
    weft::CommTopo t;
    t.build(0, hashes, nullptr, {}, &f, std::vector<int>(4 * nodes, 0));
    const std::vector<int> ring = ringOf(t);
    ASSERT_EQ(static_cast<int>(ring.size()), 4 * nodes);
    std::vector<int> seen(ring);
    std::sort(seen.begin(), seen.end());
    for (int r = 0; r < 4 * nodes; ++r) EXPECT_EQ(seen[r], r);  // each rank once
    for (size_t i = 0; i < ring.size(); ++i) {
      const int a = ring[i], b = ring[(i + 1) % ring.size()];
      if (a / 4 != b / 4) {
        EXPECT_EQ(a % 4, b % 4) << nodes << " nodes: hop " << a << " -> " << b;
      }
    }
    // No hop leaves a rail switch; the flat trees do (their edges join any two ranks).
    EXPECT_DOUBLE_EQ(t.fabric.ringLoad, 1);
    EXPECT_GT(t.fabric.treeLoad, 1);
    EXPECT_EQ(t.fabric.nics, 4);
  }
  // The same ranks in plain order, as without rails: each hop between nodes
  // changes rail (local index 3 to 0), and leaves its rail switch.
  Fabric f;
  std::string why;
  ASSERT_TRUE(weft::topo::parseFabric(R"({"node_gbit": 100, "rails": 4, "leaves": [{"name": "a",
      "oversubscription": 2, "nodes": ["n0", "n1", "n2", "n3"]}]})",
                                      &f, &why));
  std::vector<int> leaf(16, 0), rail, node;
  for (int r = 0; r < 16; ++r) rail.push_back(r % 4), node.push_back(r / 4);
  weft::FabricShape plain = weft::fabricShape(f, leaf, {0, 0, 0, 0}, rail, node);
  EXPECT_DOUBLE_EQ(plain.ringLoad, 2);  // 4 crossings on an uplink of half the 4 NIC links
}

}  // namespace

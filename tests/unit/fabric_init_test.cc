// WEFT_FABRIC at communicator init: a description that lists this node is
// used (the job runs), and one that cannot be used fails init with a
// sentence that says why, on every rank, instead of a silently blind job.
#include <gtest/gtest.h>
#include <unistd.h>
#include <weft/weft.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

constexpr int kRanks = 3;

std::string writeFile(const std::string& text) {
  char path[] = "/tmp/weft_fabric_XXXXXX";
  int fd = mkstemp(path);
  EXPECT_GE(fd, 0);
  EXPECT_EQ(write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  close(fd);
  return path;
}

std::string oneLeaf(const std::string& node) {
  return R"({"node_gbit": 100, "leaves": [{"name": "l0", "nodes": [")" + node + R"("]}]})";
}

// Init with WEFT_FABRIC=path: "" on success (after an allreduce), else the error.
std::string initWith(const std::string& path) {
  setenv("WEFT_FABRIC", path.c_str(), 1);
  std::vector<weftComm_t> comms(kRanks, nullptr);
  weftResult_t r = weftCommInitAll(comms.data(), kRanks, nullptr);
  std::string out = r == weftSuccess ? "" : weftGetLastError(nullptr);
  if (r == weftSuccess) {
    std::vector<float> buf(kRanks, 1.0f);
    if (weftGroupStart() != weftSuccess) out = "group start";
    for (int i = 0; i < kRanks; ++i)
      weftAllReduce(&buf[i], &buf[i], 1, weftFloat, weftSum, comms[i], nullptr);
    if (weftGroupEnd() != weftSuccess) out = std::string("allreduce: ") + weftGetLastError(nullptr);
    for (float v : buf)
      if (v != kRanks) out = "allreduce gave " + std::to_string(v);
    for (weftComm_t c : comms) weftCommDestroy(c);
  }
  unsetenv("WEFT_FABRIC");
  return out;
}

TEST(FabricInit, ThisHostListedRuns) {
  char host[256] = {};
  ASSERT_EQ(gethostname(host, sizeof(host) - 1), 0);
  std::string path = writeFile(oneLeaf(host));
  EXPECT_EQ(initWith(path), "");
  unlink(path.c_str());
}

TEST(FabricInit, NamedNodeRuns) {
  std::string path = writeFile(oneLeaf("rack7-node3"));
  setenv("WEFT_FABRIC_NODE", "rack7-node3", 1);
  EXPECT_EQ(initWith(path), "");
  unsetenv("WEFT_FABRIC_NODE");
  unlink(path.c_str());
}

TEST(FabricInit, UnlistedNodeFailsWithTheReason) {
  std::string path = writeFile(oneLeaf("some-other-host"));
  std::string err = initWith(path);
  EXPECT_NE(err.find("is in no leaf of WEFT_FABRIC"), std::string::npos) << err;
  unlink(path.c_str());
}

TEST(FabricInit, UnreadableOrMalformedFileIsNamed) {
  std::string err = initWith("/nonexistent/fabric.json");
  EXPECT_NE(err.find("WEFT_FABRIC=/nonexistent/fabric.json: cannot open it"), std::string::npos)
      << err;
  std::string path = writeFile(R"({"node_gbit": 100, "leaves": [{"nodes": ["a"]}],})");
  err = initWith(path);
  EXPECT_NE(err.find("line 1, column"), std::string::npos) << err;
  unlink(path.c_str());
}

}  // namespace

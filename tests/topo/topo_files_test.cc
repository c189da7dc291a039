// Every topology file of a directory against its expected.json: files that
// must load give each GPU a NIC from its `nearest` set (from `preferred` where
// given) with the expected path class (PKG counts as SYS there, see
// sameClass), list exactly the expected RDMA NICs, and spread GPUs that tie
// over the same NICs evenly; files meant to fail fail with a sentence naming
// the file.
//
// usage: weft_topo_files_test [--skip-if-missing] DIR [gtest flags]
// With --skip-if-missing and no DIR, prints "SKIPPED: ..." and exits 77 so
// that ctest reports the test as skipped (SKIP_RETURN_CODE), never as passed.
#include <dirent.h>
#include <gtest/gtest.h>
#include <hwloc.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "base/error.h"
#include "mini_json.h"
#include "topo/topology.h"

namespace weft::testing {
namespace {

constexpr int kSkipExitCode = 77;

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

// True for a file in a newer hwloc XML format (3.0) that this hwloc reads
// after all: it is "meant to fail" only on hwloc 2.x.
bool newerFormatReadable(const std::string& path) {
  std::string head = readFile(path).substr(0, 512);
  size_t at = head.find("<topology version=\"");
  if (at == std::string::npos) return false;
  int major = std::atoi(head.c_str() + at + 19);
  return major >= 3 && major <= static_cast<int>(hwloc_get_api_version() >> 16);
}

// Every XML file in the directory must have an answer, so new files are not
// silently left out.
std::vector<std::string> xmlFilesIn(const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      std::string name = e->d_name;
      if (name.size() > 4 && name.compare(name.size() - 4, 4, ".xml") == 0) names.push_back(name);
    }
    closedir(d);
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

// expected.json names classes as NCCL does, and NCCL has no class for two
// NUMA nodes of one package: those answers say SYS where weft says PKG.
bool sameClass(topo::PathClass got, const std::string& expected) {
  if (expected == topo::pathClassName(got)) return true;
  return got == topo::PathClass::kPKG && expected == "SYS";
}

void checkLoads(const std::string& path, const JsonValue& expected) {
  topo::Topology t;
  ASSERT_EQ(topo::loadTopology(path, &t), weftSuccess) << lastError();
  const topo::Machine& m = t.machine;

  std::vector<std::string> rdma;
  for (const topo::Nic& nic : m.nics) {
    if (topo::isRdma(nic.kind)) rdma.push_back(nic.name);
  }
  std::vector<std::string> want = expected["nics"].strings();
  std::sort(rdma.begin(), rdma.end());
  std::sort(want.begin(), want.end());
  EXPECT_EQ(rdma, want) << "RDMA NICs differ";
  EXPECT_EQ(m.gpus.size(), expected["gpus"].items.size()) << "GPU count differs";

  // nearest set -> picks of the GPUs that share it, for the evenness check.
  std::map<std::vector<std::string>, std::vector<std::string>> picksBySet;
  std::string summary;
  for (const JsonValue& g : expected["gpus"].items) {
    const std::string& busId = g["id"].text;
    int index = topo::findGpu(m, busId);
    ASSERT_GE(index, 0) << "GPU " << busId << " not found";
    const topo::GpuNic& c = t.gpuNics[index];
    std::vector<std::string> nearest = g["nearest"].strings();
    if (nearest.empty()) {
      EXPECT_EQ(c.nic, -1) << busId << " should have no RDMA NIC, got " << m.nics[c.nic].name;
      summary += " " + busId + "->none";
      continue;
    }
    ASSERT_GE(c.nic, 0) << busId << " got no NIC: " << c.reason;
    const std::string& pick = m.nics[c.nic].name;
    EXPECT_NE(std::find(nearest.begin(), nearest.end(), pick), nearest.end())
        << busId << " -> " << pick << ", expected one of " << join(nearest) << " (" << c.reason
        << ")";
    if (g.has("preferred")) {
      std::vector<std::string> preferred = g["preferred"].strings();
      EXPECT_NE(std::find(preferred.begin(), preferred.end(), pick), preferred.end())
          << busId << " -> " << pick << ", fewest-hops answer is " << join(preferred);
    }
    EXPECT_TRUE(sameClass(c.path.cls, g["path"].text))
        << busId << " -> " << pick << ": " << topo::pathClassName(c.path.cls) << ", expected "
        << g["path"].text;
    std::sort(nearest.begin(), nearest.end());
    picksBySet[nearest].push_back(pick);
    summary += " " + busId + "->" + pick + "(" + topo::pathClassName(c.path.cls) + ")";
  }
  // GPUs that tie over the same NICs: no NIC of the set used twice more than another.
  for (const auto& [set, picks] : picksBySet) {
    if (set.size() < 2) continue;
    std::map<std::string, int> use;
    for (const std::string& n : set) use[n] = 0;
    for (const std::string& p : picks) ++use[p];
    int most = 0, least = 1 << 30;
    for (const auto& [name, count] : use)
      most = std::max(most, count), least = std::min(least, count);
    if (picks.size() >= set.size()) {
      EXPECT_LE(most - least, 1) << "GPUs tied over {" << join(set) << "} are not spread evenly";
    } else {
      EXPECT_LE(most, 1) << "GPUs tied over {" << join(set)
                         << "} share a NIC while others are unused";
    }
  }
  std::printf("  %s:%s\n", path.substr(path.rfind('/') + 1).c_str(), summary.c_str());
}

void checkFails(const std::string& path) {
  topo::Topology t;
  weftResult_t res = topo::loadTopology(path, &t);
  EXPECT_NE(res, weftSuccess) << "a file meant to fail loaded";
  EXPECT_NE(lastError().find(path), std::string::npos)
      << "the error does not name the file: " << lastError();
  std::printf("  %s: refused as expected: %s\n", path.substr(path.rfind('/') + 1).c_str(),
              lastError().c_str());
}

}  // namespace
}  // namespace weft::testing

int main(int argc, char** argv) {
  using weft::testing::JsonValue;
  ::testing::InitGoogleTest(&argc, argv);
  bool skipIfMissing = false;
  std::string dir;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--skip-if-missing")
      skipIfMissing = true;
    else
      dir = argv[i];
  }
  struct stat st;
  if (dir.empty() || stat((dir + "/expected.json").c_str(), &st) != 0) {
    if (skipIfMissing) {
      std::printf("SKIPPED: ../shared/topologies not found\n(looked for %s/expected.json)\n",
                  dir.c_str());
      return weft::testing::kSkipExitCode;
    }
    std::fprintf(stderr, "no expected.json in \"%s\"\n", dir.c_str());
    return 1;
  }
  // The answers are for default settings.
  unsetenv("WEFT_IB_HCA");
  unsetenv("WEFT_NET_GDR_LEVEL");
  unsetenv("WEFT_TOPO_FILE");
  JsonValue expected;
  try {
    expected = weft::testing::parseJson(weft::testing::readFile(dir + "/expected.json"));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s/expected.json: %s\n", dir.c_str(), e.what());
    return 1;
  }
  const JsonValue& files = expected["files"];
  for (const auto& [name, answer] : files.members) {
    std::string path = dir + "/" + name;
    bool loads = answer["loads"].boolean || weft::testing::newerFormatReadable(path);
    std::string testName = name;
    std::replace_if(
        testName.begin(), testName.end(),
        [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); }, '_');
    ::testing::RegisterTest("TopologyFiles", testName.c_str(), nullptr, nullptr, __FILE__, __LINE__,
                            [path, loads, answer]() -> ::testing::Test* {
                              struct FileTest : ::testing::Test {
                                std::string path;
                                bool loads;
                                JsonValue answer;
                                void TestBody() override {
                                  if (loads)
                                    weft::testing::checkLoads(path, answer);
                                  else
                                    weft::testing::checkFails(path);
                                }
                              };
                              auto* test = new FileTest;
                              test->path = path;
                              test->loads = loads;
                              test->answer = answer;
                              return test;
                            });
  }
  std::vector<std::string> onDisk = weft::testing::xmlFilesIn(dir);
  ::testing::RegisterTest("TopologyFiles", "EveryFileHasAnAnswer", nullptr, nullptr, __FILE__,
                          __LINE__, [onDisk, files]() -> ::testing::Test* {
                            struct CoverageTest : ::testing::Test {
                              std::vector<std::string> onDisk;
                              JsonValue files;
                              void TestBody() override {
                                for (const std::string& name : onDisk) {
                                  EXPECT_TRUE(files.has(name))
                                      << name << " has no entry in expected.json";
                                }
                              }
                            };
                            auto* test = new CoverageTest;
                            test->onDisk = onDisk;
                            test->files = files;
                            return test;
                          });
  return RUN_ALL_TESTS();
}

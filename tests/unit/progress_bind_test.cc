// The progress thread runs on the CPUs it was given (setCpus: the CPUs near
// the rank's NIC or GPU), and where it was given none, where the OS puts it.
#include <gtest/gtest.h>

#include "core/request.h"
#include "topo/rank_nic.h"

namespace weft {
namespace {

// Runs one request on a fresh progress thread and returns the CPU list the
// thread was allowed to run on.
std::string affinityOfProgressThread(const std::string& cpus) {
  ProgressThread progress;
  if (!cpus.empty()) progress.setCpus(cpus);
  std::string seen;
  auto* req = new weftRequest;
  req->work = [&seen] {
    seen = topo::currentCpuAffinity();
    return weftSuccess;
  };
  progress.submit(req);
  ProgressThread::waitFor(req);
  EXPECT_EQ(ProgressThread::finish(req), weftSuccess);
  return seen;
}

TEST(ProgressBind, ThreadRunsOnTheGivenCpus) {
  const std::vector<int> mine = topo::parseCpuList(topo::currentCpuAffinity());
  ASSERT_FALSE(mine.empty());
  const std::string last = std::to_string(mine.back());
  EXPECT_EQ(affinityOfProgressThread(last), last);
}

TEST(ProgressBind, NoCpusLeavesTheProcessAffinity) {
  EXPECT_EQ(affinityOfProgressThread(""), topo::currentCpuAffinity());
}

}  // namespace
}  // namespace weft

// The fake CUDA of the tests (src/device/fake_runtime.h) must be strict where
// the stream path relies on it: device memory faults when the host touches
// it, a copy past an allocation aborts, a stream runs its operations one at a
// time in order, flag writes and waits behave as CU_STREAM_WAIT_VALUE_GEQ, and
// a stalled stream runs nothing.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <vector>

#include "base/device_runtime.h"
#include "device/fake_runtime.h"

namespace {

using weft::MemKind;
using weft::PointerInfo;
namespace fake = weft::fake;

class FakeRuntime : public ::testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
  weft::DeviceRuntime* rt = fake::runtime();
};

TEST_F(FakeRuntime, HostTouchOfDeviceMemoryFaults) {
  void* dev = fake::deviceAlloc(4096);
  EXPECT_DEATH(
      {
        volatile char c = *static_cast<volatile char*>(dev);
        (void)c;
      },
      "");
  EXPECT_DEATH(std::memset(dev, 0, 16), "");
  fake::memFree(dev);
}

TEST_F(FakeRuntime, CopyPastAnAllocationAborts) {
  void* dev = fake::deviceAlloc(100);
  std::vector<char> host(200);
  EXPECT_DEATH(fake::copyFromDevice(host.data(), dev, 101), "overruns");
  EXPECT_DEATH(fake::copyToDevice(static_cast<char*>(dev) + 50, host.data(), 51), "overruns");
  fake::memFree(dev);
}

TEST_F(FakeRuntime, ClassifiesPointers) {
  void* dev = fake::deviceAlloc(1000, 2);
  void* managed = fake::managedAlloc(1000, 1);
  void* pinned = fake::pinnedAlloc(1000);
  int onStack = 0;
  PointerInfo info;
  ASSERT_EQ(rt->classify(static_cast<char*>(dev) + 999, &info), weftSuccess);
  EXPECT_EQ(info.kind, MemKind::kDevice);
  EXPECT_EQ(info.device, 2);
  ASSERT_EQ(rt->classify(managed, &info), weftSuccess);
  EXPECT_EQ(info.kind, MemKind::kManaged);
  EXPECT_EQ(info.device, 1);
  ASSERT_EQ(rt->classify(pinned, &info), weftSuccess);
  EXPECT_EQ(info.kind, MemKind::kPinnedHost);
  ASSERT_EQ(rt->classify(&onStack, &info), weftSuccess);
  EXPECT_EQ(info.kind, MemKind::kHost);
  EXPECT_TRUE(rt->mayHaveDeviceMemory());
  fake::memFree(dev);
  fake::memFree(managed);
  fake::memFree(pinned);
}

TEST_F(FakeRuntime, StreamRunsInOrder) {
  void* s = fake::streamCreate();
  EXPECT_EQ(rt->streamProblem(s), "");
  int notAStream = 0;
  EXPECT_NE(rt->streamProblem(&notAStream), "");
  void* dev = fake::deviceAlloc(64);
  std::vector<int> order;
  struct Step {
    std::vector<int>* order;
    int id;
  };
  Step steps[3] = {{&order, 1}, {&order, 2}, {&order, 3}};
  auto record = [](void* arg) {
    auto* st = static_cast<Step*>(arg);
    st->order->push_back(st->id);
  };
  char in[64], out[64] = {};
  for (int i = 0; i < 64; ++i) in[i] = static_cast<char>(i * 3);
  fake::streamEnqueueHost(s, record, &steps[0]);
  ASSERT_EQ(rt->copyAsync(dev, in, 64, s), weftSuccess);
  fake::streamEnqueueHost(s, record, &steps[1]);
  ASSERT_EQ(rt->copyAsync(out, dev, 64, s), weftSuccess);
  fake::streamEnqueueHost(s, record, &steps[2]);
  fake::streamSync(s);
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(std::memcmp(in, out, 64), 0);
  EXPECT_EQ(fake::streamOpsDone(s), 5u);
  fake::memFree(dev);
  fake::streamDestroy(s);
}

TEST_F(FakeRuntime, FlagsWaitAndWrite) {
  void* s = fake::streamCreate();
  void* mem = nullptr;
  ASSERT_EQ(rt->allocPinned(256, &mem), weftSuccess);
  auto* flags = static_cast<uint32_t*>(mem);
  flags[0] = 0xfffffff0u;  // the wait must treat values cyclically
  flags[16] = 0;
  std::atomic<int> ran{0};
  ASSERT_EQ(rt->waitFlagAsync(&flags[0], 0x00000002u, s), weftSuccess);
  fake::streamEnqueueHost(
      s, [](void* a) { static_cast<std::atomic<int>*>(a)->store(1); }, &ran);
  ASSERT_EQ(rt->writeFlagAsync(&flags[16], 7, s), weftSuccess);
  usleep(50 * 1000);
  EXPECT_EQ(ran.load(), 0) << "the stream went past an unmet wait";
  __atomic_store_n(&flags[0], 0x00000001u, __ATOMIC_RELEASE);  // still short of 2
  usleep(20 * 1000);
  EXPECT_EQ(ran.load(), 0);
  __atomic_store_n(&flags[0], 0x00000002u, __ATOMIC_RELEASE);
  fake::streamSync(s);
  EXPECT_EQ(ran.load(), 1);
  EXPECT_EQ(__atomic_load_n(&flags[16], __ATOMIC_ACQUIRE), 7u);
  EXPECT_TRUE(weft::flagReached(5, 0xfffffffeu));
  EXPECT_FALSE(weft::flagReached(0xfffffffeu, 5));
  rt->freePinned(mem);
  fake::streamDestroy(s);
}

TEST_F(FakeRuntime, StalledStreamRunsNothing) {
  void* s = fake::streamCreate();
  std::atomic<int> ran{0};
  fake::streamStall(s);
  fake::streamEnqueueHost(
      s, [](void* a) { static_cast<std::atomic<int>*>(a)->store(1); }, &ran);
  usleep(50 * 1000);
  EXPECT_EQ(ran.load(), 0);
  EXPECT_EQ(fake::streamOpsDone(s), 0u);
  fake::streamResume(s);
  fake::streamSync(s);
  EXPECT_EQ(ran.load(), 1);
  fake::streamDestroy(s);
}

}  // namespace

// weftHostAlloc's memory and how peers map it: the registry's answers, the C
// API's argument checks, PeerMemory mapping our own process's allocations
// (the same /proc/<pid>/fd path a peer uses), freed allocations being let go,
// the per-peer bound, and the streaming copy against memcpy.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>
#include <weft/weft.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "base/host_memory.h"
#include "collectives/nontemporal_copy.h"
#include "transports/shm/peer_memory.h"

namespace {

using weft::findHostRegion;
using weft::HostRegion;
using weft::PeerMemory;

TEST(HostAlloc, ArgumentsAndRegistry) {
  EXPECT_EQ(weftHostAlloc(nullptr, 8), weftInvalidArgument);
  EXPECT_NE(std::string(weftGetLastError(nullptr)).find("ptr"), std::string::npos);
  void* none = reinterpret_cast<void*>(1);
  EXPECT_EQ(weftHostAlloc(&none, 0), weftSuccess);
  EXPECT_EQ(none, nullptr);
  EXPECT_EQ(weftHostFree(nullptr), weftSuccess);
  // Sizes whose page rounding would wrap are refused by name, not "0 bytes".
  for (size_t huge : {SIZE_MAX, SIZE_MAX - 4095, static_cast<size_t>(PTRDIFF_MAX) + 2}) {
    EXPECT_EQ(weftHostAlloc(&none, huge), weftInvalidArgument) << huge;
    EXPECT_NE(std::string(weftGetLastError(nullptr)).find("size="), std::string::npos);
    EXPECT_EQ(none, nullptr);
  }

  void* mem = nullptr;
  ASSERT_EQ(weftHostAlloc(&mem, 10000), weftSuccess) << weftGetLastError(nullptr);
  ASSERT_NE(mem, nullptr);
  char* c = static_cast<char*>(mem);
  for (int i = 0; i < 10000; ++i) ASSERT_EQ(c[i], 0) << "not zeroed at " << i;
  HostRegion whole = findHostRegion(c, 10000);
  EXPECT_NE(whole.inode, 0u);
  EXPECT_EQ(whole.base, reinterpret_cast<uint64_t>(mem));
  EXPECT_GE(whole.bytes, 10000u);
  EXPECT_EQ(findHostRegion(c + 100, 50).inode, whole.inode);
  EXPECT_EQ(findHostRegion(c + 100, whole.bytes).inode, 0u) << "runs past the end";
  EXPECT_EQ(findHostRegion(c - 1, 8).inode, 0u);
  std::vector<char> heap(64);
  EXPECT_EQ(findHostRegion(heap.data(), heap.size()).inode, 0u);

  EXPECT_EQ(weftHostFree(c + 8), weftInvalidArgument) << "not the allocation's start";
  EXPECT_NE(std::string(weftGetLastError(nullptr)).find("weftHostAlloc"), std::string::npos);
  const uint64_t frees = weft::hostFreeCount();
  EXPECT_EQ(weftHostFree(mem), weftSuccess);
  EXPECT_EQ(weft::hostFreeCount(), frees + 1);
  EXPECT_EQ(weftHostFree(mem), weftInvalidArgument) << "double free";
  EXPECT_EQ(findHostRegion(c, 8).inode, 0u);
}

TEST(PeerMemory, MapsTheSamePagesAndLetsGoWhenFreed) {
  void* mem = nullptr;
  ASSERT_EQ(weftHostAlloc(&mem, 1 << 20), weftSuccess);
  char* mine = static_cast<char*>(mem);
  PeerMemory peers(2);
  HostRegion region = findHostRegion(mine + 4096, 8192);
  char* view = nullptr;
  ASSERT_EQ(peers.resolve(1, getpid(), region, reinterpret_cast<uint64_t>(mine + 4096), &view),
            weftSuccess)
      << weftGetLastError(nullptr);
  ASSERT_NE(view, nullptr);
  EXPECT_NE(view, mine + 4096) << "a second mapping, not the same address";
  mine[4096] = 42;
  EXPECT_EQ(view[0], 42);
  view[1] = 7;
  EXPECT_EQ(mine[4097], 7);
  // A second buffer in the same allocation reuses the mapping.
  char* view2 = nullptr;
  ASSERT_EQ(peers.resolve(1, getpid(), region, reinterpret_cast<uint64_t>(mine), &view2),
            weftSuccess);
  EXPECT_EQ(view2 + 4096, view);
  EXPECT_EQ(peers.mappedCount(1), 1u);

  // Not from weftHostAlloc: no view, no error.
  ASSERT_EQ(peers.resolve(1, getpid(), HostRegion{}, 1234, &view2), weftSuccess);
  EXPECT_EQ(view2, nullptr);
  // A published inode that is not what the descriptor holds (reused number).
  HostRegion wrong = region;
  wrong.inode += 1;
  EXPECT_EQ(peers.resolve(1, getpid(), wrong, region.base, &view2), weftRemoteError);
  // An address outside the allocation.
  EXPECT_EQ(peers.resolve(1, getpid(), region, region.base + region.bytes, &view2),
            weftRemoteError);

  // Same free count: nothing checked, nothing dropped.
  peers.noteFrees(1, getpid(), 0);
  EXPECT_EQ(peers.mappedCount(1), 1u);
  ASSERT_EQ(weftHostFree(mem), weftSuccess);
  peers.noteFrees(1, getpid(), weft::hostFreeCount());
  EXPECT_EQ(peers.mappedCount(1), 0u) << "the freed allocation stayed mapped";
}

TEST(PeerMemory, APeerThatExitedIsARemoteError) {
  void* mem = nullptr;
  ASSERT_EQ(weftHostAlloc(&mem, 4096), weftSuccess);
  HostRegion region = findHostRegion(mem, 4096);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(0);
  ASSERT_EQ(waitpid(child, nullptr, 0), child);
  // The region as the exited process would have published it.
  PeerMemory peers(2);
  char* view = nullptr;
  EXPECT_EQ(peers.resolve(1, child, region, region.base, &view), weftRemoteError);
  EXPECT_NE(std::string(weftGetLastError(nullptr)).find("local rank 1"), std::string::npos)
      << weftGetLastError(nullptr);
  EXPECT_EQ(weftHostFree(mem), weftSuccess);
}

TEST(PeerMemory, BoundedPerPeer) {
  PeerMemory peers(2);
  std::vector<void*> mems;
  for (size_t i = 0; i < PeerMemory::kMaxMappingsPerPeer + 3; ++i) {
    void* mem = nullptr;
    ASSERT_EQ(weftHostAlloc(&mem, 4096), weftSuccess);
    mems.push_back(mem);
    HostRegion region = findHostRegion(mem, 4096);
    char* view = nullptr;
    ASSERT_EQ(peers.resolve(1, getpid(), region, region.base, &view), weftSuccess);
    static_cast<char*>(mem)[0] = static_cast<char>(i);
    EXPECT_EQ(view[0], static_cast<char>(i));
  }
  EXPECT_EQ(peers.mappedCount(1), PeerMemory::kMaxMappingsPerPeer);
  for (void* mem : mems) EXPECT_EQ(weftHostFree(mem), weftSuccess);
}

TEST(StreamCopy, EqualsMemcpyAtEveryAlignmentAndLength) {
  std::vector<unsigned char> src(70000), dst(70016), want(70016);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<unsigned char>(i * 131 + 7);
  for (size_t dstOff : {0, 1, 3, 8, 15}) {
    for (size_t srcOff : {0, 5}) {
      for (size_t len : {0, 1, 63, 255, 256, 257, 1000, 4096, 65537}) {
        std::memset(dst.data(), 0xee, dst.size());
        std::memset(want.data(), 0xee, want.size());
        std::memcpy(want.data() + dstOff, src.data() + srcOff, len);
        weft::copyStreaming(dst.data() + dstOff, src.data() + srcOff, len);
        ASSERT_EQ(dst, want) << "dst+" << dstOff << " src+" << srcOff << " len " << len;
      }
    }
  }
}

}  // namespace

// LoadedLibraryWatch (src/device/loaded_library_watch.h): the answer to
// "has the process loaded CUDA's driver?" with fake loader functions, and the
// interleaving that a GPU run hit: one thread read "not loaded" just before
// another thread's scan found the library, and the scanned count just after.
#include "device/loaded_library_watch.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace {

std::atomic<unsigned long long> gAdds{1};  // the loader's count of loaded objects
std::atomic<bool> gLibrary{false};         // whether "libcuda" is among them
std::atomic<int> gCounts{0}, gScans{0};
// A thread with tHoldInCount set waits inside count() until gRelease.
thread_local bool tHoldInCount = false;
std::atomic<bool> gHeld{false}, gRelease{false};

unsigned long long fakeCount() {
  gCounts.fetch_add(1);
  if (tHoldInCount) {
    gHeld.store(true);
    while (!gRelease.load()) std::this_thread::yield();
  }
  return gAdds.load();
}
bool fakeFind() {
  gScans.fetch_add(1);
  return gLibrary.load();
}

class LoadedLibraryWatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    gAdds = 1;
    gLibrary = false;
    gCounts = 0;
    gScans = 0;
    gHeld = false;
    gRelease = false;
  }
};

TEST_F(LoadedLibraryWatchTest, ScansOnlyWhenTheLoaderCountMovesAndStaysLoaded) {
  weft::LoadedLibraryWatch watch(fakeCount, fakeFind);
  EXPECT_FALSE(watch.loaded());
  EXPECT_FALSE(watch.loaded());
  EXPECT_EQ(gScans.load(), 1) << "the same loader count must not be scanned twice";
  gAdds = 2;  // some other library loaded
  EXPECT_FALSE(watch.loaded());
  EXPECT_EQ(gScans.load(), 2);
  gAdds = 3;
  gLibrary = true;
  EXPECT_TRUE(watch.loaded());
  const int counts = gCounts.load();
  EXPECT_TRUE(watch.loaded());
  EXPECT_EQ(gCounts.load(), counts) << "once loaded, the answer needs no loader call";
}

TEST_F(LoadedLibraryWatchTest, MarkLoadedAnswersWithoutAScan) {
  weft::LoadedLibraryWatch watch(fakeCount, fakeFind);
  watch.markLoaded();
  EXPECT_TRUE(watch.loaded());
  EXPECT_EQ(gScans.load(), 0);
}

// Thread B reads "not loaded", then stops inside count(); thread A's scan
// finds the library and stores the count; B's count equals it. B must answer
// "loaded" (it answered "not loaded" when the scan stored the count first and
// a caller at a scanned count returned false without looking again).
TEST_F(LoadedLibraryWatchTest, ACallerAtTheCountAnotherThreadJustScannedSeesItsAnswer) {
  weft::LoadedLibraryWatch watch(fakeCount, fakeFind);
  EXPECT_FALSE(watch.loaded());  // scanned at count 1: not loaded
  gAdds = 2;                     // the application loads the driver
  gLibrary = true;
  bool answerB = false;
  std::thread b([&] {
    tHoldInCount = true;
    answerB = watch.loaded();
  });
  while (!gHeld.load()) std::this_thread::yield();  // B is past its first check
  EXPECT_TRUE(watch.loaded());                      // A scans count 2: found
  gRelease = true;
  b.join();
  EXPECT_TRUE(answerB) << "B asked after the driver was loaded and was told it was not";
}

}  // namespace

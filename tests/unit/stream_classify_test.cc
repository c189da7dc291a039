// A call on a stream asks the runtime what each of its buffers is once: the
// buffer checks of validateCall and the staging plan share one classification
// (alone and in a group), and the results are the same as before.
#include <gtest/gtest.h>
#include <weft/weft.h>

#include "device/fake_runtime.h"
#include "spy_stream_fixture.h"

namespace {

namespace fake = weft::fake;
using StreamClassify = weft_test::SpyStreamTest;

TEST_F(StreamClassify, EachBufferOnce) {
  ASSERT_EQ(weftAllReduce(send_, recv_, kCount, weftFloat, weftSum, comm_, stream_), weftSuccess)
      << weftGetLastError(nullptr);
  EXPECT_EQ(spy_->classifies.load(), 2);  // sendbuff, recvbuff
  fake::streamSync(stream_);
  EXPECT_TRUE(holdsInput(recv_));
  // Pinned buffers (run without staging copies): the same.
  auto* pin = static_cast<float*>(fake::pinnedAlloc(kCount * sizeof(float)));
  spy_->classifies = 0;
  ASSERT_EQ(weftAllReduce(pin, pin, kCount, weftFloat, weftSum, comm_, stream_), weftSuccess);
  EXPECT_EQ(spy_->classifies.load(), 2);
  fake::streamSync(stream_);
  fake::memFree(pin);
}

TEST_F(StreamClassify, EachBufferOnceInAGroup) {
  float* other = newDeviceBuffer();
  ASSERT_EQ(weftGroupStart(), weftSuccess);
  ASSERT_EQ(weftAllReduce(send_, recv_, kCount, weftFloat, weftSum, comm_, stream_), weftSuccess);
  ASSERT_EQ(weftBroadcast(send_, other, kCount, weftFloat, 0, comm_, stream_), weftSuccess);
  ASSERT_EQ(weftGroupEnd(), weftSuccess) << weftGetLastError(nullptr);
  EXPECT_EQ(spy_->classifies.load(), 4);
  fake::streamSync(stream_);
  EXPECT_TRUE(holdsInput(recv_));
  EXPECT_TRUE(holdsInput(other));
  fake::memFree(other);
}

}  // namespace

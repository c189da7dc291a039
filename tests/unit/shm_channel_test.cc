// The shared-memory byte ring (transports/shm/shm_channel.h) between two
// threads of this process: every byte arrives once, in order, whatever the
// sizes of the sends and receives, including small sends that the receiver
// may take from the copy beside the tail counter while the sender is already
// rewriting it (a torn copy would show as a wrong byte).
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "transports/shm/doorbell.h"
#include "transports/shm/shm_channel.h"

namespace {

// The byte at stream offset i: varies within and across messages.
uint8_t patternAt(uint64_t i) { return static_cast<uint8_t>((i * 2654435761u) >> 13); }

// One FIFO with both ends, as a node's segment would hold it (zeroed memory).
struct Pipe {
  explicit Pipe(size_t capacity) : memory(weft::shmFifoFootprint(capacity) / 8 + 8, 0) {
    EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
    char* fifo = reinterpret_cast<char*>(memory.data());
    fifo += (64 - reinterpret_cast<uintptr_t>(fifo) % 64) % 64;
    sender =
        std::make_unique<weft::ShmChannel>(fifo, capacity, true, &receiverBell, fds[0], "receiver");
    receiver =
        std::make_unique<weft::ShmChannel>(fifo, capacity, false, &senderBell, fds[1], "sender");
  }
  ~Pipe() {
    close(fds[0]);
    close(fds[1]);
  }
  std::vector<uint64_t> memory;
  int fds[2] = {-1, -1};
  weft::Doorbell senderBell, receiverBell;
  std::unique_ptr<weft::ShmChannel> sender, receiver;
};

void sendAll(weft::Channel& ch, const uint8_t* data, size_t bytes) {
  while (bytes > 0) {
    size_t moved = 0;
    ASSERT_EQ(ch.trySend(data, bytes, &moved), weftSuccess);
    data += moved;
    bytes -= moved;
    if (moved == 0) std::this_thread::yield();
  }
}

TEST(ShmChannel, SmallSendsReadInAnyPiecesComeOutInOrder) {
  Pipe pipe(4096);
  std::vector<uint8_t> out(200);
  for (uint64_t i = 0; i < out.size(); ++i) out[i] = patternAt(i);
  // Two small sends before any receive: the copy beside the counter holds
  // only the second, so the first must come from the ring.
  sendAll(*pipe.sender, out.data(), 10);
  sendAll(*pipe.sender, out.data() + 10, 30);
  sendAll(*pipe.sender, out.data() + 40, 160);
  std::vector<uint8_t> in(200, 0);
  size_t got = 0;
  ASSERT_EQ(pipe.receiver->tryPeek(in.data(), 4, &got), weftSuccess);
  EXPECT_EQ(got, 4u);
  EXPECT_EQ(in[3], out[3]);
  for (size_t at = 0, piece = 1; at < in.size(); at += got, piece = piece % 37 + 3) {
    ASSERT_EQ(pipe.receiver->tryRecv(in.data() + at, std::min(piece, in.size() - at), &got),
              weftSuccess);
    ASSERT_GT(got, 0u);
  }
  EXPECT_EQ(in, out);
  ASSERT_EQ(pipe.receiver->tryRecv(in.data(), 1, &got), weftSuccess);
  EXPECT_EQ(got, 0u);
}

// A small ring that wraps often, random send sizes (mostly small enough for
// the inline copy) and random receive sizes, the two sides on two threads.
TEST(ShmChannel, ConcurrentSmallAndLargeSendsArriveIntact) {
  const size_t capacity = 512;
  const uint64_t total = 16 << 20;
  Pipe pipe(capacity);
  std::thread sender([&] {
    std::mt19937 rng(7);
    std::vector<uint8_t> buf(300);
    for (uint64_t at = 0; at < total;) {
      const size_t n =
          std::min<uint64_t>(rng() % 4 == 0 ? 1 + rng() % 300 : 1 + rng() % 48, total - at);
      for (size_t i = 0; i < n; ++i) buf[i] = patternAt(at + i);
      sendAll(*pipe.sender, buf.data(), n);
      at += n;
    }
  });
  std::mt19937 rng(11);
  std::vector<uint8_t> buf(300);
  uint64_t at = 0, wrong = 0;
  while (at < total) {
    const size_t want = std::min<uint64_t>(1 + rng() % 64, total - at);
    size_t got = 0;
    ASSERT_EQ(pipe.receiver->tryRecv(buf.data(), want, &got), weftSuccess);
    for (size_t i = 0; i < got; ++i) wrong += buf[i] != patternAt(at + i);
    at += got;
    if (got == 0) std::this_thread::yield();
  }
  sender.join();
  EXPECT_EQ(wrong, 0u);
  EXPECT_EQ(at, total);
}

}  // namespace

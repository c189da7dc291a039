// SpliceSender and TcpChannel::trySendStable over a real loopback TCP pair:
// every byte arrives in order through partial sends, a resume elsewhere is
// refused, a dead peer is an error and not a SIGPIPE, and (where the kernel
// references vmspliced pages) the bytes really went by reference.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cstring>
#include <thread>
#include <vector>

#include "base/error.h"
#include "loopback_tcp.h"
#include "transports/tcp/splice_sender.h"
#include "transports/tcp/tcp_transport.h"

namespace weft {
namespace {

// A connected loopback pair: [0] sends, [1] receives.
struct TcpPair {
  int fd[2] = {-1, -1};
  TcpPair() {
    std::vector<int> out, in;
    connectLoopbackPairs(1, &out, &in);
    fd[0] = out[0];
    fd[1] = in[0];
  }
  ~TcpPair() {
    for (int f : fd)
      if (f >= 0) close(f);
  }
};

std::vector<char> pattern(size_t n, unsigned seed) {
  std::vector<char> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<char>((i * 131 + seed) >> 3);
  return v;
}

// Reads exactly n bytes (blocking).
std::vector<char> readAll(int fd, size_t n) {
  std::vector<char> got(n);
  size_t have = 0;
  while (have < n) {
    ssize_t r = recv(fd, got.data() + have, n - have, 0);
    if (r <= 0) break;
    have += static_cast<size_t>(r);
  }
  got.resize(have);
  return got;
}

// Does this kernel reference vmspliced pages (rather than copy them)?
bool kernelReferencesPages() {
  int p[2];
  if (pipe(p) != 0) return false;
  alignas(4096) static char page[4096];
  std::memset(page, 'a', sizeof(page));
  iovec iov{page, sizeof(page)};
  bool ref = false;
  if (vmsplice(p[1], &iov, 1, 0) == static_cast<ssize_t>(sizeof(page))) {
    page[0] = 'b';
    char c = 0;
    ref = read(p[0], &c, 1) == 1 && c == 'b';
  }
  close(p[0]);
  close(p[1]);
  return ref;
}

TEST(SpliceSender, EveryByteArrivesInOrderThroughPartialSends) {
  TcpPair tcp;
  const size_t n = (24 << 20) + 12345;  // more than the socket takes at once
  std::vector<char> src = pattern(n + 7, 3);
  const char* data = src.data() + 7;  // misaligned start
  std::vector<char> got;
  std::thread reader([&] { got = readAll(tcp.fd[1], n); });
  SpliceSender sender(tcp.fd[0], "rank 1");
  ASSERT_TRUE(sender.usable());
  size_t off = 0, partial = 0;
  while (off < n) {
    size_t moved = 0;
    bool fallback = false;
    ASSERT_EQ(sender.trySend(data + off, n - off, &moved, &fallback), weftSuccess);
    ASSERT_FALSE(fallback);
    if (moved > 0 && sender.pending() > 0) ++partial;
    off += moved;
  }
  EXPECT_EQ(sender.pending(), 0u);
  reader.join();
  ASSERT_EQ(got.size(), n);
  EXPECT_EQ(std::memcmp(got.data(), data, n), 0);
  EXPECT_GT(partial, 0u) << "the socket never pushed back: the resume path went untested";
}

TEST(SpliceSender, AResumeAtAnotherAddressIsRefused) {
  TcpPair tcp;
  const size_t n = 16 << 20;
  std::vector<char> src = pattern(n, 5);
  SpliceSender sender(tcp.fd[0], "rank 1");
  size_t off = 0;
  // Nobody reads: the socket fills and the pipe keeps what it did not take.
  for (int i = 0; i < 1000 && sender.pending() == 0 && off < n; ++i) {
    size_t moved = 0;
    bool fallback = false;
    ASSERT_EQ(sender.trySend(src.data() + off, n - off, &moved, &fallback), weftSuccess);
    off += moved;
  }
  ASSERT_GT(sender.pending(), 0u);
  size_t moved = 0;
  bool fallback = false;
  EXPECT_EQ(sender.trySend(src.data(), n, &moved, &fallback), weftInternalError);
  EXPECT_NE(lastError().find("another address"), std::string::npos) << lastError();
}

TEST(SpliceSender, ADeadPeerIsAnErrorNotASignal) {
  signal(SIGPIPE, SIG_DFL);  // a SIGPIPE would kill this test
  TcpPair tcp;
  close(tcp.fd[1]);
  tcp.fd[1] = -1;
  std::vector<char> src = pattern(1 << 20, 7);
  SpliceSender sender(tcp.fd[0], "rank 1");
  weftResult_t r = weftSuccess;
  size_t off = 0;
  for (int i = 0; i < 1000 && r == weftSuccess; ++i) {
    size_t moved = 0;
    bool fallback = false;
    if (off == src.size()) off = 0;  // keep sending until the error shows
    r = sender.trySend(src.data() + off, src.size() - off, &moved, &fallback);
    off += moved;
    usleep(1000);
  }
  EXPECT_EQ(r, weftRemoteError);
  EXPECT_NE(lastError().find("rank 1"), std::string::npos) << lastError();
  sigset_t pending;
  sigpending(&pending);
  EXPECT_EQ(sigismember(&pending, SIGPIPE), 0) << "a SIGPIPE was left pending";
}

TEST(TcpChannelStable, LargeStableSendsGoByReferenceSmallOnesAreCopied) {
  if (!kernelReferencesPages()) GTEST_SKIP() << "SKIPPED: this kernel copies vmspliced pages";
  TcpPair tcp;
  TcpChannel ch(tcp.fd[0], "rank 1", 64 << 10);
  // Nobody reads yet, so whatever was passed by reference is still the
  // sender's pages when the reader finally looks.
  std::vector<char> big(256 << 10, 'a'), small(1000, 'a');
  size_t moved = 0;
  ASSERT_EQ(ch.trySendStable(small.data(), small.size(), &moved), weftSuccess);
  ASSERT_EQ(moved, small.size());
  size_t off = 0;
  while (off < big.size()) {
    ASSERT_EQ(ch.trySendStable(big.data() + off, big.size() - off, &moved), weftSuccess);
    off += moved;
  }
  std::memset(small.data(), 'b', small.size());
  std::memset(big.data(), 'b', big.size());
  std::vector<char> got = readAll(tcp.fd[1], small.size() + big.size());
  ASSERT_EQ(got.size(), small.size() + big.size());
  EXPECT_EQ(got[0], 'a') << "a send under WEFT_SOCKET_SPLICE must be a copy";
  EXPECT_EQ(got[small.size()], 'b') << "a stable send over WEFT_SOCKET_SPLICE went by copy";
}

TEST(TcpChannelStable, ACopySendCannotOvertakeAPendingOne) {
  TcpPair tcp;
  TcpChannel ch(tcp.fd[0], "rank 1", 64 << 10);
  std::vector<char> big(16 << 20, 'a');
  size_t off = 0, moved = 0;
  // Nobody reads: the socket fills and the pipe keeps what it did not take.
  for (int i = 0; i < 2000 && ch.pendingByReference() == 0 && off < big.size(); ++i) {
    ASSERT_EQ(ch.trySendStable(big.data() + off, big.size() - off, &moved), weftSuccess);
    off += moved;
  }
  ASSERT_GT(ch.pendingByReference(), 0u);
  char one = 'x';
  EXPECT_EQ(ch.trySend(&one, 1, &moved), weftInternalError);
  EXPECT_NE(lastError().find("overtook"), std::string::npos) << lastError();
}

}  // namespace
}  // namespace weft

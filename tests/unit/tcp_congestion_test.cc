// WEFT_SOCKET_CONGESTION (tcp_congestion.h): which connections count as
// inside one host, the check of a setting before any connection is made, and
// what a real loopback connection runs after each setting.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "loopback_tcp.h"
#include "transports/tcp/tcp_congestion.h"

namespace weft {
namespace {

sockaddr_storage v4(const char* text) {
  sockaddr_storage s{};
  auto* a = reinterpret_cast<sockaddr_in*>(&s);
  a->sin_family = AF_INET;
  EXPECT_EQ(inet_pton(AF_INET, text, &a->sin_addr), 1) << text;
  return s;
}

sockaddr_storage v6(const char* text) {
  sockaddr_storage s{};
  auto* a = reinterpret_cast<sockaddr_in6*>(&s);
  a->sin6_family = AF_INET6;
  EXPECT_EQ(inet_pton(AF_INET6, text, &a->sin6_addr), 1) << text;
  return s;
}

TEST(SameHost, LoopbackPeersAreInside) {
  EXPECT_TRUE(sameHostAddresses(v4("127.0.0.1"), v4("127.0.0.1")));
  EXPECT_TRUE(sameHostAddresses(v4("127.0.0.1"), v4("127.5.6.7")));
  EXPECT_TRUE(sameHostAddresses(v6("::1"), v6("::1")));
  EXPECT_TRUE(sameHostAddresses(v6("::ffff:127.0.0.1"), v6("::ffff:127.0.0.1")));
}

TEST(SameHost, OwnAddressIsInside) {
  EXPECT_TRUE(sameHostAddresses(v4("10.213.0.2"), v4("10.213.0.2")));
  EXPECT_TRUE(sameHostAddresses(v6("fd00::5"), v6("fd00::5")));
  // One end seen through an IPv4-mapped IPv6 socket, the other plain.
  EXPECT_TRUE(sameHostAddresses(v4("10.213.0.2"), v6("::ffff:10.213.0.2")));
  EXPECT_TRUE(sameHostAddresses(v6("::ffff:10.213.0.2"), v4("10.213.0.2")));
}

TEST(SameHost, OtherAddressesAreOutside) {
  EXPECT_FALSE(sameHostAddresses(v4("10.213.0.2"), v4("10.213.0.3")));
  EXPECT_FALSE(sameHostAddresses(v6("fd00::5"), v6("fd00::6")));
  EXPECT_FALSE(sameHostAddresses(v6("::ffff:10.213.0.2"), v6("::ffff:10.213.0.3")));
  EXPECT_FALSE(sameHostAddresses(v4("10.213.0.2"), v6("fd00::5")));
  // Loopback on our side says nothing about a peer elsewhere.
  EXPECT_FALSE(sameHostAddresses(v4("127.0.0.1"), v4("10.213.0.3")));
  sockaddr_storage unknown{};
  EXPECT_FALSE(sameHostAddresses(v4("10.213.0.2"), unknown));
}

TEST(CongestionSetting, KeywordsAndRenoPass) {
  EXPECT_EQ(checkCongestionSetting("auto"), weftSuccess);
  EXPECT_EQ(checkCongestionSetting("system"), weftSuccess);
  EXPECT_EQ(checkCongestionSetting("reno"), weftSuccess) << weftGetLastError(nullptr);
}

TEST(CongestionSetting, BadNamesSayWhichVariable) {
  for (const char* bad : {"", "no_such_algorithm", "nosuchcc"}) {
    EXPECT_EQ(checkCongestionSetting(bad), weftInvalidArgument) << bad;
    const std::string text = weftGetLastError(nullptr);
    EXPECT_NE(text.find(std::string("WEFT_SOCKET_CONGESTION=") + bad), std::string::npos) << text;
  }
}

// A connected loopback pair: client end a, accepted end b.
struct LoopbackPair {
  int a = -1, b = -1;
  LoopbackPair() {
    std::vector<int> out, in;
    connectLoopbackPairs(1, &out, &in);
    a = out[0];
    b = in[0];
  }
  ~LoopbackPair() {
    close(a);
    close(b);
  }
};

std::string systemDefault() {
  std::ifstream in("/proc/sys/net/ipv4/tcp_congestion_control");
  std::string name;
  in >> name;
  return name;
}

TEST(ApplyCongestion, AutoPutsLoopbackOnReno) {
  LoopbackPair pair;
  for (int fd : {pair.a, pair.b}) {
    CongestionOutcome got;
    ASSERT_EQ(applyCongestion(fd, "auto", &got), weftSuccess) << weftGetLastError(nullptr);
    EXPECT_TRUE(got.sameHost);
    EXPECT_EQ(got.running, "reno");
  }
}

TEST(ApplyCongestion, SystemLeavesTheDefault) {
  const std::string def = systemDefault();
  if (def.empty()) GTEST_SKIP() << "SKIPPED: /proc/sys/net/ipv4/tcp_congestion_control unreadable";
  LoopbackPair pair;
  CongestionOutcome got;
  ASSERT_EQ(applyCongestion(pair.a, "system", &got), weftSuccess);
  EXPECT_TRUE(got.sameHost);
  EXPECT_EQ(got.running, def);
}

TEST(ApplyCongestion, ANameIsSetWhateverTheAddresses) {
  LoopbackPair pair;
  // Start from something else where the kernel offers it, so the change shows.
  const char* other = "bbr";
  setsockopt(pair.a, IPPROTO_TCP, TCP_CONGESTION, other, strlen(other));
  CongestionOutcome got;
  ASSERT_EQ(applyCongestion(pair.a, "reno", &got), weftSuccess) << weftGetLastError(nullptr);
  EXPECT_EQ(got.running, "reno");
  EXPECT_EQ(applyCongestion(pair.a, "nosuchcc", &got), weftInvalidArgument);
  EXPECT_NE(std::string(weftGetLastError(nullptr)).find("WEFT_SOCKET_CONGESTION=nosuchcc"),
            std::string::npos);
}

}  // namespace
}  // namespace weft

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

#include "base/error.h"
#include "loopback_tcp.h"
#include "transports/tcp/tcp_congestion.h"

namespace weft {
namespace {

// An address from its text, IPv4 or IPv6 (the port is irrelevant here).
sockaddr_storage ip(const char* text) {
  sockaddr_storage s{};
  auto* a4 = reinterpret_cast<sockaddr_in*>(&s);
  auto* a6 = reinterpret_cast<sockaddr_in6*>(&s);
  if (inet_pton(AF_INET, text, &a4->sin_addr) == 1) {
    a4->sin_family = AF_INET;
  } else {
    EXPECT_EQ(inet_pton(AF_INET6, text, &a6->sin6_addr), 1) << text;
    a6->sin6_family = AF_INET6;
  }
  return s;
}

TEST(SameHost, LoopbackPeersAreInside) {
  EXPECT_TRUE(sameHostAddresses(ip("127.0.0.1"), ip("127.0.0.1")));
  EXPECT_TRUE(sameHostAddresses(ip("127.0.0.1"), ip("127.5.6.7")));
  EXPECT_TRUE(sameHostAddresses(ip("::1"), ip("::1")));
  EXPECT_TRUE(sameHostAddresses(ip("::ffff:127.0.0.1"), ip("::ffff:127.0.0.1")));
}

TEST(SameHost, OwnAddressIsInside) {
  EXPECT_TRUE(sameHostAddresses(ip("10.213.0.2"), ip("10.213.0.2")));
  EXPECT_TRUE(sameHostAddresses(ip("fd00::5"), ip("fd00::5")));
  // One end seen through an IPv4-mapped IPv6 socket, the other plain.
  EXPECT_TRUE(sameHostAddresses(ip("10.213.0.2"), ip("::ffff:10.213.0.2")));
  EXPECT_TRUE(sameHostAddresses(ip("::ffff:10.213.0.2"), ip("10.213.0.2")));
}

TEST(SameHost, OtherAddressesAreOutside) {
  EXPECT_FALSE(sameHostAddresses(ip("10.213.0.2"), ip("10.213.0.3")));
  EXPECT_FALSE(sameHostAddresses(ip("fd00::5"), ip("fd00::6")));
  EXPECT_FALSE(sameHostAddresses(ip("::ffff:10.213.0.2"), ip("::ffff:10.213.0.3")));
  EXPECT_FALSE(sameHostAddresses(ip("10.213.0.2"), ip("fd00::5")));
  // Loopback on our side says nothing about a peer elsewhere.
  EXPECT_FALSE(sameHostAddresses(ip("127.0.0.1"), ip("10.213.0.3")));
  sockaddr_storage unknown{};
  EXPECT_FALSE(sameHostAddresses(ip("10.213.0.2"), unknown));
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

TEST(ApplyCongestion, AutoReplacesBbrBetweenHostsOnly) {
  auto names = [](bool sameHost, const char* running) {
    std::string out;
    for (const char* n : autoCongestion(sameHost, running))
      out += std::string(out.empty() ? "" : " ") + n;
    return out;
  };
  EXPECT_EQ(names(true, "bbr"), "reno");
  EXPECT_EQ(names(true, "cubic"), "reno");
  EXPECT_EQ(names(false, "bbr"), "cubic reno");
  EXPECT_EQ(names(false, "cubic"), "");
  EXPECT_EQ(names(false, "dctcp"), "");
  EXPECT_EQ(names(false, ""), "");
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

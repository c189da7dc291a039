// The rdma_cm setup's pure parts (transports/ib/ib_cm_wire.h): GID to socket
// address, the connect request's private data, and matching requests to QPs.
#include "transports/ib/ib_cm_wire.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <cstring>

namespace weft {
namespace {

TEST(IbCmWire, Ipv4MappedGidIsAnIpv4Address) {
  const uint8_t gid[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 77, 0, 1};
  sockaddr_storage ss;
  std::string why;
  ASSERT_TRUE(gidToSockaddr(gid, 4791, &ss, &why)) << why;
  ASSERT_EQ(ss.ss_family, AF_INET);
  const auto* in = reinterpret_cast<const sockaddr_in*>(&ss);
  EXPECT_EQ(ntohs(in->sin_port), 4791);
  EXPECT_EQ(ntohl(in->sin_addr.s_addr), 0x0a4d0001u);
  EXPECT_EQ(sockaddrText(reinterpret_cast<const sockaddr*>(&ss)), "10.77.0.1:4791");
}

TEST(IbCmWire, GlobalIpv6GidIsItsOwnAddress) {
  uint8_t gid[16];
  ASSERT_EQ(inet_pton(AF_INET6, "2001:db8::7", gid), 1);
  sockaddr_storage ss;
  std::string why;
  ASSERT_TRUE(gidToSockaddr(gid, 0, &ss, &why)) << why;
  ASSERT_EQ(ss.ss_family, AF_INET6);
  EXPECT_EQ(std::memcmp(&reinterpret_cast<const sockaddr_in6*>(&ss)->sin6_addr, gid, 16), 0);
  EXPECT_EQ(sockaddrText(reinterpret_cast<const sockaddr*>(&ss)), "[2001:db8::7]:0");
}

TEST(IbCmWire, LinkLocalAndEmptyGidsAreNoAddress) {
  // An InfiniBand port GID: the default subnet prefix fe80:: and a GUID.
  const uint8_t ib[16] = {0xfe, 0x80, 0,    0,    0, 0,    0,    0,
                          0x50, 0x6b, 0x4b, 0x03, 0, 0x12, 0x34, 0x56};
  const uint8_t zero[16] = {};
  sockaddr_storage ss;
  std::string why;
  EXPECT_FALSE(gidToSockaddr(ib, 1, &ss, &why));
  EXPECT_NE(why.find("link-local"), std::string::npos) << why;
  why.clear();
  EXPECT_FALSE(gidToSockaddr(zero, 1, &ss, &why));
  EXPECT_NE(why.find("empty"), std::string::npos) << why;
}

TEST(IbCmWire, SockaddrBackToGidForm) {
  sockaddr_in in{};
  in.sin_family = AF_INET;
  in.sin_addr.s_addr = htonl(0x0a4d0001);
  uint8_t raw[16];
  ASSERT_TRUE(sockaddrToGidForm(reinterpret_cast<const sockaddr*>(&in), raw));
  const uint8_t want[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 77, 0, 1};
  EXPECT_EQ(std::memcmp(raw, want, 16), 0);
  sockaddr_storage back;
  std::string why;
  ASSERT_TRUE(gidToSockaddr(raw, 7, &back, &why)) << why;
  EXPECT_EQ(sockaddrText(reinterpret_cast<const sockaddr*>(&back)), "10.77.0.1:7");
  sockaddr unix_{};
  unix_.sa_family = AF_UNIX;
  EXPECT_FALSE(sockaddrToGidForm(&unix_, raw));
}

TEST(IbCmWire, IpoibHardwareAddressCarriesThePortGid) {
  const uint8_t gid[16] = {0xfe, 0x80, 0,    0,    0, 0,    0,    0,
                           0x50, 0x6b, 0x4b, 0x03, 0, 0x12, 0x34, 0x56};
  const std::string ib0 = "80:00:02:08:fe:80:00:00:00:00:00:00:50:6b:4b:03:00:12:34:56";
  EXPECT_TRUE(ipoibAddressHasGid(ib0, gid));
  std::string other = ib0;
  other.back() = '7';
  EXPECT_FALSE(ipoibAddressHasGid(other, gid));
  EXPECT_FALSE(ipoibAddressHasGid("52:54:00:12:34:56", gid));  // Ethernet
  EXPECT_FALSE(ipoibAddressHasGid(ib0 + ":00", gid));          // too long
  EXPECT_FALSE(ipoibAddressHasGid("", gid));
  EXPECT_FALSE(ipoibAddressHasGid("zz" + ib0.substr(2), gid));
}

TEST(IbCmWire, HelloRoundTripsAndRejectsGarbage) {
  CmHello h;
  h.rank = 2;
  h.index = 3;
  h.nonce = 0xdeadbeef;
  uint8_t buf[56] = {};  // the transport pads private data (56 bytes for an RC connect)
  encodeCmHello(h, buf);
  EXPECT_EQ(std::memcmp(buf, "WFCM", 4), 0);  // fixed byte order on the wire
  CmHello got;
  ASSERT_TRUE(decodeCmHello(buf, sizeof(buf), &got));
  EXPECT_EQ(got.rank, 2u);
  EXPECT_EQ(got.index, 3u);
  EXPECT_EQ(got.nonce, 0xdeadbeefu);
  EXPECT_FALSE(decodeCmHello(buf, kCmHelloBytes - 1, &got));
  EXPECT_FALSE(decodeCmHello(nullptr, 0, &got));
  buf[0] ^= 1;
  EXPECT_FALSE(decodeCmHello(buf, sizeof(buf), &got));
}

TEST(IbCmWire, RequestBookMatchesEachExpectedRequestOnce) {
  // Rank 2 of 4 listens for 2 QPs from each of ranks 0 and 1 (they connect to
  // higher ranks); rank 3 connects to nobody here.
  CmRequestBook book({2, 2, 0, 0}, 77);
  EXPECT_EQ(book.outstanding(), 4);
  std::string why;
  CmHello h;
  h.nonce = 77;
  h.rank = 1;
  h.index = 1;
  EXPECT_TRUE(book.claim(h, &why)) << why;
  EXPECT_FALSE(book.claim(h, &why));  // the same QP twice
  EXPECT_NE(why.find("already"), std::string::npos) << why;
  h.index = 2;
  EXPECT_FALSE(book.claim(h, &why));  // no such QP
  h.rank = 3;
  h.index = 0;
  EXPECT_FALSE(book.claim(h, &why));  // a rank that listens itself
  h.rank = 9;
  EXPECT_FALSE(book.claim(h, &why));  // no such rank
  h.rank = 0;
  h.nonce = 78;
  EXPECT_FALSE(book.claim(h, &why));  // another listener's request
  EXPECT_NE(why.find("nonce"), std::string::npos) << why;
  EXPECT_EQ(book.outstanding(), 3);
  h.nonce = 77;
  for (uint32_t i : {0u, 1u}) {
    h.index = i;
    EXPECT_TRUE(book.claim(h, &why)) << why;
  }
  h.rank = 1;
  h.index = 0;
  EXPECT_TRUE(book.claim(h, &why)) << why;
  EXPECT_EQ(book.outstanding(), 0);
}

}  // namespace
}  // namespace weft

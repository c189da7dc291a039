// Checks the unique id's wire form (src/bootstrap/wire.h): pack/unpack must
// round-trip the root address and secret exactly, and an id that was edited
// (any single flipped byte) or truncated (tail zeroed, as a cut-off copy would
// be) must be rejected with a reason, because a rank that trusted it would
// dial the wrong root or present the wrong secret.
#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "bootstrap/wire.h"

namespace {

weft::UniqueIdBody sampleBody(int family) {
  weft::UniqueIdBody b{};
  b.magic = weft::kWireMagic;
  b.version = weft::kWireVersion;
  weft::SockAddr a;
  std::string why;
  const char* text = family == AF_INET ? "192.0.2.17:40123" : "[2001:db8::5]:61000";
  EXPECT_TRUE(weft::parseHostPort(text, &a, &why)) << why;
  b.root = weft::toWire(a);
  for (size_t i = 0; i < weft::kSecretBytes; ++i) b.secret[i] = static_cast<uint8_t>(i * 37 + 11);
  return b;
}

TEST(Wire, AddressRoundTripsThroughWireForm) {
  for (const char* text : {"127.0.0.1:1", "10.1.2.3:65535", "[::1]:80", "[fe80::1:2]:4242"}) {
    weft::SockAddr a, back;
    std::string why;
    ASSERT_TRUE(weft::parseHostPort(text, &a, &why)) << text << ": " << why;
    back = weft::fromWire(weft::toWire(a));
    EXPECT_EQ(back.str(), a.str()) << text;
    EXPECT_EQ(back.family(), a.family()) << text;
    EXPECT_EQ(back.port(), a.port()) << text;
  }
}

TEST(Wire, PackUnpackRoundTrip) {
  for (int family : {AF_INET, AF_INET6}) {
    weft::UniqueIdBody body = sampleBody(family);
    weftUniqueId id;
    std::memset(id.internal, 0x77, sizeof(id.internal));
    weft::packUniqueId(body, id.internal);
    weft::UniqueIdBody out{};
    std::string why;
    ASSERT_TRUE(weft::unpackUniqueId(id.internal, &out, &why)) << why;
    EXPECT_EQ(out.magic, weft::kWireMagic);
    EXPECT_EQ(out.version, weft::kWireVersion);
    EXPECT_EQ(0, std::memcmp(out.secret, body.secret, weft::kSecretBytes));
    EXPECT_EQ(0, std::memcmp(&out.root, &body.root, sizeof(out.root)));
    EXPECT_EQ(weft::fromWire(out.root).str(), weft::fromWire(body.root).str());
    // Packing clears the bytes past the body: an id never carries stale memory.
    for (size_t i = sizeof(weft::UniqueIdBody); i < sizeof(id.internal); ++i)
      ASSERT_EQ(id.internal[i], 0) << "byte " << i;
  }
}

TEST(Wire, EveryFlippedByteIsRejected) {
  weftUniqueId id;
  weft::packUniqueId(sampleBody(AF_INET), id.internal);
  for (size_t i = 0; i < sizeof(weft::UniqueIdBody); ++i) {
    for (unsigned char mask : {0x01, 0x80, 0xff}) {
      weftUniqueId bad = id;
      bad.internal[i] = static_cast<char>(bad.internal[i] ^ mask);
      weft::UniqueIdBody out{};
      std::string why;
      EXPECT_FALSE(weft::unpackUniqueId(bad.internal, &out, &why))
          << "byte " << i << " ^ " << static_cast<int>(mask) << " was accepted";
      EXPECT_FALSE(why.empty()) << "no reason for byte " << i;
    }
  }
}

TEST(Wire, TruncatedIdIsRejected) {
  weftUniqueId id;
  weft::packUniqueId(sampleBody(AF_INET6), id.internal);
  for (size_t keep = 0; keep < sizeof(weft::UniqueIdBody); ++keep) {
    weftUniqueId cut = id;
    std::memset(cut.internal + keep, 0, sizeof(cut.internal) - keep);
    weft::UniqueIdBody out{};
    std::string why;
    EXPECT_FALSE(weft::unpackUniqueId(cut.internal, &out, &why)) << "kept " << keep << " bytes";
    EXPECT_FALSE(why.empty()) << "kept " << keep << " bytes";
  }
}

TEST(Wire, RejectionReasonsNameTheProblem) {
  weftUniqueId id;
  weft::UniqueIdBody body = sampleBody(AF_INET);
  weft::UniqueIdBody out{};
  std::string why;

  std::memset(id.internal, 0, sizeof(id.internal));
  EXPECT_FALSE(weft::unpackUniqueId(id.internal, &out, &why));
  EXPECT_NE(why.find("magic"), std::string::npos) << why;

  weft::UniqueIdBody other = body;
  other.version = weft::kWireVersion + 1;
  weft::packUniqueId(other, id.internal);  // a valid checksum, another version
  EXPECT_FALSE(weft::unpackUniqueId(id.internal, &out, &why));
  EXPECT_NE(why.find("version"), std::string::npos) << why;

  other = body;
  other.root.family = 12345;
  weft::packUniqueId(other, id.internal);
  EXPECT_FALSE(weft::unpackUniqueId(id.internal, &out, &why));
  EXPECT_NE(why.find("family"), std::string::npos) << why;

  weft::packUniqueId(body, id.internal);
  id.internal[offsetof(weft::UniqueIdBody, secret)] ^= 1;
  EXPECT_FALSE(weft::unpackUniqueId(id.internal, &out, &why));
  EXPECT_NE(why.find("checksum"), std::string::npos) << why;
}

TEST(Wire, ChecksumIsFnv1a) {
  // Published FNV-1a 64 test vectors: "" and "a".
  EXPECT_EQ(weft::fnv1a("", 0), 0xcbf29ce484222325ull);
  EXPECT_EQ(weft::fnv1a("a", 1), 0xaf63dc4c8601ec8cull);
}

}  // namespace

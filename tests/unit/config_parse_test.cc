// Checks the small parsers every user-facing setting goes through: sizes with
// K/M/G suffixes (WEFT_CHUNK, WEFT_ONESHOT_MAX...), NCCL-style interface
// filters (WEFT_SOCKET_IFNAME) and host:port addresses (WEFT_ROOT_ADDR,
// torchrun's MASTER_ADDR). A parser that accepts garbage turns a typo into a
// silent misconfiguration, so rejections matter as much as values.
#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <string>

#include "base/config.h"
#include "base/error.h"
#include "bootstrap/socket.h"
#include "core/comm.h"

namespace {

TEST(ParseSize, PlainNumbersAndSuffixes) {
  struct Case {
    const char* text;
    int64_t want;
  };
  const Case cases[] = {
      {"0", 0},
      {"1", 1},
      {"123", 123},
      {"64K", 64 << 10},
      {"64k", 64 << 10},
      {"1M", 1 << 20},
      {"1m", 1 << 20},
      {"2G", int64_t{2} << 30},
      {"0K", 0},
      {"9223372036854775807", INT64_MAX},
      {"8589934591G", (int64_t{8589934591}) << 30},  // 2^63 - 2^30: the largest G that fits
  };
  for (const Case& c : cases) {
    int64_t v = -12345;
    EXPECT_TRUE(weft::parseSize(c.text, &v)) << c.text;
    EXPECT_EQ(v, c.want) << c.text;
  }
}

TEST(ParseSize, GarbageIsRejected) {
  for (const char* text : {"", "x", "K", "M", "64KB", "64 K", "1.5M", "12Q", "0x10", "1e3", "5 ",
                           "--1", "1MM", "abc123"}) {
    int64_t v = 777;
    EXPECT_FALSE(weft::parseSize(text, &v)) << "'" << text << "' was accepted as " << v;
    EXPECT_EQ(v, 777) << "'" << text << "' changed the output";
  }
}

TEST(ParseSize, OverflowIsRejected) {
  for (const char* text : {"9223372036854775808", "99999999999999999999", "8589934592G",
                           "9007199254740992M", "9223372036854775807K", "-9223372036854775809"}) {
    int64_t v = 777;
    EXPECT_FALSE(weft::parseSize(text, &v)) << "'" << text << "' was accepted as " << v;
  }
}

TEST(InterfaceMatches, EmptyFilterMatchesEverything) {
  EXPECT_TRUE(weft::interfaceMatches("", "eth0"));
  EXPECT_TRUE(weft::interfaceMatches("", "lo"));
}

TEST(InterfaceMatches, PrefixList) {
  EXPECT_TRUE(weft::interfaceMatches("eth", "eth0"));
  EXPECT_TRUE(weft::interfaceMatches("eth", "eth12"));
  EXPECT_TRUE(weft::interfaceMatches("eth", "eth"));
  EXPECT_FALSE(weft::interfaceMatches("eth", "ens3"));
  EXPECT_FALSE(weft::interfaceMatches("eth", "et"));
  EXPECT_TRUE(weft::interfaceMatches("eth,ib", "ib0"));
  EXPECT_TRUE(weft::interfaceMatches("eth,ib", "eth1"));
  EXPECT_FALSE(weft::interfaceMatches("eth,ib", "lo"));
  EXPECT_TRUE(weft::interfaceMatches("eth,", "eth0"));
  EXPECT_FALSE(weft::interfaceMatches(",", "eth0"));
}

TEST(InterfaceMatches, ExactWithEquals) {
  EXPECT_TRUE(weft::interfaceMatches("=eth0", "eth0"));
  EXPECT_FALSE(weft::interfaceMatches("=eth0", "eth01"));
  EXPECT_FALSE(weft::interfaceMatches("=eth0", "eth"));
  EXPECT_TRUE(weft::interfaceMatches("=eth0,ib1", "ib1"));
  EXPECT_FALSE(weft::interfaceMatches("=eth0,ib1", "ib10"));
}

TEST(InterfaceMatches, CaretExcludes) {
  EXPECT_FALSE(weft::interfaceMatches("^docker", "docker0"));
  EXPECT_TRUE(weft::interfaceMatches("^docker", "eth0"));
  EXPECT_FALSE(weft::interfaceMatches("^docker,lo", "lo"));
  EXPECT_FALSE(weft::interfaceMatches("^docker,lo", "docker1"));
  EXPECT_TRUE(weft::interfaceMatches("^docker,lo", "ib0"));
  // "^=" excludes exact names only.
  EXPECT_FALSE(weft::interfaceMatches("^=docker0", "docker0"));
  EXPECT_TRUE(weft::interfaceMatches("^=docker0", "docker01"));
}

weft::SockAddr mustParse(const std::string& text) {
  weft::SockAddr a;
  std::string why;
  EXPECT_TRUE(weft::parseHostPort(text, &a, &why)) << text << ": " << why;
  return a;
}

TEST(ParseHostPort, Ipv4) {
  weft::SockAddr a = mustParse("127.0.0.1:1234");
  EXPECT_EQ(a.family(), AF_INET);
  EXPECT_EQ(a.port(), 1234);
  EXPECT_EQ(a.str(), "127.0.0.1:1234");
  EXPECT_EQ(a.len, sizeof(sockaddr_in));
  EXPECT_EQ(mustParse("10.0.0.255:65535").port(), 65535);
  EXPECT_EQ(mustParse("10.0.0.1:0").port(), 0);
}

TEST(ParseHostPort, Ipv6InBrackets) {
  weft::SockAddr a = mustParse("[::1]:80");
  EXPECT_EQ(a.family(), AF_INET6);
  EXPECT_EQ(a.port(), 80);
  EXPECT_EQ(a.str(), "[::1]:80");
  EXPECT_EQ(a.len, sizeof(sockaddr_in6));
  EXPECT_EQ(mustParse("[2001:db8::1:2]:4242").str(), "[2001:db8::1:2]:4242");
}

TEST(ParseHostPort, NamesResolve) {
  weft::SockAddr a = mustParse("localhost:5555");
  EXPECT_TRUE(a.family() == AF_INET || a.family() == AF_INET6);
  EXPECT_EQ(a.port(), 5555);
}

TEST(ParseHostPort, BadInputIsRejectedWithAReason) {
  struct Case {
    const char* text;
    const char* mention;  // part of the reason
  };
  const Case cases[] = {
      {"127.0.0.1", "port"},
      {"127.0.0.1:", "port"},
      {"127.0.0.1:65536", "65536"},
      {"127.0.0.1:-1", "-1"},
      {"127.0.0.1:12a", "12a"},
      {"127.0.0.1:99999999999", "port"},
      {"[::1]", "[ipv6]:port"},
      {"[::1]80", "[ipv6]:port"},
      {"[::1", "[ipv6]:port"},
      {"[::1]:", "port"},
      {"[::1]:x", "x"},
      {"", "port"},
      {"no.such.host.invalid:80", "no.such.host.invalid"},
  };
  for (const Case& c : cases) {
    weft::SockAddr a;
    std::string why;
    EXPECT_FALSE(weft::parseHostPort(c.text, &a, &why)) << "'" << c.text << "' was accepted";
    EXPECT_NE(why.find(c.mention), std::string::npos) << "'" << c.text << "': " << why;
  }
}

TEST(ParseHostPort, SetPortChangesOnlyThePort) {
  weft::SockAddr a = mustParse("192.0.2.9:1");
  a.setPort(40000);
  EXPECT_EQ(a.str(), "192.0.2.9:40000");
  weft::SockAddr b = mustParse("[::1]:1");
  b.setPort(2);
  EXPECT_EQ(b.str(), "[::1]:2");
}

}  // namespace

namespace {

// readCommConfig: defaults with nothing set, and each bad value refused with a
// sentence naming the variable, its value and what it takes.
TEST(ReadCommConfig, DefaultsAndBadValues) {
  weft::CommConfig cfg;
  ASSERT_EQ(weft::readCommConfig(&cfg), weftSuccess) << weft::lastError();
  EXPECT_EQ(cfg.spliceMin, 64u << 10);
  EXPECT_EQ(cfg.spliceMaxCall, 512u << 10);
  EXPECT_EQ(cfg.nstreams, 1);
  EXPECT_EQ(cfg.bulkMin, 64u << 10);
  EXPECT_EQ(cfg.socketCongestion, "auto");
  EXPECT_EQ(cfg.yieldUs, 150);
  EXPECT_TRUE(cfg.spinAuto);
  struct Case {
    const char* name;
    const char* value;
    const char* sentence;
  };
  const Case cases[] = {
      {"WEFT_CHUNK", "32", "WEFT_CHUNK=32: expected a size from 64 to 64M"},
      {"WEFT_ONESHOT_MAX", "2G", "WEFT_ONESHOT_MAX=2G: expected a size up to 1G"},
      {"WEFT_SOCKET_NSTREAMS", "17", "WEFT_SOCKET_NSTREAMS=17: expected 1 to 16"},
      {"WEFT_SOCKET_SPLICE", "lots", "WEFT_SOCKET_SPLICE=lots: expected 0 (off) or a size"},
      {"WEFT_SOCKET_SPLICE_MAX", "-1", "WEFT_SOCKET_SPLICE_MAX=-1: expected a size"},
      {"WEFT_SHM_FIFO", "1K", "WEFT_SHM_FIFO=1K: expected a size from 4K to 1G"},
      {"WEFT_IB_QPS_PER_CONNECTION", "0", "WEFT_IB_QPS_PER_CONNECTION=0: expected 1 to 16"},
      {"WEFT_IB_RDMACM", "yes", "WEFT_IB_RDMACM=yes: expected 0 or 1"},
      // Every 0/1 switch: a value that used to pass silently as the default.
      {"WEFT_SHM_DISABLE", "yes", "WEFT_SHM_DISABLE=yes: expected 0 or 1"},
      {"WEFT_IB_DISABLE", "true", "WEFT_IB_DISABLE=true: expected 0 or 1"},
      {"WEFT_SHM_MAP", "off", "WEFT_SHM_MAP=off: expected 0 or 1"},
      {"WEFT_IB_REG_PERSIST", "2", "WEFT_IB_REG_PERSIST=2: expected 0 or 1"},
      {"WEFT_CHECK_CALLS", "", "WEFT_CHECK_CALLS=: expected 0 or 1"},
      {"WEFT_CHECK_THREADS", "no", "WEFT_CHECK_THREADS=no: expected 0 or 1"},
      {"WEFT_BIND_PROGRESS", "y", "WEFT_BIND_PROGRESS=y: expected 0 or 1"},
      {"WEFT_SOCKET_PER_DIRECTION", "lots",
       "WEFT_SOCKET_PER_DIRECTION=lots: expected 0 (off) or a size"},
      {"WEFT_GPU_RING", "2", "WEFT_GPU_RING=2: expected 0, 1 or shared"},
      {"WEFT_MAX_CTAS", "0", "WEFT_MAX_CTAS=0: expected 1 to 32"},
      {"WEFT_NTHREADS", "1024", "WEFT_NTHREADS=1024: expected 64, 128, 256 or 512"},
      {"WEFT_SPIN_US", "fast", "WEFT_SPIN_US=fast: expected auto or 0 to 1000000 (microseconds)"},
      {"WEFT_YIELD_US", "-5", "WEFT_YIELD_US=-5: expected 0 to 1000000 (microseconds)"},
      {"WEFT_SOCKET_CONGESTION", "warp", "WEFT_SOCKET_CONGESTION=warp: this kernel has no such"},
      {"WEFT_TIMEOUT", "0", "WEFT_TIMEOUT=0: expected a positive number of seconds"},
      {"WEFT_TIMEOUT", "5s", "WEFT_TIMEOUT=5s: expected a positive number of seconds"},
      {"WEFT_TIMEOUT", "nan", "WEFT_TIMEOUT=nan: expected a positive number of seconds"},
      {"WEFT_ALGO", "fastest",
       "WEFT_ALGO=fastest: expected auto, ring, oneshot, tree, hier, hier-leaf, rd, "
       "rhd or gpu-ring"},
      // Knobs read where they are used, refused at init rather than ignored.
      {"WEFT_DEBUG", "LOUD", "WEFT_DEBUG=LOUD: expected NONE, WARN, INFO or TRACE"},
      {"WEFT_REDUCE_ISA", "sse", "WEFT_REDUCE_ISA=sse: expected auto, avx512, avx2 or scalar"},
      {"WEFT_NET_GDR_LEVEL", "7", "WEFT_NET_GDR_LEVEL=7: expected PIX, PXB, PHB, NODE, PKG, SYS"},
      {"WEFT_SOCKET_FAMILY", "ipv4", "WEFT_SOCKET_FAMILY=ipv4: expected AF_INET or AF_INET6"},
      {"WEFT_IB_GID_INDEX", "-2", "WEFT_IB_GID_INDEX=-2: expected -1 (pick) or 0 to 255"},
      {"WEFT_IB_TC", "256", "WEFT_IB_TC=256: expected 0 to 255"},
      {"WEFT_IB_SL", "16", "WEFT_IB_SL=16: expected 0 to 15"},
      {"WEFT_IB_TIMEOUT", "0", "WEFT_IB_TIMEOUT=0: expected 1 to 31"},
      {"WEFT_IB_RETRY_CNT", "8", "WEFT_IB_RETRY_CNT=8: expected 0 to 7"},
      {"WEFT_SOCKET_CONGESTION", "a_name_far_too_long",
       "WEFT_SOCKET_CONGESTION=a_name_far_too_long: expected auto, system or the name"},
  };
  for (const Case& c : cases) {
    setenv(c.name, c.value, 1);
    weft::CommConfig bad;
    EXPECT_EQ(weft::readCommConfig(&bad), weftInvalidArgument) << c.name;
    EXPECT_NE(weft::lastError().find(c.sentence), std::string::npos)
        << c.name << ": " << weft::lastError();
    unsetenv(c.name);
  }
  setenv("WEFT_SOCKET_SPLICE", "0", 1);
  setenv("WEFT_SOCKET_SPLICE_MAX", "16M", 1);
  ASSERT_EQ(weft::readCommConfig(&cfg), weftSuccess) << weft::lastError();
  EXPECT_EQ(cfg.spliceMin, 0u);
  EXPECT_EQ(cfg.spliceMaxCall, 16u << 20);
  unsetenv("WEFT_SOCKET_SPLICE");
  unsetenv("WEFT_SOCKET_SPLICE_MAX");
  setenv("WEFT_SOCKET_CONGESTION", "reno", 1);  // every process may set Reno
  ASSERT_EQ(weft::readCommConfig(&cfg), weftSuccess) << weft::lastError();
  EXPECT_EQ(cfg.socketCongestion, "reno");
  unsetenv("WEFT_SOCKET_CONGESTION");
  setenv("WEFT_SPIN_US", "7", 1);  // a number is kept whatever the node
  weft::CommConfig spin;
  ASSERT_EQ(weft::readCommConfig(&spin), weftSuccess) << weft::lastError();
  EXPECT_FALSE(spin.spinAuto);
  EXPECT_EQ(spin.spinUs, 7);
  unsetenv("WEFT_SPIN_US");
  EXPECT_TRUE(cfg.gpuRing);
  EXPECT_FALSE(cfg.gpuRingShared);
  for (const char* value : {"0", "1", "shared"}) {
    setenv("WEFT_GPU_RING", value, 1);
    weft::CommConfig ring;
    ASSERT_EQ(weft::readCommConfig(&ring), weftSuccess) << weft::lastError();
    EXPECT_EQ(ring.gpuRing, std::string(value) != "0") << value;
    EXPECT_EQ(ring.gpuRingShared, std::string(value) == "shared") << value;
  }
  unsetenv("WEFT_GPU_RING");
  setenv("WEFT_SHM_DISABLE", "1", 1);
  setenv("WEFT_CHECK_CALLS", "0", 1);
  weft::CommConfig off;
  ASSERT_EQ(weft::readCommConfig(&off), weftSuccess) << weft::lastError();
  EXPECT_FALSE(off.shmEnabled);
  EXPECT_FALSE(off.checkCalls);
  unsetenv("WEFT_SHM_DISABLE");
  unsetenv("WEFT_CHECK_CALLS");
}

// The typed readers hold each knob to its row's type: asking a size knob for
// a switch is a programming error, not the user's.
// Choices are read in any case and returned as the row writes them; set but
// empty reads as the default; fractions of seconds are seconds.
TEST(ConfigTypes, ChoicesTakeAnyCaseAndSecondsTakeFractions) {
  std::string word;
  setenv("WEFT_ALGO", "Tree", 1);
  EXPECT_EQ(weft::configChoice("WEFT_ALGO", &word), weftSuccess);
  EXPECT_EQ(word, "tree");
  setenv("WEFT_ALGO", "", 1);
  EXPECT_EQ(weft::configChoice("WEFT_ALGO", &word), weftSuccess);
  EXPECT_EQ(word, "auto");
  unsetenv("WEFT_ALGO");
  setenv("WEFT_NET_GDR_LEVEL", "phb", 1);
  EXPECT_EQ(weft::configChoice("WEFT_NET_GDR_LEVEL", &word), weftSuccess);
  EXPECT_EQ(word, "PHB");
  unsetenv("WEFT_NET_GDR_LEVEL");
  EXPECT_EQ(weft::configChoice("WEFT_SOCKET_FAMILY", &word), weftSuccess);  // unset: either
  EXPECT_EQ(word, "");
  double seconds = 0;
  setenv("WEFT_TIMEOUT", "0.5", 1);
  EXPECT_EQ(weft::configSeconds("WEFT_TIMEOUT", &seconds), weftSuccess);
  EXPECT_EQ(seconds, 0.5);
  unsetenv("WEFT_TIMEOUT");
  bool isAuto = false;
  int64_t v = 0;
  EXPECT_EQ(weft::configSizeOrAuto("WEFT_SPIN_US", &isAuto, &v), weftSuccess);
  EXPECT_TRUE(isAuto);
  EXPECT_EQ(weft::configSeconds("WEFT_SPIN_US", &seconds), weftInternalError);
}

TEST(ConfigTypes, ReadersCheckTheRowsType) {
  bool on = false;
  std::string word;
  EXPECT_EQ(weft::configSwitch("WEFT_CHUNK", &on), weftInternalError);
  EXPECT_EQ(weft::configChoice("WEFT_SHM_DISABLE", &word), weftInternalError);
  EXPECT_EQ(weft::configSwitch("WEFT_SHM_MAP", &on), weftSuccess);
  EXPECT_TRUE(on);  // the table's default
  EXPECT_EQ(weft::configChoice("WEFT_NTHREADS", &word), weftSuccess);
  EXPECT_EQ(word, "512");
}

}  // namespace

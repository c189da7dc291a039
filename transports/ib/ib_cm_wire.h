// The pure parts of connection setup through librdmacm (WEFT_IB_RDMACM=1,
// ib_cm_connect.h), kept free of rdma-core so unit tests reach them: the IP
// address a RoCE GID stands for (and an IPoIB interface's GID), the private data a connect request
// carries, and which of our queue pairs an incoming request is for.
//
// Private data (16 bytes, little-endian, in the connect request):
//   magic u32 "WFCM" | rank u32 (the connecting rank) | index u32 (which QP of
//   the pair: stream * qpsPerStream + qp) | nonce u32 (the listener's own,
//   learnt through the bootstrap: a request from another communicator that
//   reached a reused port is refused).
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace weft {

// The socket address of a RoCE GID with `port` (host order): ::ffff:a.b.c.d
// (RoCE over IPv4) gives AF_INET a.b.c.d, any other global GID is its own IPv6
// address. False with a reason for a GID that names no usable address: zero,
// or link-local fe80:: (it would need an interface scope; InfiniBand port GIDs
// are fe80::GUID and no IP at all).
bool gidToSockaddr(const uint8_t gid[16], uint16_t port, sockaddr_storage* out, std::string* why);
// The reverse, for the bootstrap exchange: an IPv4 address as ::ffff:a.b.c.d,
// IPv6 as is; false for another family.
bool sockaddrToGidForm(const sockaddr* sa, uint8_t out[16]);
// "10.77.0.1:4791" or "[2001:db8::1]:4791"; "?" for another family.
std::string sockaddrText(const sockaddr* sa);

// True when an IPoIB hardware address as sysfs writes it ("80:00:02:08:fe:80:
// ...", 20 bytes: 4 of flags and QP number, then the port GID) holds `gid`
// (ib_cm_addr.h finds an InfiniBand port's IPoIB interface so).
bool ipoibAddressHasGid(const std::string& text, const uint8_t gid[16]);

struct CmHello {
  uint32_t rank = 0;
  uint32_t index = 0;
  uint32_t nonce = 0;
};
constexpr size_t kCmHelloBytes = 16;
constexpr uint32_t kCmHelloMagic = 0x4d434657;  // "WFCM" as little-endian bytes
void encodeCmHello(const CmHello& h, uint8_t out[kCmHelloBytes]);
// False for too few bytes or a wrong magic (the transport may pad the data).
bool decodeCmHello(const void* data, size_t bytes, CmHello* out);

// The listening side's book of the connect requests it expects: from each
// peer p, `expected[p]` of them, indices 0..expected[p]-1, each once, all
// carrying our nonce. claim() takes one or says why not.
class CmRequestBook {
 public:
  CmRequestBook(std::vector<int> expected, uint32_t nonce);
  bool claim(const CmHello& h, std::string* why);
  int outstanding() const { return outstanding_; }

 private:
  std::vector<std::vector<bool>> taken_;  // [peer][index]
  uint32_t nonce_;
  int outstanding_ = 0;
};

}  // namespace weft

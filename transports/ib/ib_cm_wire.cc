// See ib_cm_wire.h.
#include "transports/ib/ib_cm_wire.h"

#include <arpa/inet.h>

#include <cstdio>
#include <cstring>

namespace weft {
namespace {

void putLe32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

uint32_t getLe32(const uint8_t* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(p[i]) << (8 * i);
  return v;
}

}  // namespace

bool gidToSockaddr(const uint8_t gid[16], uint16_t port, sockaddr_storage* out, std::string* why) {
  static const uint8_t zero[16] = {};
  *out = sockaddr_storage{};
  if (std::memcmp(gid, zero, 16) == 0) {
    *why = "the GID is empty";
    return false;
  }
  if (std::memcmp(gid, zero, 10) == 0 && gid[10] == 0xff && gid[11] == 0xff) {
    auto* in = reinterpret_cast<sockaddr_in*>(out);
    in->sin_family = AF_INET;
    in->sin_port = htons(port);
    std::memcpy(&in->sin_addr, gid + 12, 4);
    return true;
  }
  if (gid[0] == 0xfe && (gid[1] & 0xc0) == 0x80) {
    *why = "the GID is link-local (fe80::), not an IP address peers can reach";
    return false;
  }
  auto* in6 = reinterpret_cast<sockaddr_in6*>(out);
  in6->sin6_family = AF_INET6;
  in6->sin6_port = htons(port);
  std::memcpy(&in6->sin6_addr, gid, 16);
  return true;
}

bool sockaddrToGidForm(const sockaddr* sa, uint8_t out[16]) {
  std::memset(out, 0, 16);
  if (sa->sa_family == AF_INET) {
    out[10] = out[11] = 0xff;
    std::memcpy(out + 12, &reinterpret_cast<const sockaddr_in*>(sa)->sin_addr, 4);
    return true;
  }
  if (sa->sa_family != AF_INET6) return false;
  std::memcpy(out, &reinterpret_cast<const sockaddr_in6*>(sa)->sin6_addr, 16);
  return true;
}

std::string sockaddrText(const sockaddr* sa) {
  char host[INET6_ADDRSTRLEN] = "";
  char text[INET6_ADDRSTRLEN + 16];
  if (sa->sa_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(sa);
    inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
    std::snprintf(text, sizeof(text), "%s:%u", host, ntohs(in->sin_port));
  } else if (sa->sa_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(sa);
    inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
    std::snprintf(text, sizeof(text), "[%s]:%u", host, ntohs(in6->sin6_port));
  } else {
    return "?";
  }
  return text;
}

bool ipoibAddressHasGid(const std::string& text, const uint8_t gid[16]) {
  uint8_t bytes[20];
  size_t n = 0, pos = 0;
  while (n < 20 && pos + 2 <= text.size()) {
    unsigned v = 0;
    if (std::sscanf(text.c_str() + pos, "%2x", &v) != 1) return false;
    bytes[n++] = static_cast<uint8_t>(v);
    pos += 2;
    if (pos < text.size() && text[pos] != ':') return false;
    ++pos;
  }
  return n == 20 && pos >= text.size() && std::memcmp(bytes + 4, gid, 16) == 0;
}

void encodeCmHello(const CmHello& h, uint8_t out[kCmHelloBytes]) {
  putLe32(out, kCmHelloMagic);
  putLe32(out + 4, h.rank);
  putLe32(out + 8, h.index);
  putLe32(out + 12, h.nonce);
}

bool decodeCmHello(const void* data, size_t bytes, CmHello* out) {
  const auto* p = static_cast<const uint8_t*>(data);
  if (p == nullptr || bytes < kCmHelloBytes || getLe32(p) != kCmHelloMagic) return false;
  out->rank = getLe32(p + 4);
  out->index = getLe32(p + 8);
  out->nonce = getLe32(p + 12);
  return true;
}

CmRequestBook::CmRequestBook(std::vector<int> expected, uint32_t nonce) : nonce_(nonce) {
  for (int n : expected) {
    taken_.emplace_back(static_cast<size_t>(n), false);
    outstanding_ += n;
  }
}

bool CmRequestBook::claim(const CmHello& h, std::string* why) {
  char text[160];
  if (h.nonce != nonce_) {
    std::snprintf(text, sizeof(text), "nonce %08x is not this listener's (%08x)", h.nonce, nonce_);
  } else if (h.rank >= taken_.size() || taken_[h.rank].empty()) {
    std::snprintf(text, sizeof(text), "no connection from rank %u is expected here", h.rank);
  } else if (h.index >= taken_[h.rank].size()) {
    std::snprintf(text, sizeof(text), "rank %u has no QP %u (it has %zu)", h.rank, h.index,
                  taken_[h.rank].size());
  } else if (taken_[h.rank][h.index]) {
    std::snprintf(text, sizeof(text), "QP %u of rank %u is connected already", h.index, h.rank);
  } else {
    taken_[h.rank][h.index] = true;
    --outstanding_;
    return true;
  }
  *why = text;
  return false;
}

}  // namespace weft

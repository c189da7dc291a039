// Conversions and checks for the bootstrap wire records (see wire.h).
#include "bootstrap/wire.h"

#include <cstring>

namespace weft {

WireAddr toWire(const SockAddr& a) {
  WireAddr w{};
  w.family = static_cast<uint16_t>(a.family());
  w.port = static_cast<uint16_t>(a.port());
  if (a.family() == AF_INET) {
    std::memcpy(w.addr, &reinterpret_cast<const sockaddr_in*>(&a.ss)->sin_addr, 4);
  } else if (a.family() == AF_INET6) {
    std::memcpy(w.addr, &reinterpret_cast<const sockaddr_in6*>(&a.ss)->sin6_addr, 16);
  }
  return w;
}

SockAddr fromWire(const WireAddr& w) {
  SockAddr a;
  if (w.family == AF_INET) {
    auto* in = reinterpret_cast<sockaddr_in*>(&a.ss);
    in->sin_family = AF_INET;
    std::memcpy(&in->sin_addr, w.addr, 4);
    a.len = sizeof(sockaddr_in);
  } else if (w.family == AF_INET6) {
    auto* in6 = reinterpret_cast<sockaddr_in6*>(&a.ss);
    in6->sin6_family = AF_INET6;
    std::memcpy(&in6->sin6_addr, w.addr, 16);
    a.len = sizeof(sockaddr_in6);
  }
  a.setPort(w.port);
  return a;
}

uint64_t fnv1a(const void* data, size_t bytes) {
  const auto* p = static_cast<const uint8_t*>(data);
  uint64_t h = 14695981039346656037ull;  // FNV-1a 64-bit offset basis
  for (size_t i = 0; i < bytes; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

std::string toHex(const void* data, size_t bytes) {
  static const char* digits = "0123456789abcdef";
  const auto* p = static_cast<const uint8_t*>(data);
  std::string out(2 * bytes, '0');
  for (size_t i = 0; i < bytes; ++i) {
    out[2 * i] = digits[p[i] >> 4];
    out[2 * i + 1] = digits[p[i] & 15];
  }
  return out;
}

int fromHex(const char* text, size_t bytes, void* out) {
  auto nibble = [](char ch) -> int {
    if (ch >= '0' && ch <= '9') return ch - '0';
    if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
    return -1;
  };
  auto* p = static_cast<uint8_t*>(out);
  for (size_t i = 0; i < 2 * bytes; i += 2) {
    const int hi = nibble(text[i]);
    if (hi < 0) return static_cast<int>(i);
    const int lo = nibble(text[i + 1]);
    if (lo < 0) return static_cast<int>(i + 1);
    p[i / 2] = static_cast<uint8_t>(hi << 4 | lo);
  }
  return -1;
}

void packUniqueId(const UniqueIdBody& body, char* raw) {
  std::memset(raw, 0, 128);
  UniqueIdBody b = body;
  b.checksum = fnv1a(&b, offsetof(UniqueIdBody, checksum));
  std::memcpy(raw, &b, sizeof(b));
}

bool unpackUniqueId(const char* raw, UniqueIdBody* body, std::string* why) {
  std::memcpy(body, raw, sizeof(*body));
  if (body->magic != kWireMagic) {
    *why = "it is not a weft unique id (bad magic); was it produced by weftGetUniqueId?";
    return false;
  }
  if (body->version != kWireVersion) {
    *why =
        "it comes from another weft version (wire version " + std::to_string(body->version) + ")";
    return false;
  }
  if (body->checksum != fnv1a(body, offsetof(UniqueIdBody, checksum))) {
    *why = "its checksum does not match (truncated or modified id)";
    return false;
  }
  if (body->root.family != AF_INET && body->root.family != AF_INET6) {
    *why = "its root address family is invalid";
    return false;
  }
  return true;
}

bool helloValid(const Hello& h, uint16_t kind, const uint8_t* secret) {
  return h.magic == kWireMagic && h.version == kWireVersion && h.kind == kind &&
         std::memcmp(h.secret, secret, kSecretBytes) == 0;
}

std::string rootReplyProblem(const RootReply& rep, int nranks) {
  if (rep.status != 0) return "the root reported a failure";
  if (rep.nranks != nranks) return "the root's table is for another rank count";
  if (rep.bytes != static_cast<uint64_t>(nranks) * sizeof(WireAddr))
    return "the root's table has the wrong size";
  return "";
}

}  // namespace weft

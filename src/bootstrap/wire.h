// Wire formats of the bootstrap. Fixed-size records, written with memcpy in the
// host's byte order: every rank of a job runs the same weft build on the same
// kind of (little-endian) host. `kWireVersion` changes whenever a record does,
// so mixed versions fail the magic/version check instead of misreading.
#pragma once

#include <cstdint>
#include <string>

#include "bootstrap/socket.h"

namespace weft {

constexpr uint32_t kWireMagic = 0x54464557;  // "WEFT"
constexpr uint16_t kWireVersion = 3;
constexpr size_t kSecretBytes = 32;
constexpr int kMaxRanks = 1 << 20;  // bounds every size we read from a peer

// An IPv4 or IPv6 address and port.
struct WireAddr {
  uint16_t family;  // AF_INET or AF_INET6
  uint16_t port;
  uint8_t addr[16];
};
static_assert(sizeof(WireAddr) == 20, "WireAddr is a wire format");

WireAddr toWire(const SockAddr& a);
SockAddr fromWire(const WireAddr& w);

// The unique id's contents (packed into weftUniqueId::internal, 128 bytes).
struct UniqueIdBody {
  uint32_t magic;
  uint16_t version;
  uint16_t flags;  // kIdSameUserOnly
  WireAddr root;
  uint8_t secret[kSecretBytes];
  uint64_t checksum;  // FNV-1a of the bytes before it: catches truncated or edited ids
};
static_assert(sizeof(UniqueIdBody) <= 128, "must fit weftUniqueId");
// The secret is derived from the job's address and size, which anyone may
// know: the job runs on loopback and admits only this user's connections
// (bootstrap/peer_user.h).
constexpr uint16_t kIdSameUserOnly = 1;

uint64_t fnv1a(const void* data, size_t bytes);
// Lowercase hex of `bytes` bytes (ids and secrets as text).
std::string toHex(const void* data, size_t bytes);
// Reads 2 * bytes hex digits of `text` into `out`: -1, or the offset of the
// first character that is not a hex digit.
int fromHex(const char* text, size_t bytes, void* out);
// Fills `body` from the 128 opaque bytes; false (and a reason) when invalid.
bool unpackUniqueId(const char* raw, UniqueIdBody* body, std::string* why);
void packUniqueId(const UniqueIdBody& body, char* raw);

// First message on every bootstrap connection (rank -> root and rank -> rank).
struct Hello {
  uint32_t magic;
  uint16_t version;
  uint16_t kind;  // kHelloRoot or kHelloPeer
  uint8_t secret[kSecretBytes];
  int32_t rank;
  int32_t nranks;
  uint32_t tag;     // what the peer connection is for (kHelloPeer)
  WireAddr listen;  // the sender's bootstrap listener (kHelloRoot)
};
constexpr uint16_t kHelloRoot = 1;
constexpr uint16_t kHelloPeer = 2;

// True when `h` is a Hello of `kind` carrying this job's secret (its rank
// fields are the reader's to check). Anything else (garbage, a stranger,
// another job) is dropped by whoever reads it.
bool helloValid(const Hello& h, uint16_t kind, const uint8_t* secret);

// Root -> rank after everyone arrived: header, then nranks WireAddr records,
// or status != 0 followed by `bytes` of error text.
struct RootReply {
  int32_t status;  // 0 ok
  int32_t nranks;
  uint32_t bytes;  // bytes that follow
  uint32_t reserved;
};

// Checks a root reply for a job of `nranks`: "" when it announces the rank
// table, else why it cannot be used (the error text that follows when status
// != 0 is bounded by the reader to 4096 bytes).
std::string rootReplyProblem(const RootReply& rep, int nranks);

// The root's connection to each rank stays open until that rank's
// initialisation ends, so that a rank dying between the rendezvous and the
// end of init fails the others at once instead of after WEFT_TIMEOUT:
//  - rank -> root: one InitReport (status 0 = ready, else `bytes` of text
//    saying why its init failed), then the rank closes;
//  - root -> rank: a RootReply with status kRootPeerFailed and the sentence
//    naming the rank that died or failed, or kRootStopWatching when the root
//    gives up watching (it never fails a rank for being slow).
// A connection that closes without its record is a process that died.
struct InitReport {
  int32_t status;
  uint32_t bytes;
};
constexpr int32_t kRootPeerFailed = 2;
constexpr int32_t kRootStopWatching = 3;
constexpr uint32_t kMaxNoticeBytes = 1024;  // bounds the text either side reads

}  // namespace weft

// libFuzzer targets for what weft reads from outside the process:
//   WEFT_FUZZ_UNIQUE_ID: the unique id's text form (weftUniqueIdFromString)
//     and its 128-byte body (unpackUniqueId, the root address inside it);
//   WEFT_FUZZ_WIRE: the bootstrap records a stranger can send (Hello,
//     RootReply), the call header peers exchange before each collective, and
//     the WEFT_SOCKET_IFNAME filter syntax.
// Built and run by run_fuzz.sh; a crash, sanitizer report or failed
// round-trip check (abort) fails the test.
#include <weft/weft.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "base/call_header.h"
#include "bootstrap/wire.h"

namespace {

void require(bool ok) {
  if (!ok) std::abort();
}

#ifdef WEFT_FUZZ_UNIQUE_ID
void fuzzUniqueId(const uint8_t* data, size_t size) {
  // Text form: any bytes, NUL-terminated.
  std::string text(reinterpret_cast<const char*>(data), size);
  weftUniqueId id;
  if (weftUniqueIdFromString(text.c_str(), &id) == weftSuccess) {
    char back[WEFT_UNIQUE_ID_STRLEN];
    require(weftUniqueIdToString(&id, back, sizeof(back)) == weftSuccess);
    require(strcasecmp(back, text.c_str()) == 0);
  } else {
    require(weftGetLastError(nullptr)[0] != '\0');
  }
  // Binary body: the first 128 bytes (zero-padded).
  char raw[WEFT_UNIQUE_ID_BYTES] = {};
  std::memcpy(raw, data, size < sizeof(raw) ? size : sizeof(raw));
  weft::UniqueIdBody body;
  std::string why;
  if (weft::unpackUniqueId(raw, &body, &why)) {
    std::string addr = weft::fromWire(body.root).str();
    require(!addr.empty());
    char again[WEFT_UNIQUE_ID_BYTES];
    weft::packUniqueId(body, again);
    weft::UniqueIdBody body2;
    require(weft::unpackUniqueId(again, &body2, &why));
  } else {
    require(!why.empty());
  }
}
#endif

#ifdef WEFT_FUZZ_WIRE
template <typename T>
T take(const uint8_t* data, size_t size, size_t at) {
  T v;
  std::memset(&v, 0, sizeof(v));
  if (at < size) std::memcpy(&v, data + at, size - at < sizeof(v) ? size - at : sizeof(v));
  return v;
}

void fuzzWire(const uint8_t* data, size_t size) {
  if (size == 0) return;
  const uint8_t secret[weft::kSecretBytes] = {1, 2, 3};
  switch (data[0] % 4) {
    case 0: {
      auto h = take<weft::Hello>(data, size, 1);
      bool ok = weft::helloValid(h, weft::kHelloRoot, secret);
      // Only a Hello carrying the secret may pass.
      require(!ok || std::memcmp(h.secret, secret, sizeof(secret)) == 0);
      (void)weft::fromWire(h.listen).str();
      break;
    }
    case 1: {
      auto rep = take<weft::RootReply>(data, size, 1);
      int nranks = size > 1 ? data[1] % 64 + 1 : 1;
      std::string problem = weft::rootReplyProblem(rep, nranks);
      require(!problem.empty() ||
              (rep.status == 0 && rep.bytes == nranks * sizeof(weft::WireAddr)));
      break;
    }
    case 2: {
      weft::CallCheck check;
      check.rank = 0;
      check.nranks = 4;
      check.mine.magic = weft::kCallMagic;
      check.mine.kind = 0;
      check.mine.datatype = weftFloat32;
      check.mine.count = 1024;
      check.mine.seq = 7;
      auto theirs = take<weft::CallHeader>(data, size, 1);
      weftResult_t r = weft::compareCall(check, 1, theirs);
      require(r == weftSuccess || r == weftInvalidUsage);
      require(r == weftSuccess || check.mismatch);
      (void)weft::describeHeader(theirs);
      break;
    }
    default: {
      std::string rest(reinterpret_cast<const char*>(data) + 1, size - 1);
      size_t cut = rest.find('\n');
      std::string filter = rest.substr(0, cut);
      std::string name = cut == std::string::npos ? "eth0" : rest.substr(cut + 1);
      (void)weft::interfaceMatches(filter, name);
      break;
    }
  }
}
#endif

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
#ifdef WEFT_FUZZ_UNIQUE_ID
  fuzzUniqueId(data, size);
#endif
#ifdef WEFT_FUZZ_WIRE
  fuzzWire(data, size);
#endif
  return 0;
}

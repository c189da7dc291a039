// mp_device: the multi-process test of calls on a CUDA stream, run with the
// fake CUDA of src/device/fake_runtime.h (no GPU needed): device buffers are
// PROT_NONE to the host, so weft reading one on the host would crash the
// rank.  weft-run -n N mp_device [--only G,..] [--layout A,B,..] [--peer-abort]
// --peer-abort runs only the failure case (give it a short WEFT_TIMEOUT);
// --peer-absent only the case of a rank that sits out a call (WEFT_TIMEOUT
// at most 30 s).
// --no-peer-access R: rank R cannot map its ring neighbours' GPU memory (the
// ring proxies those edges over shared memory).
#include <weft/weft.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "base/device_runtime.h"
#include "mp_device.h"
#include "mp_launch.h"

namespace mpdev {

bool callOk(Ctx& c, const std::string& what, weftResult_t r) {
  if (r == weftSuccess) return true;
  c.log->fail(what + ": returned " + weftGetErrorString(r) + ": " + weftGetLastError(nullptr));
  return false;
}

void expectSame(Ctx& c, const std::string& what, const std::string& cmp) {
  if (cmp.empty())
    c.log->pass();
  else
    c.log->fail(what + ": " + cmp);
}

void sync(Ctx& c) { weft::fake::streamSync(c.stream); }

}  // namespace mpdev

namespace {

struct Group {
  const char* name;
  bool (*run)(mpdev::Ctx&);
};

const Group kGroups[] = {
    {"collectives", mpdev::checkCollectives},
    {"inflight", mpdev::checkInFlight},
    {"stalled", mpdev::checkStalled},
    {"interleaved", mpdev::checkInterleaved},
    {"group", mpdev::checkGroup},
    {"badinput", mpdev::checkBadInput},
    {"ring", mpdev::checkRing},
    {"ringmixed", mpdev::checkRingMixed},
};

bool selected(const std::string& only, const char* name) {
  if (only.empty()) return true;
  return ("," + only + ",").find(std::string(",") + name + ",") != std::string::npos;
}

}  // namespace

int main(int argc, char** argv) {
  std::string only;
  bool peerAbort = false;
  bool peerAbsent = false;
  bool ringKill = false;
  int noPeerAccess = -1;
  const char* gdr = nullptr;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--only") && i + 1 < argc) {
      only = argv[++i];
    } else if (!std::strcmp(argv[i], "--layout") && i + 1 < argc) {
      if (!mp::applyLayout(argv[++i], "mp_device")) return 2;
    } else if (!std::strcmp(argv[i], "--no-peer-access") && i + 1 < argc) {
      noPeerAccess = std::atoi(argv[++i]);  // this rank's GPU ring mappings fail
    } else if (!std::strcmp(argv[i], "--gdr") && i + 1 < argc) {
      gdr = argv[++i];  // "all" or a rank: GPUDirect RDMA allowed there (fake::allowGdr)
    } else if (!std::strcmp(argv[i], "--peer-abort")) {
      peerAbort = true;
    } else if (!std::strcmp(argv[i], "--peer-absent")) {
      peerAbsent = true;
    } else if (!std::strcmp(argv[i], "--die") && i + 1 < argc &&
               !std::strcmp(argv[i + 1], "sigkill")) {
      ringKill = true;  // kill_rank_test.sh's interface
      ++i;
    } else {
      std::fprintf(stderr,
                   "usage: mp_device [--only G,..] [--layout A,B,..] [--no-peer-access RANK] "
                   "[--gdr all|RANK] [--peer-abort]\n"
                   "                 [--peer-absent] [--die sigkill]\n");
      return 2;
    }
  }
  weft::setDeviceRuntimeForTesting(weft::fake::runtime());
  const char* myRank = std::getenv("WEFT_RANK");
  if (noPeerAccess >= 0 && myRank != nullptr && std::atoi(myRank) == noPeerAccess)
    weft::fake::refusePeerAccess();
  if (gdr != nullptr &&
      (!std::strcmp(gdr, "all") || (myRank != nullptr && !std::strcmp(gdr, myRank))))
    weft::fake::allowGdr();
  mpdev::Ctx c;
  std::string why;
  if (!mp::launchInit(false, &argc, &argv, &c.comm, &why)) {
    std::fprintf(stderr, "mp_device: %s\n", why.c_str());
    return 1;
  }
  weftCommUserRank(c.comm, &c.rank);
  weftCommCount(c.comm, &c.nranks);
  mp::Log log(c.rank);
  c.log = &log;
  c.stream = weft::fake::streamCreate();
  if (ringKill) {
    mpdev::ringKill(c);
    return 1;  // survivors: their job failed, as kill_rank_test.sh expects
  }
  if (peerAbort) {
    mpdev::checkPeerAbort(c);
  } else if (peerAbsent) {
    mpdev::checkPeerAbsent(c);
  } else {
    for (const Group& g : kGroups) {
      if (!selected(only, g.name)) continue;
      if (!g.run(c)) {
        log.fail(std::string(g.name) + ": a call failed; skipping the remaining groups");
        break;
      }
    }
  }
  weft::fake::streamSync(c.stream);
  if (c.comm != nullptr) {
    weftResult_t r = peerAbort ? weftCommAbort(c.comm) : weftCommDestroy(c.comm);
    if (r != weftSuccess)
      log.fail(std::string("closing the communicator: ") + weftGetLastError(nullptr));
  }
  weft::fake::streamDestroy(c.stream);
  std::printf("rank %d: %d passed, %d failed\n", c.rank, log.passes(), log.failures());
  return log.failures() == 0 ? 0 : 1;
}

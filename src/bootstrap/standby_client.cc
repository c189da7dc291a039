// The standby pool's clients (see standby_pool.h): a standby's wait, a
// rank's lifeline, and the survivors' two questions. Each request opens its
// own connection, so a client holds nothing of the pool between calls but
// its lifeline.
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <vector>

#include "base/error.h"
#include "base/fork_close.h"
#include "bootstrap/standby_pool.h"

namespace weft {

namespace {

// This process's lifeline to the pool (standby_pool.h), never closed: the
// kernel closes it when the process ends, which is what the pool watches.
// A child forked without exec (a data loader's workers) must not keep it
// open past this process's death: it closes its copy at once
// (base/fork_close.h), and the number it inherits is not its lifeline.
std::mutex lifelineMu;
int lifelineFd = -1;
pid_t lifelineOwner = 0;

bool haveLifeline() { return lifelineFd >= 0 && lifelineOwner == getpid(); }

void keepLifeline(int fd) {
  closeInForkedChildren(fd);
  lifelineFd = fd;
  lifelineOwner = getpid();
}

void dropLifeline() {
  if (!haveLifeline()) return;
  keepInForkedChildren(lifelineFd);  // before the close: the number may be reused
  closeFd(&lifelineFd);
}

// "host:port/<hex secret>" -> the address and the secret.
weftResult_t parseAddr(const std::string& text, SockAddr* addr, uint8_t* secret) {
  const size_t slash = text.rfind('/');
  std::string why;
  if (slash == std::string::npos || text.size() - slash - 1 != 2 * kSecretBytes ||
      !parseHostPort(text.substr(0, slash), addr, &why))
    return setError(weftInvalidArgument,
                    "WEFT_STANDBY_ADDR=\"%s\" is not host:port/<64 hex digits> (set by the "
                    "launcher, e.g. weft-run --standby)%s%s",
                    text.c_str(), why.empty() ? "" : ": ", why.c_str());
  if (fromHex(text.c_str() + slash + 1, kSecretBytes, secret) >= 0)
    return setError(weftInvalidArgument, "WEFT_STANDBY_ADDR: the secret is not hex");
  return weftSuccess;
}

weftResult_t request(const std::string& text, StandbyRequest* req, int* fd,
                     double connectSec = 30.0) {
  SockAddr addr;
  req->magic = kStandbyMagic;
  WEFT_CHECK(parseAddr(text, &addr, req->secret));
  WEFT_CHECK(connectTo(addr, Deadline::after(connectSec), nullptr, "the standby pool", fd));
  const weftResult_t r = sendAll(*fd, req, sizeof(*req), Deadline::after(kStandbyRequestSec),
                                 nullptr, "the standby pool");
  if (r != weftSuccess) closeFd(fd);
  return r;
}

// A survivor's request and the pool's answer (its text NUL-terminated).
weftResult_t ask(const std::string& text, StandbyRequest* req, StandbyAnswer* answer,
                 double answerSec = 30.0) {
  int fd = -1;
  WEFT_CHECK(request(text, req, &fd));
  const weftResult_t r =
      recvAll(fd, answer, sizeof(*answer), Deadline::after(answerSec), nullptr, "the standby pool");
  closeFd(&fd);
  answer->text[sizeof(answer->text) - 1] = '\0';
  return r;
}

}  // namespace

weftResult_t standbyDeadRanks(const std::string& addr, std::vector<int>* dead, int* nranks) {
  StandbyRequest req{};
  req.kind = kStandbyDead;
  StandbyAnswer answer{};
  WEFT_CHECK(ask(addr, &req, &answer));
  if (answer.status != 0) return setError(weftInvalidUsage, "%s", answer.text);
  dead->assign(answer.ranks, answer.ranks + std::min<int32_t>(answer.count, kStandbyMaxAssign));
  *nranks = answer.nranks;
  return weftSuccess;
}

weftResult_t standbyWait(const std::string& addr, StandbyAnswer* place) {
  StandbyRequest req{};
  req.kind = kStandbyWait;
  req.pid = getpid();
  int fd = -1;
  WEFT_CHECK(request(addr, &req, &fd));
  // No deadline: a standby waits as long as the job runs.
  const weftResult_t r = recvAll(fd, place, sizeof(*place), Deadline(), nullptr, "the pool");
  if (r != weftSuccess) {
    closeFd(&fd);
    return setError(weftInvalidUsage,
                    "weftStandbyWait: the job ended without needing this standby (the standby "
                    "pool closed its connection)");
  }
  std::lock_guard<std::mutex> lock(lifelineMu);
  dropLifeline();
  keepLifeline(fd);  // open until the process ends
  return weftSuccess;
}

weftResult_t standbyLifeline(const std::string& addr, int rank, int nranks, int standbys) {
  std::lock_guard<std::mutex> lock(lifelineMu);
  if (haveLifeline()) return weftSuccess;
  StandbyRequest req{};
  req.kind = kStandbyLife;
  req.nranks = nranks;
  req.ranks[0] = rank;
  req.count = standbys;
  req.pid = getpid();
  int fd = -1;
  WEFT_CHECK(request(addr, &req, &fd, 5.0));  // init waits for it: a missing pool must not stall
  keepLifeline(fd);
  return weftSuccess;
}

weftResult_t standbyAssign(const std::string& addr, int nranks, const std::vector<int>& ranks,
                           const weftUniqueId& id, bool* assigned, std::string* why) {
  StandbyRequest req{};
  req.kind = kStandbyAssign;
  req.nranks = nranks;
  req.count = static_cast<int32_t>(ranks.size());
  if (ranks.empty() || ranks.size() > static_cast<size_t>(kStandbyMaxAssign))
    return setError(weftInvalidArgument, "%zu ranks to replace (1..%d at once)", ranks.size(),
                    kStandbyMaxAssign);
  for (size_t i = 0; i < ranks.size(); ++i) req.ranks[i] = ranks[i];
  std::memcpy(req.id, id.internal, sizeof(req.id));
  StandbyAnswer answer{};
  WEFT_CHECK(ask(addr, &req, &answer, kStandbyStartSec + 30.0));  // the pool may hold it
  *assigned = answer.status == 0;
  *why = answer.text;
  return weftSuccess;
}

}  // namespace weft

// The standby pool (see standby_pool.h): the server's thread and the two
// client calls. A request is read with a short deadline, so a silent
// stranger holds the pool at most that long; a request without the pool's
// secret is dropped with a warning.
#include "bootstrap/standby_pool.h"

#include <poll.h>
#include <sys/random.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "base/error.h"
#include "base/fork_close.h"
#include "base/log.h"

namespace weft {

namespace {

constexpr double kRequestSec = 2.0;  // to read a request or send an answer

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
  const weftResult_t r =
      sendAll(*fd, req, sizeof(*req), Deadline::after(kRequestSec), nullptr, "the standby pool");
  if (r != weftSuccess) closeFd(fd);
  return r;
}

// A survivor's request and the pool's answer (its text NUL-terminated).
weftResult_t ask(const std::string& text, StandbyRequest* req, StandbyAnswer* answer) {
  int fd = -1;
  WEFT_CHECK(request(text, req, &fd));
  const weftResult_t r =
      recvAll(fd, answer, sizeof(*answer), Deadline::after(30.0), nullptr, "the standby pool");
  closeFd(&fd);
  answer->text[sizeof(answer->text) - 1] = '\0';
  return r;
}

}  // namespace

struct StandbyPool::State {
  int listenFd = -1;
  int stopPipe[2] = {-1, -1};
  uint8_t secret[kSecretBytes];
  struct Waiting {
    int fd;
    int64_t pid;
  };
  std::deque<Waiting> waiting;  // standbys' connections, oldest first
  // Lifelines (pool thread only): a rank is dead when the lifeline that
  // holds it now ends; an older one's end (the process a standby replaced)
  // says nothing.
  struct Life {
    int fd;
    int rank;
    uint64_t id;
  };
  std::vector<Life> lives;
  std::map<int, uint64_t> holderOf;  // rank -> the lifeline holding it
  uint64_t nextLife = 1;
  std::thread thread;
  // Who holds which rank, from the launcher's thread and the pool's: under mu.
  std::mutex mu;
  std::map<int64_t, int> rankOfPid;
  std::set<int> dead;
  int jobRanks = 0;

  void run();
  void take(int fd);
  void assign(int fd, const StandbyRequest& req);
  void answerDead(int fd);
  void dropDeparted();
  void addLife(int fd, int rank, int nranks);
  void endLives(const std::vector<pollfd>& polled);
};

void StandbyPool::State::addLife(int fd, int rank, int nranks) {
  const uint64_t id = nextLife++;
  lives.push_back({fd, rank, id});
  holderOf[rank] = id;
  std::lock_guard<std::mutex> lock(mu);
  jobRanks = nranks;
  dead.erase(rank);
}

// `polled` lists the lifelines after the listener and the stop pipe: a
// lifeline sends nothing after its request, so any event is its end.
void StandbyPool::State::endLives(const std::vector<pollfd>& polled) {
  std::vector<Life> kept;
  for (size_t i = 0; i < lives.size(); ++i) {
    Life& life = lives[i];
    if (polled[i + 2].revents == 0) {
      kept.push_back(life);
      continue;
    }
    closeFd(&life.fd);
    auto holder = holderOf.find(life.rank);
    if (holder == holderOf.end() || holder->second != life.id) continue;
    holderOf.erase(holder);
    std::lock_guard<std::mutex> lock(mu);
    dead.insert(life.rank);
    WEFT_INFO(BOOTSTRAP, "standby pool: rank %d's process ended", life.rank);
  }
  lives.swap(kept);
}

void StandbyPool::State::dropDeparted() {
  for (auto it = waiting.begin(); it != waiting.end();) {
    pollfd p{it->fd, POLLIN, 0};
    if (poll(&p, 1, 0) > 0) {  // a waiting standby sends nothing: this is its end
      int fd = it->fd;
      closeFd(&fd);
      it = waiting.erase(it);
    } else {
      ++it;
    }
  }
}

void StandbyPool::State::answerDead(int fd) {
  StandbyAnswer answer{};
  {
    std::lock_guard<std::mutex> lock(mu);
    answer.nranks = jobRanks;
    for (int r : dead) {
      if (answer.count == kStandbyMaxAssign) break;
      answer.ranks[answer.count++] = r;
    }
    if (jobRanks == 0) {
      answer.status = 1;
      snprintf(answer.text, sizeof(answer.text),
               "no rank's process told this pool which rank it holds (no lifeline, and the "
               "launcher does not say)");
    }
  }
  sendAll(fd, &answer, sizeof(answer), Deadline::after(kRequestSec), nullptr, "a survivor");
  closeFd(&fd);
}

void StandbyPool::State::assign(int fd, const StandbyRequest& req) {
  StandbyAnswer answer{};
  dropDeparted();
  if (req.count < 1 || req.count > kStandbyMaxAssign || req.nranks < 1) {
    answer.status = 1;
    snprintf(answer.text, sizeof(answer.text), "a request for %d standbys of %d ranks", req.count,
             req.nranks);
  } else if (static_cast<int>(waiting.size()) < req.count) {
    answer.status = 1;
    snprintf(answer.text, sizeof(answer.text), "%d standby(s) wait, %d needed",
             static_cast<int>(waiting.size()), req.count);
  } else {
    for (int i = 0; i < req.count; ++i) {
      StandbyAnswer place{};
      place.rank = req.ranks[i];
      place.nranks = req.nranks;
      std::memcpy(place.id, req.id, sizeof(place.id));
      Waiting standby = waiting.front();
      waiting.pop_front();
      if (sendAll(standby.fd, &place, sizeof(place), Deadline::after(kRequestSec), nullptr,
                  "a standby") == weftSuccess) {
        addLife(standby.fd, place.rank, req.nranks);  // its wait connection is its lifeline now
      } else {
        closeFd(&standby.fd);
        clearError();
      }
      std::lock_guard<std::mutex> lock(mu);
      rankOfPid[standby.pid] = place.rank;  // its end is now that rank's death
      dead.erase(place.rank);
    }
    WEFT_INFO(BOOTSTRAP, "standby pool: %d standby(s) sent to replace ranks of %d", req.count,
              req.nranks);
  }
  sendAll(fd, &answer, sizeof(answer), Deadline::after(kRequestSec), nullptr, "a survivor");
  closeFd(&fd);
}

void StandbyPool::State::take(int fd) {
  StandbyRequest req{};
  if (recvAll(fd, &req, sizeof(req), Deadline::after(kRequestSec), nullptr, "a client") !=
          weftSuccess ||
      req.magic != kStandbyMagic || std::memcmp(req.secret, secret, kSecretBytes) != 0) {
    WEFT_WARN(BOOTSTRAP, "standby pool: dropped a connection without this job's secret");
    closeFd(&fd);
    return;
  }
  if (req.kind == kStandbyWait) {
    waiting.push_back({fd, req.pid});
    WEFT_INFO(BOOTSTRAP, "standby pool: %d standby(s) wait", static_cast<int>(waiting.size()));
  } else if (req.kind == kStandbyLife) {
    if (req.nranks < 1 || req.ranks[0] < 0 || req.ranks[0] >= req.nranks) {
      WEFT_WARN(BOOTSTRAP, "standby pool: dropped a lifeline for rank %d of %d", req.ranks[0],
                req.nranks);
      closeFd(&fd);
      return;
    }
    addLife(fd, req.ranks[0], req.nranks);
  } else if (req.kind == kStandbyDead) {
    answerDead(fd);
  } else {
    assign(fd, req);
  }
}

void StandbyPool::State::run() {
  std::vector<pollfd> fds;
  for (;;) {
    fds.assign({{listenFd, POLLIN, 0}, {stopPipe[0], POLLIN, 0}});
    for (const Life& life : lives) fds.push_back({life.fd, POLLIN, 0});
    // A second's wake-up drops the standbys that left meanwhile.
    if (poll(fds.data(), fds.size(), 1000) < 0 && errno != EINTR) break;
    if (fds[1].revents != 0) break;
    dropDeparted();
    endLives(fds);
    if (fds[0].revents & POLLIN) {
      int fd = -1;
      if (acceptOne(listenFd, Deadline::after(0.1), nullptr, &fd) == weftSuccess) take(fd);
      clearError();
    }
  }
  for (Waiting& w : waiting) closeFd(&w.fd);
  waiting.clear();
  for (Life& life : lives) closeFd(&life.fd);
  lives.clear();
}

weftResult_t StandbyPool::start(std::unique_ptr<StandbyPool>* pool, std::string* addr) {
  auto state = std::make_shared<State>();
  SockAddr here, bound;
  std::string ifname;
  WEFT_CHECK(pickInterface(&here, &ifname));
  here.setPort(0);
  WEFT_CHECK(listenOn(here, &state->listenFd, &bound));
  if (getrandom(state->secret, kSecretBytes, 0) != static_cast<ssize_t>(kSecretBytes) ||
      pipe(state->stopPipe) != 0) {
    closeFd(&state->listenFd);
    return setError(weftSystemError, "weftStandbyPoolStart: %s", strerror(errno));
  }
  state->thread = std::thread([state] { state->run(); });
  pool->reset(new StandbyPool());
  (*pool)->state_ = state;
  *addr = bound.str() + "/" + toHex(state->secret, kSecretBytes);
  return weftSuccess;
}

StandbyPool::~StandbyPool() {
  if (!state_) return;
  // The pipe is empty and ours, so the byte that tells the thread fits.
  const char stop = 1;
  if (write(state_->stopPipe[1], &stop, 1) == 1 && state_->thread.joinable())
    state_->thread.join();
  else if (state_->thread.joinable())
    state_->thread.detach();
  closeFd(&state_->listenFd);
  closeFd(&state_->stopPipe[0]);
  closeFd(&state_->stopPipe[1]);
}

void StandbyPool::rankStarted(int rank, int nranks, int64_t pid) {
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->rankOfPid[pid] = rank;
  state_->jobRanks = nranks;
  state_->dead.erase(rank);
}

void StandbyPool::processEnded(int64_t pid) {
  std::lock_guard<std::mutex> lock(state_->mu);
  auto it = state_->rankOfPid.find(pid);
  if (it == state_->rankOfPid.end()) return;  // a standby never used, or not ours
  state_->dead.insert(it->second);
  state_->rankOfPid.erase(it);
}

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

weftResult_t standbyLifeline(const std::string& addr, int rank, int nranks) {
  std::lock_guard<std::mutex> lock(lifelineMu);
  if (haveLifeline()) return weftSuccess;
  StandbyRequest req{};
  req.kind = kStandbyLife;
  req.nranks = nranks;
  req.ranks[0] = rank;
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
  WEFT_CHECK(ask(addr, &req, &answer));
  *assigned = answer.status == 0;
  *why = answer.text;
  return weftSuccess;
}

}  // namespace weft

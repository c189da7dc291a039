// The standby pool (see standby_pool.h): the server's thread; the clients
// are in standby_client.cc. A request is read with a short deadline, so a silent
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
#include "base/log.h"

namespace weft {

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
  // Standbys started but not yet waiting (a Python standby may spend seconds
  // importing before it calls weftStandbyWait): the launcher's by pid, and
  // those the ranks announce (WEFT_STANDBYS) less those that arrived. Under mu.
  std::set<int64_t> startingPids, arrivedPids;
  int announcedStandbys = 0;
  // Assign requests held while the standbys they lack are starting (pool thread only).
  struct Held {
    int fd;
    StandbyRequest req;
    Deadline until;
  };
  std::vector<Held> held;

  void run();
  void take(int fd);
  int startingStandbys();
  void standbyArrived(int64_t pid);
  bool assign(int fd, const StandbyRequest& req, const Deadline& until);
  void retryHeld();
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
  sendAll(fd, &answer, sizeof(answer), Deadline::after(kStandbyRequestSec), nullptr, "a survivor");
  closeFd(&fd);
}

int StandbyPool::State::startingStandbys() {
  std::lock_guard<std::mutex> lock(mu);
  const int announced = std::max(0, announcedStandbys - static_cast<int>(arrivedPids.size()));
  return static_cast<int>(startingPids.size()) + announced;
}

void StandbyPool::State::standbyArrived(int64_t pid) {
  std::lock_guard<std::mutex> lock(mu);
  arrivedPids.insert(pid);
  startingPids.erase(pid);
}

// Answers a survivors' request (true), or leaves it unanswered (false) while
// the standbys it lacks are still starting and `until` has not passed.
bool StandbyPool::State::assign(int fd, const StandbyRequest& req, const Deadline& until) {
  StandbyAnswer answer{};
  dropDeparted();
  const int waits = static_cast<int>(waiting.size());
  if (req.count < 1 || req.count > kStandbyMaxAssign || req.nranks < 1) {
    answer.status = 1;
    snprintf(answer.text, sizeof(answer.text), "a request for %d standbys of %d ranks", req.count,
             req.nranks);
  } else if (waits < req.count) {
    const int starting = startingStandbys();
    if (waits + starting >= req.count && !until.expired()) return false;
    answer.status = 1;
    snprintf(answer.text, sizeof(answer.text), "%d standby(s) wait, %d needed%s", waits, req.count,
             starting > 0 ? " (others were started but did not wait in time)" : "");
  } else {
    for (int i = 0; i < req.count; ++i) {
      StandbyAnswer place{};
      place.rank = req.ranks[i];
      place.nranks = req.nranks;
      std::memcpy(place.id, req.id, sizeof(place.id));
      Waiting standby = waiting.front();
      waiting.pop_front();
      if (sendAll(standby.fd, &place, sizeof(place), Deadline::after(kStandbyRequestSec), nullptr,
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
  sendAll(fd, &answer, sizeof(answer), Deadline::after(kStandbyRequestSec), nullptr, "a survivor");
  closeFd(&fd);
  return true;
}

void StandbyPool::State::retryHeld() {
  std::vector<Held> still;
  for (Held& h : held)
    if (!assign(h.fd, h.req, h.until)) still.push_back(h);
  held.swap(still);
}

void StandbyPool::State::take(int fd) {
  StandbyRequest req{};
  if (recvAll(fd, &req, sizeof(req), Deadline::after(kStandbyRequestSec), nullptr, "a client") !=
          weftSuccess ||
      req.magic != kStandbyMagic || std::memcmp(req.secret, secret, kSecretBytes) != 0) {
    WEFT_WARN(BOOTSTRAP, "standby pool: dropped a connection without this job's secret");
    closeFd(&fd);
    return;
  }
  if (req.kind == kStandbyWait) {
    waiting.push_back({fd, req.pid});
    standbyArrived(req.pid);
    WEFT_INFO(BOOTSTRAP, "standby pool: %d standby(s) wait", static_cast<int>(waiting.size()));
  } else if (req.kind == kStandbyLife) {
    if (req.nranks < 1 || req.ranks[0] < 0 || req.ranks[0] >= req.nranks) {
      WEFT_WARN(BOOTSTRAP, "standby pool: dropped a lifeline for rank %d of %d", req.ranks[0],
                req.nranks);
      closeFd(&fd);
      return;
    }
    addLife(fd, req.ranks[0], req.nranks);
    std::lock_guard<std::mutex> lock(mu);
    announcedStandbys = std::max(announcedStandbys, std::min(req.count, kStandbyMaxAnnounced));
  } else if (req.kind == kStandbyDead) {
    answerDead(fd);
  } else if (!assign(fd, req, Deadline::after(kStandbyStartSec))) {
    WEFT_INFO(BOOTSTRAP, "standby pool: a request for %d standby(s) waits for starting ones",
              req.count);
    held.push_back({fd, req, Deadline::after(kStandbyStartSec)});
  }
}

void StandbyPool::State::run() {
  std::vector<pollfd> fds;
  for (;;) {
    fds.assign({{listenFd, POLLIN, 0}, {stopPipe[0], POLLIN, 0}});
    for (const Life& life : lives) fds.push_back({life.fd, POLLIN, 0});
    // A second's wake-up drops the standbys that left meanwhile; held
    // requests look again every 20 ms (a standby's end is seen only here).
    if (poll(fds.data(), fds.size(), held.empty() ? 1000 : 20) < 0 && errno != EINTR) break;
    if (fds[1].revents != 0) break;
    dropDeparted();
    endLives(fds);
    if (fds[0].revents & POLLIN) {
      int fd = -1;
      if (acceptOne(listenFd, Deadline::after(0.1), nullptr, &fd) == weftSuccess) take(fd);
      clearError();
    }
    retryHeld();
  }
  for (Held& h : held) closeFd(&h.fd);  // the survivors read the end: the pool stopped
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

void StandbyPool::standbyStarted(int64_t pid) {
  std::lock_guard<std::mutex> lock(state_->mu);
  if (state_->arrivedPids.count(pid) == 0) state_->startingPids.insert(pid);
}

void StandbyPool::processEnded(int64_t pid) {
  std::lock_guard<std::mutex> lock(state_->mu);
  auto it = state_->rankOfPid.find(pid);
  state_->startingPids.erase(pid);            // a standby that will not wait
  if (it == state_->rankOfPid.end()) return;  // a standby never used, or not ours
  state_->dead.insert(it->second);
  state_->rankOfPid.erase(it);
}

}  // namespace weft

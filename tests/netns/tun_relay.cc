// weft-tun-relay: the emulated wide-area network of the netns test tier.
// It creates one TUN device in each named network namespace (the "nodes") and
// forwards every IPv4 packet a node sends to the node that owns the
// destination address, after a one-way delay and at a set rate: a star of
// links through one switch. Each node has an uplink (node -> switch) and a
// downlink (switch -> node) of `rate`; a packet occupies its sender's uplink
// for size/rate, travels `delay`, then leaves the destination's downlink no
// sooner than size/rate after the previous packet there. A link whose backlog
// exceeds --queue-kib drops packets (a full NIC queue), like a real switch.
// The TUN devices vanish when the relay exits (they are not persistent).
//
//   weft-tun-relay [--delay-us D] [--rate-mbit R] [--queue-kib Q] [--ready FILE]
//                  NETNS:IFNAME:IPV4 ...
//
// The namespaces must exist under /var/run/netns (ip netns add). The caller
// assigns the addresses and brings the devices up once FILE exists.
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <poll.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <arpa/inet.h>

#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <deque>
#include <string>
#include <vector>

namespace {

constexpr size_t kMaxPacket = 65536;

volatile sig_atomic_t gStop = 0;
void onSignal(int) { gStop = 1; }

int64_t nowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "weft-tun-relay: %s: %s\n", what.c_str(), std::strerror(errno));
  std::exit(1);
}

struct Packet {
  int64_t deliverNs;
  std::vector<char> data;
};

struct Node {
  std::string netns, ifname;
  uint32_t addr = 0;  // network byte order
  int fd = -1;
  int64_t upFreeNs = 0;      // when the uplink finishes its backlog
  int64_t downFreeNs = 0;    // when the downlink emitted its last queued packet
  std::deque<Packet> queue;  // towards this node, in delivery order
};

// Opens a TUN device named `ifname` inside network namespace `netns`; the
// device stays in that namespace whatever namespace this process returns to.
int openTunIn(const std::string& netns, const std::string& ifname, int homeNs) {
  std::string path = "/var/run/netns/" + netns;
  int nsfd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (nsfd < 0) die("open " + path);
  if (setns(nsfd, CLONE_NEWNET) != 0) die("setns " + path);
  close(nsfd);
  int fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) die("open /dev/net/tun");
  ifreq ifr{};
  ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
  std::snprintf(ifr.ifr_name, IFNAMSIZ, "%s", ifname.c_str());
  if (ioctl(fd, TUNSETIFF, &ifr) != 0) die("TUNSETIFF " + ifname + " in " + netns);
  if (setns(homeNs, CLONE_NEWNET) != 0) die("setns back home");
  return fd;
}

struct Options {
  int64_t delayNs = 0;
  double nsPerByte = 0;  // 0: no rate limit
  int64_t queueNs = -1;  // backlog beyond which a link drops; -1: unlimited
  size_t queueBytes = 16u << 20;
  std::string readyFile;
};

void usage() {
  std::fprintf(stderr,
               "usage: weft-tun-relay [--delay-us D] [--rate-mbit R] [--queue-kib Q] "
               "[--ready FILE] NETNS:IFNAME:IPV4 NETNS:IFNAME:IPV4 ...\n");
  std::exit(2);
}

std::vector<Node> parseArgs(int argc, char** argv, Options* o) {
  std::vector<Node> nodes;
  double rateMbit = 0;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage();
      return argv[++i];
    };
    if (a == "--delay-us") {
      o->delayNs = static_cast<int64_t>(std::atof(value().c_str()) * 1000);
    } else if (a == "--rate-mbit") {
      rateMbit = std::atof(value().c_str());
    } else if (a == "--queue-kib") {
      o->queueBytes = static_cast<size_t>(std::atoll(value().c_str())) << 10;
    } else if (a == "--ready") {
      o->readyFile = value();
    } else {
      size_t c1 = a.find(':'), c2 = a.find(':', c1 == std::string::npos ? 0 : c1 + 1);
      if (c1 == std::string::npos || c2 == std::string::npos) usage();
      Node n;
      n.netns = a.substr(0, c1);
      n.ifname = a.substr(c1 + 1, c2 - c1 - 1);
      in_addr ia{};
      if (inet_pton(AF_INET, a.substr(c2 + 1).c_str(), &ia) != 1) usage();
      n.addr = ia.s_addr;
      nodes.push_back(std::move(n));
    }
  }
  if (nodes.size() < 2) usage();
  if (rateMbit > 0) {
    o->nsPerByte = 8000.0 / rateMbit;  // 8 bits per byte at rateMbit * 1e6 bit/s, in ns
    o->queueNs = static_cast<int64_t>(static_cast<double>(o->queueBytes) * o->nsPerByte);
  }
  return nodes;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  std::vector<Node> nodes = parseArgs(argc, argv, &opt);
  prctl(PR_SET_TIMERSLACK, 1UL);  // wake for a 200 us deadline, not 50 us late
  std::signal(SIGINT, onSignal);
  std::signal(SIGTERM, onSignal);
  std::signal(SIGHUP, onSignal);
  int home = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
  if (home < 0) die("open /proc/self/ns/net");
  for (Node& n : nodes) n.fd = openTunIn(n.netns, n.ifname, home);
  if (!opt.readyFile.empty()) {
    FILE* f = std::fopen(opt.readyFile.c_str(), "w");
    if (f == nullptr) die("create " + opt.readyFile);
    std::fclose(f);
  }

  const size_t k = nodes.size();
  std::vector<pollfd> pfds(k);
  for (size_t i = 0; i < k; ++i) pfds[i] = {nodes[i].fd, POLLIN, 0};
  std::vector<std::vector<char>> spare;  // recycled packet buffers
  uint64_t forwarded = 0, dropped = 0, foreign = 0;
  std::vector<char> buf;

  while (!gStop) {
    // 1. Deliver everything that is due.
    int64_t now = nowNs();
    int64_t next = INT64_MAX;
    for (Node& n : nodes) {
      while (!n.queue.empty() && n.queue.front().deliverNs <= now) {
        Packet& p = n.queue.front();
        if (write(n.fd, p.data.data(), p.data.size()) < 0) ++dropped;
        spare.push_back(std::move(p.data));
        n.queue.pop_front();
      }
      if (!n.queue.empty() && n.queue.front().deliverNs < next) next = n.queue.front().deliverNs;
    }
    // 2. Wait for a packet or the next deadline. Waking from a sleep takes tens
    // of microseconds on a busy VM, so sleep until kSpinNs before it, then poll.
    constexpr int64_t kSpinNs = 40000;
    int64_t waitNs = next == INT64_MAX ? 100000000 : next - now - kSpinNs;
    if (waitNs < 0) waitNs = 0;
    timespec ts{static_cast<time_t>(waitNs / 1000000000), static_cast<long>(waitNs % 1000000000)};
    int rc = ppoll(pfds.data(), k, &ts, nullptr);
    if (rc < 0 && errno != EINTR) die("ppoll");
    if (rc <= 0) continue;
    // 3. Take in what the nodes sent and schedule it.
    for (size_t src = 0; src < k; ++src) {
      if (!(pfds[src].revents & POLLIN)) continue;
      for (int burst = 0; burst < 64; ++burst) {
        if (spare.empty()) {
          buf.assign(kMaxPacket, 0);
        } else {
          buf = std::move(spare.back());
          spare.pop_back();
          buf.resize(kMaxPacket);
        }
        ssize_t len = read(nodes[src].fd, buf.data(), buf.size());
        if (len < 0) {
          spare.push_back(std::move(buf));
          if (errno == EAGAIN || errno == EINTR) break;
          die("read from " + nodes[src].ifname + " in " + nodes[src].netns);
        }
        // IPv4 only: the destination address is at bytes 16..19.
        size_t dst = k;
        if (len >= 20 && (static_cast<unsigned char>(buf[0]) >> 4) == 4) {
          uint32_t daddr;
          std::memcpy(&daddr, buf.data() + 16, 4);
          for (size_t d = 0; d < k; ++d)
            if (nodes[d].addr == daddr && d != src) dst = d;
        }
        if (dst == k) {  // IPv6 chatter, broadcasts, unknown hosts
          ++foreign;
          spare.push_back(std::move(buf));
          continue;
        }
        int64_t t = nowNs();
        Node& s = nodes[src];
        Node& d = nodes[dst];
        int64_t ser = static_cast<int64_t>(static_cast<double>(len) * opt.nsPerByte);
        if (opt.queueNs >= 0 &&
            (s.upFreeNs - t > opt.queueNs || d.downFreeNs - t - opt.delayNs > opt.queueNs)) {
          ++dropped;  // a full queue: TCP backs off, as on a real link
          spare.push_back(std::move(buf));
          continue;
        }
        s.upFreeNs = std::max(t, s.upFreeNs) + ser;
        int64_t arrive = s.upFreeNs + opt.delayNs;
        d.downFreeNs = std::max(arrive, d.downFreeNs + ser);
        buf.resize(static_cast<size_t>(len));
        d.queue.push_back(Packet{d.downFreeNs, std::move(buf)});
        ++forwarded;
      }
    }
  }
  std::fprintf(stderr, "weft-tun-relay: %llu packets forwarded, %llu dropped, %llu not routed\n",
               static_cast<unsigned long long>(forwarded), static_cast<unsigned long long>(dropped),
               static_cast<unsigned long long>(foreign));
  for (Node& n : nodes) close(n.fd);
  return 0;
}

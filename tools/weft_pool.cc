// weft-pool: serves a standby pool for a job that another launcher starts
// (srun, mpirun, ...), as weft-run --standby does for its own jobs.
//   weft-pool [--addr-file FILE]
// Prints the pool's address (what WEFT_STANDBY_ADDR must say: host:port/
// secret) on its first line, or writes it to FILE, then serves until it gets
// SIGINT or SIGTERM. Ranks open their lifelines to it at init, standbys wait
// in it, and survivors ask it which ranks died and for replacements.
#include <pthread.h>
#include <signal.h>
#include <weft/weft.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

namespace {

void PrintUsage(FILE* out) {
  std::fprintf(out,
               "usage: weft-pool [--addr-file FILE]\n"
               "Serves a standby pool until SIGINT or SIGTERM. Its address (the value of\n"
               "WEFT_STANDBY_ADDR for every process of the job; it holds a secret) is the first\n"
               "line of stdout, or the content of FILE (written whole, then renamed).\n"
               "With srun or mpirun set WEFT_STANDBYS=K too: the launcher's last K processes\n"
               "are then standbys.\n");
}

bool WriteAddr(const std::string& file, const char* addr) {
  const std::string tmp = file + ".tmp";
  FILE* f = std::fopen(tmp.c_str(), "w");
  if (f == nullptr) return false;
  const bool ok = std::fprintf(f, "%s\n", addr) > 0;
  if (std::fclose(f) != 0 || !ok) return false;
  return std::rename(tmp.c_str(), file.c_str()) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string addrFile;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if ((arg == "--addr-file") && i + 1 < argc) {
      addrFile = argv[++i];
    } else if (arg == "-h" || arg == "--help") {
      PrintUsage(stdout);
      return 0;
    } else {
      std::fprintf(stderr, "weft-pool: unknown argument '%s'\n", arg.c_str());
      PrintUsage(stderr);
      return 2;
    }
  }
  // Blocked before the pool's thread starts, so that only sigwait sees them.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);
  weftStandbyPool_t pool = nullptr;
  char addr[512];
  if (weftStandbyPoolStart(&pool, addr, sizeof(addr)) != weftSuccess) {
    std::fprintf(stderr, "weft-pool: cannot serve a pool: %s\n", weftGetLastError(nullptr));
    return 1;
  }
  if (!addrFile.empty()) {
    if (!WriteAddr(addrFile, addr)) {
      std::fprintf(stderr, "weft-pool: cannot write %s: %s\n", addrFile.c_str(),
                   std::strerror(errno));
      weftStandbyPoolStop(pool);
      return 1;
    }
  } else {
    std::printf("%s\n", addr);
    std::fflush(stdout);
  }
  int sig = 0;
  sigwait(&stop, &sig);
  weftStandbyPoolStop(pool);
  return 0;
}

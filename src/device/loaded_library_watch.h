// Whether the process has loaded a library yet (for weft: CUDA's driver,
// libcuda, which weft never loads itself), asked on every host call, so it
// must be cheap: one call of `count` (the loader's count of objects loaded so
// far, dl_iterate_phdr's dlpi_adds, which only grows) and a scan of the loaded
// objects (`find`) only when that count moved since the last scan. Once the
// answer is yes it stays yes.
//
// Ordering: a scan that finds the library stores loaded_ before scannedAdds_
// (release), and a caller that sees its count already scanned (acquire) reads
// loaded_ again instead of answering no. Without that, a thread that read
// loaded_ == false just before another thread's scan found the library, and
// scannedAdds_ just after it, answered "not loaded": on a GPU the second rank
// of a weftCommInitAll was refused the GPU ring that way.
#pragma once

#include <atomic>

namespace weft {

class LoadedLibraryWatch {
 public:
  using CountFn = unsigned long long (*)();
  using FindFn = bool (*)();
  LoadedLibraryWatch(CountFn count, FindFn find) : count_(count), find_(find) {}

  bool loaded() {
    if (loaded_.load(std::memory_order_acquire)) return true;
    const unsigned long long adds = count_();
    // Scanned at this count: the scan's answer, published before the count.
    if (adds == scannedAdds_.load(std::memory_order_acquire))
      return loaded_.load(std::memory_order_acquire);
    const bool found = find_();
    if (found) loaded_.store(true, std::memory_order_release);
    // Concurrent scans may store their counts out of order; a stale count
    // only costs a later caller one more scan.
    scannedAdds_.store(adds, std::memory_order_release);
    return found;
  }
  // For a caller that knows (it reached the driver).
  void markLoaded() { loaded_.store(true, std::memory_order_release); }

 private:
  const CountFn count_;
  const FindFn find_;
  std::atomic<bool> loaded_{false};
  std::atomic<unsigned long long> scannedAdds_{0};
};

}  // namespace weft

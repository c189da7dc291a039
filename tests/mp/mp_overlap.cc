// Calls that overlap on one communicator from two threads (docs/api.md,
// "Threads"). Rank 0's worker thread sits inside a blocking allreduce that
// cannot finish, because the other ranks join it only when rank 0 says so on
// a second communicator. Meanwhile rank 0's main thread makes calls on the
// same communicator: each must be refused with weftInvalidUsage and a
// sentence naming the call inside, and must leave the communicator as it was
// (before this check, two threads interleaved call numbers and the ranks
// paired different calls: "collective mismatch"). Then the ranks release the
// allreduce, check it, and make more calls, one from another thread, which
// must all be correct: one thread after another is allowed.
#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "mp_common.h"

namespace mp {

namespace {

constexpr size_t kCount = 1 << 18;  // floats: a ring call, not a one-round one

bool sumIsRight(const Job& job, const std::vector<float>& out, float base) {
  float want = 0;
  for (int r = 0; r < job.nranks; ++r) want += base + static_cast<float>(r);
  for (float v : out)
    if (v != want) return false;
  return true;
}

bool refusedAsOverlap(weftResult_t r) {
  const std::string text = weftGetLastError(nullptr);
  return r == weftInvalidUsage &&
         text.find("another thread is inside weftAllReduce") != std::string::npos;
}

// Rank 0's main thread while the worker is inside weftAllReduce on job.comm.
void refuseOverlaps(const Job& job, Log& log) {
  // First wait until the worker is inside: a probe that validation would
  // refuse (recvbuff NULL) tells which check saw it first, and is no call.
  float probe = 0;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!refusedAsOverlap(
      weftAllReduce(&probe, nullptr, 4, weftFloat, weftSum, job.comm, WEFT_STREAM_HOST))) {
    if (std::chrono::steady_clock::now() > until) {
      log.fail("overlap: the worker's allreduce never showed as inside the communicator");
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  std::vector<float> in(kCount, 1.0f), out(kCount);
  weftComm_t child = nullptr;
  weftRequest_t req = nullptr;
  struct Attempt {
    const char* name;
    weftResult_t result;
  };
  std::vector<Attempt> attempts;
  attempts.push_back({"blocking allreduce", weftAllReduce(in.data(), out.data(), kCount, weftFloat,
                                                          weftSum, job.comm, WEFT_STREAM_HOST)});
  attempts.push_back({"async allreduce", weftAllReduceAsync(in.data(), out.data(), kCount,
                                                            weftFloat, weftSum, job.comm, &req)});
  attempts.push_back({"barrier", weftBarrier(job.comm, WEFT_STREAM_HOST)});
  attempts.push_back({"send", weftSend(in.data(), 1, weftFloat, 1, job.comm, WEFT_STREAM_HOST)});
  attempts.push_back({"split", weftCommSplit(job.comm, 0, 0, &child, nullptr)});
  attempts.push_back({"destroy", weftCommDestroy(job.comm)});
  for (const Attempt& a : attempts) {
    if (refusedAsOverlap(a.result)) {
      log.pass();
    } else {
      log.fail(std::string("overlap: ") + a.name + " from a second thread returned " +
               weftGetErrorString(a.result) + " (" + weftGetLastError(nullptr) +
               "), not a refusal naming weftAllReduce");
    }
  }
  if (req != nullptr || child != nullptr) log.fail("overlap: a refused call returned a handle");
}

}  // namespace

void checkOverlap(const Job& job, Log& log) {
  if (job.nranks < 2) return;
  weftComm_t side = nullptr;
  if (weftCommSplit(job.comm, 0, job.rank, &side, nullptr) != weftSuccess) {
    log.fail(std::string("overlap: split for the side communicator: ") + weftGetLastError(nullptr));
    return;
  }
  std::vector<float> in(kCount, 1.0f + static_cast<float>(job.rank)), out(kCount, -1.0f);
  weftResult_t held = weftInternalError;
  std::string heldError;
  if (job.rank == 0) {
    std::thread worker([&] {
      // The main thread's probes enter the communicator for a moment each; one
      // that is inside as the worker arrives gets the worker refused (which
      // changes nothing), so the worker tries again. Without this the probes
      // waited 60 s for a worker that had been turned away (seen under load).
      do {
        held = weftAllReduce(in.data(), out.data(), kCount, weftFloat, weftSum, job.comm,
                             WEFT_STREAM_HOST);
      } while (refusedAsOverlap(held));
      if (held != weftSuccess) heldError = weftGetLastError(nullptr);
    });
    refuseOverlaps(job, log);
    weftBarrier(side, WEFT_STREAM_HOST);  // now the others may join the worker's call
    worker.join();
  } else {
    // From a worker here too: the call headers carry the thread turns
    // (docs/api.md, Threads), which must fall alike on every rank.
    weftBarrier(side, WEFT_STREAM_HOST);
    std::thread([&] {
      held = weftAllReduce(in.data(), out.data(), kCount, weftFloat, weftSum, job.comm,
                           WEFT_STREAM_HOST);
      if (held != weftSuccess) heldError = weftGetLastError(nullptr);
    }).join();
  }
  if (held != weftSuccess || !sumIsRight(job, out, 1.0f)) {
    log.fail(std::string("overlap: the allreduce held across the refusals: ") +
             (held != weftSuccess ? heldError : std::string("wrong sums")));
  } else {
    log.pass();
  }
  // One thread after another on the same communicator is allowed.
  for (int round = 0; round < 2; ++round) {
    std::vector<float> in2(kCount, 5.0f + static_cast<float>(job.rank)), out2(kCount, -1.0f);
    weftResult_t r = weftInternalError;
    std::string error;  // weftGetLastError is per thread: read it in the calling one
    auto call = [&] {
      r = weftAllReduce(in2.data(), out2.data(), kCount, weftFloat, weftSum, job.comm,
                        WEFT_STREAM_HOST);
      if (r != weftSuccess) error = weftGetLastError(nullptr);
    };
    if (round == 0) {
      std::thread(call).join();
    } else {
      call();
    }
    if (r != weftSuccess || !sumIsRight(job, out2, 5.0f)) {
      log.fail("overlap: allreduce after the refusals, round " + std::to_string(round) + ": " +
               (r != weftSuccess ? error : std::string("wrong sums")));
    } else {
      log.pass();
    }
  }
  weftCommDestroy(side);
}

}  // namespace mp

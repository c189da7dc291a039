// The torch-version adapter: the class torch.distributed calls. PyTorch 1.x
// has backends subclass c10d::ProcessGroup; 2.x subclasses c10d::Backend with
// the same virtual methods. Each method only unpacks torch's options, calls the
// version-neutral WeftComm (weft_ops.h) and queues the Work.
#pragma once

#include <torch/csrc/api/include/torch/version.h>

#if TORCH_VERSION_MAJOR >= 2
#include <torch/csrc/distributed/c10d/Backend.hpp>
#define WEFT_TORCH_BASE c10d::Backend
#else
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#define WEFT_TORCH_BASE c10d::ProcessGroup
#endif

#include <memory>

#include "completion_queue.h"
#include "weft_ops.h"
#include "weft_work.h"

namespace weft_torch {

class ProcessGroupWeft : public WEFT_TORCH_BASE {
 public:
  using WorkPtr = c10::intrusive_ptr<c10d::Work>;

  ProcessGroupWeft(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                   std::chrono::milliseconds timeout);
  // Over a communicator made elsewhere (recovery.h).
  ProcessGroupWeft(std::unique_ptr<WeftComm> comm, std::chrono::milliseconds timeout);
  ~ProcessGroupWeft() override;
  WeftComm& weftComm() { return *comm_; }

  const std::string getBackendName() const override { return "weft"; }

  WorkPtr broadcast(std::vector<at::Tensor>& tensors, const c10d::BroadcastOptions& opts) override;
  WorkPtr allreduce(std::vector<at::Tensor>& tensors, const c10d::AllreduceOptions& opts) override;
  WorkPtr allreduce_coalesced(std::vector<at::Tensor>& tensors,
                              const c10d::AllreduceCoalescedOptions& opts) override;
  WorkPtr reduce(std::vector<at::Tensor>& tensors, const c10d::ReduceOptions& opts) override;
  WorkPtr allgather(std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
                    const c10d::AllgatherOptions& opts) override;
  WorkPtr _allgather_base(at::Tensor& output, at::Tensor& input,
                          const c10d::AllgatherOptions& opts) override;
  WorkPtr allgather_coalesced(std::vector<std::vector<at::Tensor>>& outputLists,
                              std::vector<at::Tensor>& inputs,
                              const c10d::AllgatherOptions& opts) override;
  WorkPtr gather(std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
                 const c10d::GatherOptions& opts) override;
  WorkPtr scatter(std::vector<at::Tensor>& outputs, std::vector<std::vector<at::Tensor>>& inputs,
                  const c10d::ScatterOptions& opts) override;
  WorkPtr reduce_scatter(std::vector<at::Tensor>& outputs,
                         std::vector<std::vector<at::Tensor>>& inputs,
                         const c10d::ReduceScatterOptions& opts) override;
  WorkPtr _reduce_scatter_base(at::Tensor& output, at::Tensor& input,
                               const c10d::ReduceScatterOptions& opts) override;
  WorkPtr alltoall_base(at::Tensor& output, at::Tensor& input, std::vector<int64_t>& outSplits,
                        std::vector<int64_t>& inSplits, const c10d::AllToAllOptions& opts) override;
  WorkPtr alltoall(std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
                   const c10d::AllToAllOptions& opts) override;
  WorkPtr send(std::vector<at::Tensor>& tensors, int dstRank, int tag) override;
  WorkPtr recv(std::vector<at::Tensor>& tensors, int srcRank, int tag) override;
  WorkPtr recvAnysource(std::vector<at::Tensor>& tensors, int tag) override;
  WorkPtr barrier(const c10d::BarrierOptions& opts) override;
#if TORCH_VERSION_MAJOR < 2  // 2.x changed the coalescing hooks; batches run one by one there
  void startCoalescing() override;
  void endCoalescing(std::vector<WorkPtr>& reqs) override;
#endif
  void setSequenceNumberForGroup() override {}
  uint64_t getSequenceNumberForGroup() override { return seq_; }

 private:
  // Wraps a submission in one Work and queues it for completion.
  WorkPtr enqueue(Submission sub, c10d::OpType type);
  static at::Tensor& single(std::vector<at::Tensor>& tensors, const char* what);

  std::chrono::milliseconds timeout_;
  std::unique_ptr<WeftComm> comm_;
  std::unique_ptr<CompletionQueue> completions_;
  std::vector<c10::intrusive_ptr<WeftWork>> coalesced_;  // p2p Works of the open batch
  Submission coalescedSub_;  // their stand-ins and copies (tensor_staging.h), done with the batch
  uint64_t seq_ = 0;
};

}  // namespace weft_torch

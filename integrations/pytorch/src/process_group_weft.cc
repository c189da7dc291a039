// See process_group_weft.h. CPU tensors only, one tensor per process (the
// multi-device list forms of torch 1.x take exactly one).
#include "process_group_weft.h"

#include <c10/util/Exception.h>
#include <pybind11/pybind11.h>

#include <optional>

namespace weft_torch {

ProcessGroupWeft::ProcessGroupWeft(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                                   std::chrono::milliseconds timeout)
    : WEFT_TORCH_BASE(rank, size),
      timeout_(timeout),
      comm_(std::make_unique<WeftComm>(store, rank, size)),
      completions_(std::make_unique<CompletionQueue>()) {}

ProcessGroupWeft::ProcessGroupWeft(std::unique_ptr<WeftComm> comm,
                                   std::chrono::milliseconds timeout)
    : WEFT_TORCH_BASE(comm->rank(), comm->size()),
      timeout_(timeout),
      comm_(std::move(comm)),
      completions_(std::make_unique<CompletionQueue>()) {}

// Python drops its last reference to a group with the GIL held, so this often
// starts holding it. The completion thread may need the GIL to finish what is
// queued (a future's Python callback; the last reference to a tensor whose
// Python object torch kept alive from C++), and joining it while holding the
// GIL deadlocked. The GIL is let go for the wait, as torch does for its own
// groups, and taken back before returning to Python.
ProcessGroupWeft::~ProcessGroupWeft() {
  std::optional<pybind11::gil_scoped_release> unlocked;
  if (Py_IsInitialized() && PyGILState_Check()) unlocked.emplace();
  completions_.reset();  // every queued Work completes before the communicator goes
  comm_.reset();
}

at::Tensor& ProcessGroupWeft::single(std::vector<at::Tensor>& tensors, const char* what) {
  TORCH_CHECK(tensors.size() == 1, "weft: ", what, " takes one tensor per process, got ",
              tensors.size());
  return tensors[0];
}

ProcessGroupWeft::WorkPtr ProcessGroupWeft::enqueue(Submission sub, c10d::OpType type) {
  ++seq_;
  auto work =
      c10::make_intrusive<WeftWork>(rank_, type, sub.outputs, timeout_, completions_->state());
  if (sub.requests.empty() && comm_->coalescing()) {
    coalesced_.push_back(work);  // completes with the batch, in endCoalescing
    coalescedSub_.absorbStaging(sub);
  } else {
    completions_->push(std::move(sub), {work});
  }
  return work;
}

ProcessGroupWeft::WorkPtr ProcessGroupWeft::broadcast(std::vector<at::Tensor>& tensors,
                                                      const c10d::BroadcastOptions& opts) {
  return enqueue(comm_->broadcast(single(tensors, "broadcast"), static_cast<int>(opts.rootRank)),
                 c10d::OpType::BROADCAST);
}

ProcessGroupWeft::WorkPtr ProcessGroupWeft::allreduce(std::vector<at::Tensor>& tensors,
                                                      const c10d::AllreduceOptions& opts) {
  at::Tensor& t = single(tensors, "allreduce");
  if (t.is_sparse())
    return enqueue(comm_->allreduceSparse(t, opts.reduceOp), c10d::OpType::ALLREDUCE);
  return enqueue(comm_->allreduce(t, opts.reduceOp), c10d::OpType::ALLREDUCE);
}

ProcessGroupWeft::WorkPtr ProcessGroupWeft::allreduce_coalesced(
    std::vector<at::Tensor>& tensors, const c10d::AllreduceCoalescedOptions& opts) {
  return enqueue(comm_->allreduceCoalesced(tensors, opts.reduceOp),
                 c10d::OpType::ALLREDUCE_COALESCED);
}

ProcessGroupWeft::WorkPtr ProcessGroupWeft::reduce(std::vector<at::Tensor>& tensors,
                                                   const c10d::ReduceOptions& opts) {
  return enqueue(
      comm_->reduce(single(tensors, "reduce"), static_cast<int>(opts.rootRank), opts.reduceOp),
      c10d::OpType::REDUCE);
}

ProcessGroupWeft::WorkPtr ProcessGroupWeft::allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                                      std::vector<at::Tensor>& inputs,
                                                      const c10d::AllgatherOptions&) {
  TORCH_CHECK(outputs.size() == 1, "weft: allgather takes one output list per process");
  return enqueue(comm_->allgather(outputs[0], single(inputs, "allgather")),
                 c10d::OpType::ALLGATHER);
}

ProcessGroupWeft::WorkPtr ProcessGroupWeft::_allgather_base(at::Tensor& output, at::Tensor& input,
                                                            const c10d::AllgatherOptions&) {
  return enqueue(comm_->allgatherBase(output, input), c10d::OpType::_ALLGATHER_BASE);
}

// One allgather per input tensor, queued back to back; the Work covers all.
ProcessGroupWeft::WorkPtr ProcessGroupWeft::allgather_coalesced(
    std::vector<std::vector<at::Tensor>>& outputLists, std::vector<at::Tensor>& inputs,
    const c10d::AllgatherOptions&) {
  TORCH_CHECK(outputLists.size() == static_cast<size_t>(size_),
              "weft: allgather_coalesced needs one output list per rank");
  Submission all;
  std::vector<std::function<void()>> finishes;
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::vector<at::Tensor> outs;
    for (auto& list : outputLists) {
      TORCH_CHECK(list.size() == inputs.size(),
                  "weft: allgather_coalesced output lists must "
                  "have one tensor per input");
      outs.push_back(list[i]);
    }
    Submission one = comm_->allgather(outs, inputs[i]);
    all.requests.insert(all.requests.end(), one.requests.begin(), one.requests.end());
    all.absorbStaging(one);
    if (one.finish) finishes.push_back(one.finish);
  }
  for (auto& list : outputLists) all.outputs.insert(all.outputs.end(), list.begin(), list.end());
  all.finish = [finishes]() {
    for (const auto& f : finishes) f();
  };
  return enqueue(std::move(all), c10d::OpType::ALLGATHER_COALESCED);
}

ProcessGroupWeft::WorkPtr ProcessGroupWeft::gather(std::vector<std::vector<at::Tensor>>& outputs,
                                                   std::vector<at::Tensor>& inputs,
                                                   const c10d::GatherOptions& opts) {
  std::vector<at::Tensor> none;
  std::vector<at::Tensor>& outs = outputs.empty() ? none : outputs[0];
  return enqueue(comm_->gather(outs, single(inputs, "gather"), static_cast<int>(opts.rootRank)),
                 c10d::OpType::GATHER);
}

ProcessGroupWeft::WorkPtr ProcessGroupWeft::scatter(std::vector<at::Tensor>& outputs,
                                                    std::vector<std::vector<at::Tensor>>& inputs,
                                                    const c10d::ScatterOptions& opts) {
  std::vector<at::Tensor> none;
  std::vector<at::Tensor>& ins = inputs.empty() ? none : inputs[0];
  return enqueue(comm_->scatter(single(outputs, "scatter"), ins, static_cast<int>(opts.rootRank)),
                 c10d::OpType::SCATTER);
}

ProcessGroupWeft::WorkPtr ProcessGroupWeft::reduce_scatter(
    std::vector<at::Tensor>& outputs, std::vector<std::vector<at::Tensor>>& inputs,
    const c10d::ReduceScatterOptions& opts) {
  TORCH_CHECK(inputs.size() == 1, "weft: reduce_scatter takes one input list per process");
  return enqueue(comm_->reduceScatter(single(outputs, "reduce_scatter"), inputs[0], opts.reduceOp),
                 c10d::OpType::REDUCE_SCATTER);
}

ProcessGroupWeft::WorkPtr ProcessGroupWeft::_reduce_scatter_base(
    at::Tensor& output, at::Tensor& input, const c10d::ReduceScatterOptions& opts) {
  return enqueue(comm_->reduceScatterBase(output, input, opts.reduceOp),
                 c10d::OpType::_REDUCE_SCATTER_BASE);
}

ProcessGroupWeft::WorkPtr ProcessGroupWeft::alltoall_base(at::Tensor& output, at::Tensor& input,
                                                          std::vector<int64_t>& outSplits,
                                                          std::vector<int64_t>& inSplits,
                                                          const c10d::AllToAllOptions&) {
  return enqueue(comm_->alltoallBase(output, input, outSplits, inSplits),
                 c10d::OpType::ALLTOALL_BASE);
}

ProcessGroupWeft::WorkPtr ProcessGroupWeft::alltoall(std::vector<at::Tensor>& outputs,
                                                     std::vector<at::Tensor>& inputs,
                                                     const c10d::AllToAllOptions&) {
  return enqueue(comm_->alltoall(outputs, inputs), c10d::OpType::ALLTOALL);
}

// Tags are accepted but not used for matching: as with NCCL, sends and
// receives between a pair of ranks match in the order they are posted.
ProcessGroupWeft::WorkPtr ProcessGroupWeft::send(std::vector<at::Tensor>& tensors, int dstRank,
                                                 int) {
  return enqueue(comm_->send(single(tensors, "send"), dstRank), c10d::OpType::SEND);
}

ProcessGroupWeft::WorkPtr ProcessGroupWeft::recv(std::vector<at::Tensor>& tensors, int srcRank,
                                                 int) {
  return enqueue(comm_->recv(single(tensors, "recv"), srcRank), c10d::OpType::RECV);
}

ProcessGroupWeft::WorkPtr ProcessGroupWeft::recvAnysource(std::vector<at::Tensor>& tensors, int) {
  Submission sub = comm_->recvAny(single(tensors, "recv"));
  std::shared_ptr<int> source = sub.source;
  WorkPtr work = enqueue(std::move(sub), c10d::OpType::RECVANYSOURCE);
  static_cast<WeftWork*>(work.get())->setSource(std::move(source));
  return work;
}

ProcessGroupWeft::WorkPtr ProcessGroupWeft::barrier(const c10d::BarrierOptions&) {
  return enqueue(comm_->barrier(), c10d::OpType::BARRIER);
}

#if TORCH_VERSION_MAJOR < 2
void ProcessGroupWeft::startCoalescing() { comm_->beginCoalescing(); }

void ProcessGroupWeft::endCoalescing(std::vector<WorkPtr>&) {
  Submission batch = std::move(coalescedSub_);
  coalescedSub_ = Submission();
  batch.requests.push_back(comm_->endCoalescing());
  completions_->push(std::move(batch), std::move(coalesced_));
  coalesced_.clear();
}
#endif

}  // namespace weft_torch

// Recovery bindings (recovery.h). Every call that may wait on peers lets go
// of the GIL, as the group's constructor does.
#include "recovery.h"

#include <pybind11/chrono.h>
#include <pybind11/stl.h>
#include <torch/csrc/utils/pybind.h>

#include <mutex>
#include <utility>
#include <vector>

#include "process_group_weft.h"

namespace py = pybind11;

namespace weft_torch {

namespace {

using GroupPtr = c10::intrusive_ptr<ProcessGroupWeft>;

void check(weftResult_t rc, const char* what) {
  TORCH_CHECK(rc == weftSuccess, "weft: ", what, ": ", weftGetLastError(nullptr));
}

GroupPtr groupOver(weftComm_t comm, std::chrono::milliseconds timeout) {
  return c10::make_intrusive<ProcessGroupWeft>(std::make_unique<WeftComm>(comm), timeout);
}

// A host buffer (weftHostAlloc) under a weft replica, on a group's communicator.
class Replica {
 public:
  Replica(GroupPtr group, int64_t bytes, int copies) : group_(std::move(group)) {
    TORCH_CHECK(bytes > 0, "weft: Replica: nbytes must be positive, got ", bytes);
    bytes_ = static_cast<size_t>(bytes);
    check(weftHostAlloc(&memory_, bytes_), "weftHostAlloc");
    std::lock_guard<std::mutex> lock(group_->weftComm().callMutex());
    weftResult_t rc =
        weftReplicaRegister(group_->weftComm().handle(), memory_, bytes_, copies, &replica_);
    if (rc != weftSuccess) weftHostFree(memory_);
    check(rc, "weftReplicaRegister");
  }
  ~Replica() {
    if (pending_ != nullptr) weftWait(&pending_);
    weftReplicaDeregister(replica_);
    weftHostFree(memory_);
  }
  Replica(const Replica&) = delete;
  Replica& operator=(const Replica&) = delete;

  // The buffer as a uint8 tensor; valid while the Replica lives.
  at::Tensor buffer() { return at::from_blob(memory_, {static_cast<int64_t>(bytes_)}, at::kByte); }
  void start() {
    TORCH_CHECK(pending_ == nullptr, "weft: Replica: a commit is in flight; wait() for it first");
    std::lock_guard<std::mutex> lock(group_->weftComm().callMutex());
    check(weftReplicaCommit(replica_, &pending_), "weftReplicaCommit");
  }
  uint64_t wait() {
    TORCH_CHECK(pending_ != nullptr, "weft: Replica: no commit in flight");
    check(weftWait(&pending_), "weftReplicaCommit");
    return version();
  }
  uint64_t restore(GroupPtr group) {
    if (pending_ != nullptr) weftWait(&pending_);  // failed with the group: its version is dropped
    uint64_t v = 0;
    {
      std::lock_guard<std::mutex> lock(group->weftComm().callMutex());
      check(weftReplicaRestore(replica_, group->weftComm().handle(), &v), "weftReplicaRestore");
    }
    group_ = std::move(group);
    return v;
  }
  uint64_t version() {
    uint64_t v = 0;
    check(weftReplicaVersion(replica_, &v), "weftReplicaVersion");
    return v;
  }

 private:
  GroupPtr group_;
  void* memory_ = nullptr;
  size_t bytes_ = 0;
  weftReplica_t replica_ = nullptr;
  weftRequest_t pending_ = nullptr;
};

}  // namespace

void bindRecovery(py::module& m) {
  using Ms = std::chrono::milliseconds;
  const auto unlocked = py::call_guard<py::gil_scoped_release>();
  m.def(
      "init_from_env",
      [](Ms timeout) {
        weftComm_t comm = nullptr;
        check(weftCommInitFromEnv(&comm), "weftCommInitFromEnv");
        return groupOver(comm, timeout);
      },
      py::arg("timeout"), unlocked);
  m.def(
      "standby_wait",
      [](Ms timeout) {
        weftComm_t comm = nullptr;
        check(weftStandbyWait(&comm), "weftStandbyWait");
        return groupOver(comm, timeout);
      },
      py::arg("timeout"), unlocked);
  m.def(
      "replace",
      [](const GroupPtr& group, std::vector<int> dead, Ms timeout) {
        weftComm_t next = nullptr;
        int replaced = 0;
        {
          std::lock_guard<std::mutex> lock(group->weftComm().callMutex());
          // No ranks given: the launcher's pool says which died.
          check(weftCommReplace(group->weftComm().handle(), dead.empty() ? nullptr : dead.data(),
                                static_cast<int>(dead.size()), &next, &replaced),
                "weftCommReplace");
        }
        TORCH_CHECK(next != nullptr, "weft: replace: this rank is one of the dead ranks");
        return std::make_pair(groupOver(next, timeout), replaced);
      },
      py::arg("group"), py::arg("dead"), py::arg("timeout"), unlocked);
  py::class_<Replica>(m, "Replica")
      .def(py::init<GroupPtr, int64_t, int>(), py::arg("group"), py::arg("nbytes"),
           py::arg("copies"), unlocked)
      .def("buffer", &Replica::buffer, py::keep_alive<0, 1>())
      .def("start", &Replica::start, unlocked)
      .def("wait", &Replica::wait, unlocked)
      .def("restore", &Replica::restore, py::arg("group"), unlocked)
      .def_property_readonly("version", &Replica::version);
}

}  // namespace weft_torch

// The Python extension weft_torch._C: exposes ProcessGroupWeft as a subclass of
// torch's own ProcessGroup (1.x) or Backend (2.x) binding, so torch.distributed
// can hold it like its built-in backends. weft_torch/__init__.py registers the
// backend name. Construction releases the GIL: it waits on the store and on
// weft's rendezvous, which other threads of this process may need to progress.
// At exit, an atexit hook completes work still in flight while Python can still
// run its callbacks (CompletionQueue::drainAll).
#include <pybind11/chrono.h>
#include <torch/csrc/utils/pybind.h>

#include "process_group_weft.h"
#include "recovery.h"

namespace py = pybind11;

PYBIND11_MODULE(_C, m) {
  m.doc() = "weft collectives as a torch.distributed backend";
  // The base class's binding lives in torch's own module; import it first.
  py::module::import("torch.distributed");
  py::class_<weft_torch::ProcessGroupWeft, WEFT_TORCH_BASE,
             c10::intrusive_ptr<weft_torch::ProcessGroupWeft>>(m, "ProcessGroupWeft")
      .def(py::init([](const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                       std::chrono::milliseconds timeout) {
             return c10::make_intrusive<weft_torch::ProcessGroupWeft>(store, rank, size, timeout);
           }),
           py::arg("store"), py::arg("rank"), py::arg("size"), py::arg("timeout"),
           py::call_guard<py::gil_scoped_release>());
  // Registered after torch.distributed's import, so it runs before any hook
  // torch registered (atexit runs hooks last in, first out).
  py::module::import("atexit").attr("register")(py::cpp_function([] {
    py::gil_scoped_release unlocked;  // the completion threads may need it
    weft_torch::CompletionQueue::drainAll();
  }));
  weft_torch::bindRecovery(m);
  int version = 0;
  weftGetVersion(&version);
  m.attr("weft_version") = version;
}

// Recovery from Python (weft_torch._C): a group from the launcher's
// environment, a standby's wait, weftCommReplace over a group, and replicas
// of a host buffer that a Python helper packs model and optimizer state into
// (docs/pytorch.md, "Surviving a dead rank").
#pragma once

#include <pybind11/pybind11.h>

namespace weft_torch {

void bindRecovery(pybind11::module& m);

}  // namespace weft_torch

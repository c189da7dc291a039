// Builds a communicator's topology views and tuner (tune_init.cc); collective
// over the bootstrap, after the transports are connected.
#pragma once

#include "weft/weft.h"

struct weftComm;

namespace weft {
weftResult_t setupTopoAndTuner(weftComm* c);
}  // namespace weft

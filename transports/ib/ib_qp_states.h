// The three modify_qp steps that take an RC queue pair from RESET to RTS, in
// one place for every QP weft connects itself: a connection's QPs
// (ib_connection.h) and the GDR flush QP connected to itself (ib_memory.h).
// Path settings come from the device and the WEFT_IB_* knobs (SL, TC,
// TIMEOUT, RETRY_CNT); `who` names the QP in error sentences.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <string>

#include "transports/ib/ib_device.h"
#include "weft/weft.h"

namespace weft {

// RESET -> INIT on the device's port with these remote access rights.
weftResult_t qpToInit(const IbDevice& dev, ibv_qp* qp, int access, const std::string& who);
// INIT -> RTR towards (qpn, psn) at `gid` (RoCE) or `lid` (InfiniBand).
weftResult_t qpToRtr(const IbDevice& dev, ibv_qp* qp, uint32_t qpn, uint32_t psn,
                     const uint8_t gid[16], uint16_t lid, ibv_mtu mtu, const std::string& who);
// RTR -> RTS, sending from `psn`.
weftResult_t qpToRts(const IbDevice& dev, ibv_qp* qp, uint32_t psn, const std::string& who);

}  // namespace weft

// RC queue pair state changes (ib_qp_states.h).
#include "transports/ib/ib_qp_states.h"

#include <cerrno>
#include <cstring>

#include "base/config.h"
#include "base/error.h"

namespace weft {

weftResult_t qpToInit(const IbDevice& dev, ibv_qp* qp, int access, const std::string& who) {
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_INIT;
  attr.pkey_index = 0;
  attr.port_num = static_cast<uint8_t>(dev.port());
  attr.qp_access_flags = static_cast<unsigned>(access);
  if (ibv_modify_qp(qp, &attr,
                    IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) != 0)
    return setError(weftSystemError, "%s: %s to INIT failed: %s", dev.name().c_str(), who.c_str(),
                    strerror(errno));
  return weftSuccess;
}

weftResult_t qpToRtr(const IbDevice& dev, ibv_qp* qp, uint32_t qpn, uint32_t psn,
                     const uint8_t gid[16], uint16_t lid, ibv_mtu mtu, const std::string& who) {
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_RTR;
  attr.path_mtu = mtu;
  attr.dest_qp_num = qpn;
  attr.rq_psn = psn;
  attr.max_dest_rd_atomic = 1;
  attr.min_rnr_timer = 12;
  attr.ah_attr.port_num = static_cast<uint8_t>(dev.port());
  attr.ah_attr.sl = static_cast<uint8_t>(configInt("WEFT_IB_SL"));
  if (dev.roce()) {
    attr.ah_attr.is_global = 1;
    std::memcpy(attr.ah_attr.grh.dgid.raw, gid, 16);
    attr.ah_attr.grh.sgid_index = static_cast<uint8_t>(dev.gidIndex());
    attr.ah_attr.grh.hop_limit = 64;
    attr.ah_attr.grh.traffic_class = static_cast<uint8_t>(configInt("WEFT_IB_TC"));
  } else {
    attr.ah_attr.dlid = lid;
  }
  if (ibv_modify_qp(qp, &attr,
                    IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                        IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER) != 0)
    return setError(weftSystemError, "%s: %s to RTR failed: %s", dev.name().c_str(), who.c_str(),
                    strerror(errno));
  return weftSuccess;
}

weftResult_t qpToRts(const IbDevice& dev, ibv_qp* qp, uint32_t psn, const std::string& who) {
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_RTS;
  attr.timeout = static_cast<uint8_t>(configInt("WEFT_IB_TIMEOUT"));
  attr.retry_cnt = static_cast<uint8_t>(configInt("WEFT_IB_RETRY_CNT"));
  attr.rnr_retry = 7;  // receive WRs are reposted as they are polled: wait, never fail
  attr.sq_psn = psn;
  attr.max_rd_atomic = 1;
  if (ibv_modify_qp(qp, &attr,
                    IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                        IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC) != 0)
    return setError(weftSystemError, "%s: %s to RTS failed: %s", dev.name().c_str(), who.c_str(),
                    strerror(errno));
  return weftSuccess;
}

}  // namespace weft

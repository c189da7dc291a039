// ncclConfig_t as the drop-in reads it. Every field is either applied or,
// when the application set it, logged with why weft does not apply it: most
// are knobs of NCCL's own kernels and resources, which weft sizes elsewhere
// (one environment knob per process, docs/env.md). A config not made with
// NCCL_CONFIG_INITIALIZER, or a value out of range, is refused.
#include <cstddef>

#include "base/error.h"
#include "base/log.h"
#include "shim.h"

namespace weft {
namespace nccl {

namespace {

constexpr unsigned kConfigMagic = 0xcafebeef;

// True when `field` lies inside the caller's struct (an older, smaller
// ncclConfig_t is accepted) and was set.
bool isSet(const ncclConfig_t* config, size_t offset, int value) {
  return offset + sizeof(int) <= config->size && value != NCCL_CONFIG_UNDEF_INT;
}

void notApplied(const char* fn, const char* field, int value, const char* why) {
  WEFT_INFO(INIT, "%s: ncclConfig_t.%s=%d is not applied: %s", fn, field, value, why);
}

}  // namespace

#define WEFT_CONFIG_INT(field) isSet(config, offsetof(ncclConfig_t, field), config->field)

ncclResult_t applyConfig(const ncclConfig_t* config, const char* fn, ncclComm_t comm) {
  comm->blocking = true;
  if (config == nullptr) return ncclSuccess;
  if (config->magic != kConfigMagic || config->size < offsetof(ncclConfig_t, cgaClusterSize))
    return fail(ncclInvalidArgument,
                "%s: config was not initialised with NCCL_CONFIG_INITIALIZER (magic=0x%x, "
                "size=%zu)",
                fn, config->magic, config->size);
  if (WEFT_CONFIG_INT(blocking)) {
    if (config->blocking != 0 && config->blocking != 1)
      return fail(ncclInvalidArgument, "%s: config->blocking=%d must be 0 or 1", fn,
                  config->blocking);
    comm->blocking = config->blocking == 1;
  }
  if (WEFT_CONFIG_INT(CTAPolicy) &&
      (config->CTAPolicy < 0 || config->CTAPolicy > NCCL_CTA_POLICY_ZERO))
    return fail(ncclInvalidArgument, "%s: config->CTAPolicy=%d is not an NCCL_CTA_POLICY_*", fn,
                config->CTAPolicy);
  if (WEFT_CONFIG_INT(collnetEnable) && config->collnetEnable != 0 && config->collnetEnable != 1)
    return fail(ncclInvalidArgument, "%s: config->collnetEnable=%d must be 0 or 1", fn,
                config->collnetEnable);
  if (offsetof(ncclConfig_t, commName) + sizeof(char*) <= config->size &&
      config->commName != nullptr)
    comm->name = config->commName;
  const char* kernels =
      "weft's GPU ring kernel takes WEFT_MAX_CTAS thread blocks of WEFT_NTHREADS threads, the "
      "same on every rank";
  if (WEFT_CONFIG_INT(cgaClusterSize))
    notApplied(fn, "cgaClusterSize", config->cgaClusterSize, kernels);
  if (WEFT_CONFIG_INT(minCTAs)) notApplied(fn, "minCTAs", config->minCTAs, kernels);
  if (WEFT_CONFIG_INT(maxCTAs)) notApplied(fn, "maxCTAs", config->maxCTAs, kernels);
  if (WEFT_CONFIG_INT(nvlsCTAs))
    notApplied(fn, "nvlsCTAs", config->nvlsCTAs, "weft has no NVLink SHARP path");
  if (WEFT_CONFIG_INT(CTAPolicy)) notApplied(fn, "CTAPolicy", config->CTAPolicy, kernels);
  if (WEFT_CONFIG_INT(nChannelsPerNetPeer))
    notApplied(fn, "nChannelsPerNetPeer", config->nChannelsPerNetPeer,
               "weft's connections per peer are WEFT_SOCKET_LANES and WEFT_IB_QPS_PER_CONNECTION");
  if (WEFT_CONFIG_INT(nvlinkCentricSched))
    notApplied(fn, "nvlinkCentricSched", config->nvlinkCentricSched,
               "weft orders its rings from the topology (docs/topology.md)");
  if (WEFT_CONFIG_INT(splitShare))
    notApplied(fn, "splitShare", config->splitShare,
               "a split communicator has its own connections in weft");
  if (WEFT_CONFIG_INT(shrinkShare))
    notApplied(fn, "shrinkShare", config->shrinkShare,
               "a shrunk communicator has its own connections in weft");
  if (WEFT_CONFIG_INT(trafficClass))
    WEFT_WARN(INIT,
              "%s: ncclConfig_t.trafficClass=%d is not applied: weft's traffic class is "
              "WEFT_IB_TC for every communicator",
              fn, config->trafficClass);
  if (WEFT_CONFIG_INT(collnetEnable) && config->collnetEnable == 1)
    WEFT_WARN(INIT,
              "%s: ncclConfig_t.collnetEnable=1 is not applied: weft has no in-network "
              "reduction (CollNet/SHARP)",
              fn);
  if (offsetof(ncclConfig_t, netName) + sizeof(char*) <= config->size && config->netName != nullptr)
    WEFT_WARN(INIT,
              "%s: ncclConfig_t.netName=\"%s\" is not applied: weft picks verbs or TCP per "
              "peer (WEFT_IB_DISABLE=1 keeps it on TCP)",
              fn, config->netName);
  return ncclSuccess;
}

}  // namespace nccl
}  // namespace weft

// The drop-in's binary interface. Compiled against the real nccl.h, with
// checks that its types have the layout of NCCL 2.28 on LP64 and that its
// enum values are weft's where they are passed through unchanged.
#include <cstddef>

#include "shim.h"

#define WEFT_EXPECT_OFFSET(type, field, at) \
  static_assert(offsetof(type, field) == (at), #type "." #field " moved")

static_assert(NCCL_VERSION_CODE == 22809, "built against the nccl.h of NCCL 2.28.9");
static_assert(sizeof(ncclUniqueId) == 128 && NCCL_UNIQUE_ID_BYTES == WEFT_UNIQUE_ID_BYTES, "id");
static_assert(sizeof(ncclConfig_t) == 80, "ncclConfig_t of 2.28");
WEFT_EXPECT_OFFSET(ncclConfig_t, size, 0);
WEFT_EXPECT_OFFSET(ncclConfig_t, magic, 8);
WEFT_EXPECT_OFFSET(ncclConfig_t, version, 12);
WEFT_EXPECT_OFFSET(ncclConfig_t, blocking, 16);
WEFT_EXPECT_OFFSET(ncclConfig_t, cgaClusterSize, 20);
WEFT_EXPECT_OFFSET(ncclConfig_t, minCTAs, 24);
WEFT_EXPECT_OFFSET(ncclConfig_t, maxCTAs, 28);
WEFT_EXPECT_OFFSET(ncclConfig_t, netName, 32);
WEFT_EXPECT_OFFSET(ncclConfig_t, splitShare, 40);
WEFT_EXPECT_OFFSET(ncclConfig_t, trafficClass, 44);
WEFT_EXPECT_OFFSET(ncclConfig_t, commName, 48);
WEFT_EXPECT_OFFSET(ncclConfig_t, collnetEnable, 56);
WEFT_EXPECT_OFFSET(ncclConfig_t, CTAPolicy, 60);
WEFT_EXPECT_OFFSET(ncclConfig_t, shrinkShare, 64);
WEFT_EXPECT_OFFSET(ncclConfig_t, nvlsCTAs, 68);
WEFT_EXPECT_OFFSET(ncclConfig_t, nChannelsPerNetPeer, 72);
WEFT_EXPECT_OFFSET(ncclConfig_t, nvlinkCentricSched, 76);
static_assert(sizeof(ncclSimInfo_t) == 24, "ncclSimInfo_t of 2.22+");
WEFT_EXPECT_OFFSET(ncclSimInfo_t, estimatedTime, 16);
static_assert(sizeof(ncclResult_t) == 4 && sizeof(ncclDataType_t) == 4 && sizeof(ncclRedOp_t) == 4,
              "enums are int-sized");

// Results 0..7 are weft's (weftTimeout, 8, is mapped to ncclRemoteError).
static_assert(ncclSuccess == (int)weftSuccess &&
                  ncclUnhandledCudaError == (int)weftUnhandledCudaError &&
                  ncclSystemError == (int)weftSystemError &&
                  ncclInternalError == (int)weftInternalError &&
                  ncclInvalidArgument == (int)weftInvalidArgument &&
                  ncclInvalidUsage == (int)weftInvalidUsage &&
                  ncclRemoteError == (int)weftRemoteError &&
                  ncclInProgress == (int)weftInProgress && ncclNumResults == 8,
              "result codes");
static_assert(ncclInt8 == (int)weftInt8 && ncclUint8 == (int)weftUint8 &&
                  ncclInt32 == (int)weftInt32 && ncclUint32 == (int)weftUint32 &&
                  ncclInt64 == (int)weftInt64 && ncclUint64 == (int)weftUint64 &&
                  ncclFloat16 == (int)weftFloat16 && ncclFloat32 == (int)weftFloat32 &&
                  ncclFloat64 == (int)weftFloat64 && ncclBfloat16 == (int)weftBfloat16,
              "datatypes 0..9 pass through");
static_assert(ncclFloat8e4m3 == 10 && ncclFloat8e5m2 == 11 && ncclNumTypes == 12, "fp8 types");
static_assert(ncclSum == (int)weftSum && ncclProd == (int)weftProd && ncclMax == (int)weftMax &&
                  ncclMin == (int)weftMin && ncclAvg == (int)weftAvg && ncclNumOps == 5 &&
                  ncclMaxRedOp == 0x7fffffff,
              "reduction ops");
static_assert(ncclScalarDevice == (int)weftScalarDevice &&
                  ncclScalarHostImmediate == (int)weftScalarHostImmediate,
              "scalar residence");
static_assert(NCCL_SPLIT_NOCOLOR == WEFT_SPLIT_NOCOLOR, "split colour");

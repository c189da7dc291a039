// Host entry points of weft's CUDA kernels (collectives/kernels/*.cu). Every
// launcher is asynchronous on `stream` and returns a cudaError_t as an int, so
// this header needs no CUDA include. These are the GPU tests' and perf tools'
// entry points; weft.h reaches the ring through ring_call_kernel.cu.
#pragma once

#include <cstddef>
#include <cstdint>

#include "weft/device/channel.h"
#include "weft/weft.h"

namespace weft {
namespace cuda {

// dst[i] = srcs[0][i] op srcs[1][i] op ... (nsrc inputs, in that order), for
// every datatype and op; float16/bfloat16 accumulate in float32 and round to
// nearest even once; weftAvg divides the sum by nsrc. Device pointers.
int reduce(weftDataType_t type, weftRedOp_t op, void* dst, const void* const* srcs, int nsrc,
           size_t count, void* stream);

// Ring allreduce of `nranks` ranks that all live on this GPU, one block per
// rank (a test and benchmark harness for the data-movement kernel): rank r
// reduces in[r] into out[r] through channel links[r] (to r+1). Every
// datatype, sum only (another op is cudaErrorInvalidValue): the harness's
// test and bandwidth check need no other, and every op runs on a GPU through
// ring_call_kernel.cu (the stream tests); all four ops here took twice the
// nvcc time. The channels' counters carry on from call to call:
// `firstMessage` is the number of this call's first message on every link
// (0 on new links; each call adds dev::ringMessages of ring_call.h).
int ringAllreduceLocal(weftDataType_t type, weftRedOp_t op, const void* const* in, void* const* out,
                       size_t count, int nranks, const dev::Channel* links, int threadsPerBlock,
                       uint64_t firstMessage, void* stream);

// `iters` empty round trips between two blocks of `threadsPerBlock` over
// links[0] (block 0 to 1) and links[1] (back): the latency of one channel
// message each way, counter handshakes and block barriers included. Each
// link carries `iters` messages from `firstMessage` on.
int channelRoundTrips(const dev::Channel* links, int iters, int threadsPerBlock,
                      uint64_t firstMessage, void* stream);

}  // namespace cuda
}  // namespace weft

// Host entry points of weft's CUDA kernels (collectives/kernels/*.cu). Every
// launcher is asynchronous on `stream` and returns a cudaError_t as an int, so
// this header needs no CUDA include. These are the GPU tests' and perf tools'
// entry points; weft.h reaches the ring through ring_call_kernel.cu.
#pragma once

#include <cstddef>

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
// reduces in[r] into out[r] through channel links[r] (to r+1). Sum, prod,
// max, min.
int ringAllreduceLocal(weftDataType_t type, weftRedOp_t op, const void* const* in, void* const* out,
                       size_t count, int nranks, const dev::Channel* links, int threadsPerBlock,
                       void* stream);

}  // namespace cuda
}  // namespace weft

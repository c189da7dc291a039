// Host reductions (see reduce.h): the entry points that run the kernels of the ISA variant chosen
// for this process (reduce_isa.h).
#include "collectives/reduce.h"

#include <cstring>

#include "collectives/reduce_isa.h"

namespace weft {

void reduceElements(weftDataType_t dt, weftRedOp_t op, void* dst, const void* a, const void* b,
                    size_t count) {
  if (!reduceArgsKnown(dt, op)) return;
  reduceKernelsActive().combine[dt][op](dst, a, b, count);
}

void finishAverage(weftDataType_t dt, void* buf, size_t count, int nranks) {
  if (!reduceArgsKnown(dt, weftSum) || nranks <= 0) return;
  reduceKernelsActive().divide[dt](buf, count, nranks);
}

void scaleElements(weftDataType_t dt, void* dst, const void* src, size_t count,
                   const void* scalar) {
  const size_t esize = datatypeSize(dt);
  if (esize == 0) return;
  // The product kernel against a run of copies of the scalar: one arithmetic
  // for scaling and reducing, in the ISA variant every other call uses.
  alignas(64) unsigned char run[4096];
  const size_t per = sizeof run / esize;
  for (size_t i = 0; i < per; ++i) std::memcpy(run + i * esize, scalar, esize);
  auto* out = static_cast<char*>(dst);
  const auto* in = static_cast<const char*>(src);
  for (size_t done = 0; done < count; done += per) {
    const size_t n = count - done < per ? count - done : per;
    reduceElements(dt, weftProd, out + done * esize, in + done * esize, run, n);
  }
}

}  // namespace weft

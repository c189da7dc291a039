// Host reductions (see reduce.h): the entry points that run the kernels of the ISA variant chosen
// for this process (reduce_isa.h).
#include "collectives/reduce.h"

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

}  // namespace weft

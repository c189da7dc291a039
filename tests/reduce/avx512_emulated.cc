// collectives/reduce_avx512.cc built for AVX2 only (see tests/reduce/
// CMakeLists.txt): GCC splits its 64-byte vectors in two, so the AVX-512
// variant's source runs, and is checked, on CPUs without AVX-512. The table
// is named reduceKernelsAvx512Emulated.
#define WEFT_REDUCE_AVX512_EMULATED 1
#include "collectives/reduce_avx512.cc"

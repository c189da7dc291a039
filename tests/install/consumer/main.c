/* A user's first weft program, built against the installed headers and
 * library only: a one-rank communicator and one allreduce on host memory, its
 * output from weftHostAlloc. */
#include <stdio.h>
#include <weft/weft.h>

int main(void) {
  int version = 0;
  weftUniqueId id;
  weftComm_t comm;
  float in[4] = {1, 2, 3, 4};
  float* out = NULL;
  if (weftGetVersion(&version) != weftSuccess || version <= 0) return 1;
  if (weftGetUniqueId(&id) != weftSuccess) return 2;
  if (weftCommInitRank(&comm, 1, id, 0) != weftSuccess) {
    fprintf(stderr, "init: %s\n", weftGetLastError(NULL));
    return 3;
  }
  if (weftHostAlloc((void**)&out, 4 * sizeof(float)) != weftSuccess) return 7;
  if (weftAllReduce(in, out, 4, weftFloat32, weftSum, comm, NULL) != weftSuccess) return 4;
  if (weftCommDestroy(comm) != weftSuccess) return 5;
  for (int i = 0; i < 4; ++i)
    if (out[i] != in[i]) return 6;
  if (weftHostFree(out) != weftSuccess) return 8;
  printf("consumer: weft %d, allreduce ok\n", version);
  return 0;
}

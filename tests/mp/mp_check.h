/* CHECK for the C test programs: on failure prints "<who>: FAIL: <what>" with
 * weft's last error and exits 1. Each program points `who` at its role (a
 * rank, a standby) once it knows it. */
#ifndef WEFT_TESTS_MP_CHECK_H
#define WEFT_TESTS_MP_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <weft/weft.h>

static const char* who = "?";

#define CHECK(cond, ...)                                     \
  do {                                                       \
    if (!(cond)) {                                           \
      printf("%s: FAIL: ", who);                             \
      printf(__VA_ARGS__);                                   \
      printf(" (last error: %s)\n", weftGetLastError(NULL)); \
      fflush(stdout);                                        \
      exit(1);                                               \
    }                                                        \
  } while (0)

#endif

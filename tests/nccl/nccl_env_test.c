/* The drop-in's NCCL_* translation (integrations/nccl/shim_env.cc), seen from
 * a program: each argument is WEFT_NAME=value (the value weft must see) or
 * WEFT_NAME= (it must be unset). The variables are read after the library
 * loaded, as weft reads them. */
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
  int version = 0, bad = 0;
  ncclGetVersion(&version); /* the program uses the library, so it is loaded */
  for (int i = 1; i < argc; ++i) {
    char name[128];
    const char* eq = strchr(argv[i], '=');
    if (eq == NULL || (size_t)(eq - argv[i]) >= sizeof(name)) return 2;
    memcpy(name, argv[i], (size_t)(eq - argv[i]));
    name[eq - argv[i]] = '\0';
    const char* got = getenv(name);
    const char* want = eq + 1;
    if ((*want == '\0' && got != NULL) || (*want != '\0' && (got == NULL || strcmp(got, want)))) {
      printf("FAIL: %s is \"%s\", expected %s%s%s\n", name, got ? got : "(unset)",
             *want ? "\"" : "(unset)", want, *want ? "\"" : "");
      bad = 1;
    }
  }
  if (!bad) printf("every NCCL_* variable reached weft as expected (version %d)\n", version);
  return bad;
}

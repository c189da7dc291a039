# WEFT_SANITIZE: build everything (library, tools, tests) with the given
# sanitizers, e.g. -DWEFT_SANITIZE=address,undefined or =thread, in a build
# directory of its own. tools/test.sh runs an ASan+UBSan and a TSan tier
# (unit + the mp-san tests of tests/mp/sanitizer_tests.cmake) by default.
set(WEFT_SANITIZE "" CACHE STRING "Sanitizers to build with (address,undefined | thread | empty)")
if(WEFT_SANITIZE)
  add_compile_options(-fsanitize=${WEFT_SANITIZE} -fno-omit-frame-pointer)
  if(WEFT_SANITIZE MATCHES "undefined")
    add_compile_options(-fno-sanitize-recover=undefined)
  endif()
  add_link_options(-fsanitize=${WEFT_SANITIZE})
  message(STATUS "weft: sanitizers on: ${WEFT_SANITIZE}")
endif()

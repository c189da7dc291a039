# Finds hwloc (required) and defines the imported target PkgConfig::HWLOC that
# weft's targets link. pkg-config is tried first (Debian's libhwloc-dev ships
# hwloc.pc). Where pkg-config or hwloc.pc is missing, as on a bare GPU machine
# that carries an unpacked libhwloc-dev (tools/gpu_deps.sh), the header and the
# library are looked up on CMAKE_PREFIX_PATH instead, and the same target name
# is defined, so nothing downstream (or in the installed package) differs.
# Sets HWLOC_VERSION.
if(TARGET PkgConfig::HWLOC)
  return()
endif()
find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(HWLOC QUIET IMPORTED_TARGET hwloc)
endif()
if(NOT TARGET PkgConfig::HWLOC)
  find_path(WEFT_HWLOC_INCLUDE_DIR hwloc.h)
  # hwloc.h includes hwloc/autogen/config.h, which Debian's multiarch package
  # keeps apart, under include/<triplet> (found there through CMAKE_LIBRARY_ARCHITECTURE).
  find_path(WEFT_HWLOC_CONFIG_INCLUDE_DIR hwloc/autogen/config.h
            HINTS "${WEFT_HWLOC_INCLUDE_DIR}" "${WEFT_HWLOC_INCLUDE_DIR}/${CMAKE_LIBRARY_ARCHITECTURE}")
  find_library(WEFT_HWLOC_LIBRARY hwloc)
  if(NOT WEFT_HWLOC_INCLUDE_DIR OR NOT WEFT_HWLOC_CONFIG_INCLUDE_DIR OR NOT WEFT_HWLOC_LIBRARY)
    message(FATAL_ERROR
      "weft needs hwloc: install libhwloc-dev (apt-get install libhwloc-dev), or point "
      "CMAKE_PREFIX_PATH at a prefix that holds include/hwloc.h and lib*/libhwloc.so "
      "(tools/gpu_deps.sh unpacks one for a machine without a package registry)")
  endif()
  add_library(PkgConfig::HWLOC INTERFACE IMPORTED)
  set_target_properties(PkgConfig::HWLOC PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${WEFT_HWLOC_INCLUDE_DIR};${WEFT_HWLOC_CONFIG_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES "${WEFT_HWLOC_LIBRARY}")
  # hwloc.h defines HWLOC_API_VERSION as 0x00MMmmpp (2.8.0 is 0x00020800).
  file(STRINGS "${WEFT_HWLOC_INCLUDE_DIR}/hwloc.h" _weft_hwloc_api
       REGEX "^#define HWLOC_API_VERSION 0x[0-9a-fA-F]+")
  if(_weft_hwloc_api MATCHES "0x[0-9a-fA-F][0-9a-fA-F]([0-9a-fA-F][0-9a-fA-F])([0-9a-fA-F][0-9a-fA-F])([0-9a-fA-F][0-9a-fA-F])")
    math(EXPR _maj "0x${CMAKE_MATCH_1}")
    math(EXPR _min "0x${CMAKE_MATCH_2}")
    math(EXPR _pat "0x${CMAKE_MATCH_3}")
    set(HWLOC_VERSION "${_maj}.${_min}.${_pat} (API of ${WEFT_HWLOC_INCLUDE_DIR}/hwloc.h)")
  else()
    set(HWLOC_VERSION "unknown (${WEFT_HWLOC_INCLUDE_DIR}/hwloc.h)")
  endif()
endif()

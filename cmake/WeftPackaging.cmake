# Install rules: headers, libweft.so/.a, the CMake package (find_package(weft)
# gives weft::weft and weft::weft_static) and a pkg-config file.
include(CMakePackageConfigHelpers)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/weft DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  COMPONENT dev)
install(TARGETS weft weft_static EXPORT weftTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime NAMELINK_COMPONENT dev
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT weftTargets NAMESPACE weft:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/weft
  COMPONENT dev)

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/weftConfig.cmake.in
  ${PROJECT_BINARY_DIR}/weftConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/weft)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/weftConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/weftConfig.cmake ${PROJECT_BINARY_DIR}/weftConfigVersion.cmake
  ${PROJECT_SOURCE_DIR}/cmake/WeftHwloc.cmake DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/weft
  COMPONENT dev)

# The .pc file names its prefix relative to itself, so `cmake --install --prefix`
# anywhere gives a file that pkg-config resolves correctly.
file(RELATIVE_PATH WEFT_PC_TO_PREFIX "/p/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/p")
# What libweft.a needs beside itself (`pkg-config --static --libs weft`): the
# C++ runtime, hwloc, rdma-core and the CUDA runtime where built with them.
set(WEFT_PC_LIBS_PRIVATE "-lhwloc")
if(WEFT_HAVE_VERBS)
  string(APPEND WEFT_PC_LIBS_PRIVATE " -lrdmacm -libverbs")
endif()
if(WEFT_HAVE_CUDA)
  string(APPEND WEFT_PC_LIBS_PRIVATE " -L${CUDAToolkit_LIBRARY_DIR} -lcudart_static")
endif()
string(APPEND WEFT_PC_LIBS_PRIVATE " -lstdc++ -lm -ldl -lrt -lpthread")
configure_file(${PROJECT_SOURCE_DIR}/cmake/weft.pc.in ${PROJECT_BINARY_DIR}/weft.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/weft.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig
  COMPONENT dev)

# Debian packages (`cpack -G DEB` in the build folder; README, Install):
# libweft0 (the shared library), libweft-dev (headers, libweft.a, the CMake
# and pkg-config files) and weft-tools (weft-run, weft-pool, weft-info, weft-topo and the
# perf tools). dpkg-shlibdeps reads each binary's needs (hwloc, rdma-core,
# Open MPI, the C++ runtime); the -dev package names the -dev packages that
# libweft.a and the headers need.
set(CPACK_PACKAGE_NAME weft)
set(CPACK_PACKAGE_VENDOR "weft")
set(CPACK_PACKAGE_CONTACT "weft maintainers <weft@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
  "collective communication library (allreduce, allgather, ...) over TCP, shared memory, verbs and NVLink")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_COMPONENTS_ALL runtime dev tools)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME libweft${PROJECT_VERSION_MAJOR})
set(CPACK_DEBIAN_DEV_PACKAGE_NAME libweft-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_TOOLS_PACKAGE_NAME weft-tools)
set(CPACK_DEBIAN_TOOLS_PACKAGE_SECTION net)
set(CPACK_COMPONENT_DEV_DEPENDS runtime)
set(CPACK_COMPONENT_TOOLS_DEPENDS runtime)
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS ON)
# The tools' libweft.so.0 is in libweft0, not on the system: dpkg-shlibdeps
# finds it in the build tree, and the component dependency names its package.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${PROJECT_BINARY_DIR}/src)
set(WEFT_DEV_DEPENDS "libhwloc-dev")
if(WEFT_HAVE_VERBS)
  string(APPEND WEFT_DEV_DEPENDS ", libibverbs-dev, librdmacm-dev")
endif()
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "${WEFT_DEV_DEPENDS}")
include(CPack)

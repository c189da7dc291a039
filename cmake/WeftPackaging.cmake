# Install rules: headers, libweft.so/.a, the CMake package (find_package(weft)
# gives weft::weft and weft::weft_static) and a pkg-config file.
include(CMakePackageConfigHelpers)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/weft DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS weft weft_static EXPORT weftTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT weftTargets NAMESPACE weft:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/weft)

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/weftConfig.cmake.in
  ${PROJECT_BINARY_DIR}/weftConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/weft)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/weftConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/weftConfig.cmake ${PROJECT_BINARY_DIR}/weftConfigVersion.cmake
  ${PROJECT_SOURCE_DIR}/cmake/WeftHwloc.cmake DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/weft)

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
install(FILES ${PROJECT_BINARY_DIR}/weft.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

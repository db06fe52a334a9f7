# install.cmake — the installable library and what `cmake --install` puts under the prefix.
#
# libtristream (shared and static, the same objects) is made of the internal static libraries'
# objects (common, formats, converter, cuda, core with src/api), so a user links one library:
#   tristream::tristream         the shared library (target tristream_shared)
#   tristream::tristream_static  the static one (target tristream_static); its link dependencies
#                                (Threads, zlib, zstd, bzip2/xz when used, CUDA's runtime when
#                                built with CUDA) are found by tristreamConfig.cmake.
# Installed: include/tristream/ (the public headers), lib/libtristream.{so,a},
# lib/cmake/tristream/, lib/pkgconfig/tristream.pc, bin/tristream, share/man/man1/tristream.1,
# share/bash-completion/completions/tristream.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(_tristream_parts tristream_common tristream_formats tristream_converter tristream_cuda
                     tristream_core)
set(_tristream_objects)
foreach(part IN LISTS _tristream_parts)
  list(APPEND _tristream_objects $<TARGET_OBJECTS:${part}>)
endforeach()

# The link dependencies of the objects (the parts' private ones), for the static library's users;
# found again here because imported targets found in a subdirectory are not visible at the top.
find_package(ZLIB REQUIRED)
find_package(BZip2 QUIET)
find_package(LibLZMA QUIET)
set(_tristream_deps Threads::Threads ZLIB::ZLIB zstd::zstd)
set(_tristream_find_deps "find_dependency(Threads)\nfind_dependency(ZLIB)\nfind_dependency(zstd)\n")
set(_tristream_pc_private "-lzstd -lz")
if(BZIP2_FOUND)
  list(APPEND _tristream_deps BZip2::BZip2)
  string(APPEND _tristream_find_deps "find_dependency(BZip2)\n")
  string(APPEND _tristream_pc_private " -lbz2")
endif()
if(LIBLZMA_FOUND)
  list(APPEND _tristream_deps LibLZMA::LibLZMA)
  string(APPEND _tristream_find_deps "find_dependency(LibLZMA)\n")
  string(APPEND _tristream_pc_private " -llzma")
endif()
if(TRISTREAM_HAVE_CUDA)
  list(APPEND _tristream_deps CUDA::cudart_static)
  string(APPEND _tristream_find_deps "find_dependency(CUDAToolkit)\n")
  string(APPEND _tristream_pc_private " -L${CUDAToolkit_LIBRARY_DIR} -lcudart_static -ldl -lrt")
endif()
string(APPEND _tristream_pc_private " -pthread")

foreach(kind SHARED STATIC)
  string(TOLOWER ${kind} lower)
  set(t tristream_${lower})
  add_library(${t} ${kind} ${_tristream_objects})
  target_include_directories(${t} PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
                                         $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_compile_features(${t} PUBLIC cxx_std_17)
  target_link_libraries(${t} PRIVATE ${_tristream_deps})
  set_target_properties(${t} PROPERTIES OUTPUT_NAME tristream EXPORT_NAME tristream_${lower}
                                        LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/lib
                                        ARCHIVE_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/lib)
endforeach()
set_target_properties(tristream_shared PROPERTIES EXPORT_NAME tristream
                      VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR})
add_library(tristream::tristream ALIAS tristream_shared)
add_library(tristream::tristream_static ALIAS tristream_static)

# ---- install -------------------------------------------------------------------------------
set(_tristream_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/tristream)
install(TARGETS tristream_shared tristream_static EXPORT tristreamTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS tristream RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The public headers: tristream.hpp and what it includes.
install(FILES include/tristream/tristream.hpp include/tristream/convert.hpp
              include/tristream/error.hpp include/tristream/format.hpp
              include/tristream/csr.hpp include/tristream/types.hpp
              include/tristream/wedges.hpp include/tristream/edge_sorter.hpp
              include/tristream/row_tally.hpp
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tristream)
install(EXPORT tristreamTargets NAMESPACE tristream:: DESTINATION ${_tristream_cmake_dir})
set(TRISTREAM_FIND_DEPENDENCIES "${_tristream_find_deps}")
configure_package_config_file(cmake/tristreamConfig.cmake.in
  ${CMAKE_BINARY_DIR}/tristreamConfig.cmake INSTALL_DESTINATION ${_tristream_cmake_dir})
write_basic_package_version_file(${CMAKE_BINARY_DIR}/tristreamConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/tristreamConfig.cmake
              ${CMAKE_BINARY_DIR}/tristreamConfigVersion.cmake cmake/Findzstd.cmake
        DESTINATION ${_tristream_cmake_dir})
set(TRISTREAM_PC_LIBS_PRIVATE "${_tristream_pc_private}")
# The .pc file finds its prefix from its own place (pkg-config's pcfiledir): relocatable, so a
# tree installed with `cmake --install --prefix P` works wherever P is.
file(RELATIVE_PATH TRISTREAM_PC_UP "/root/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/root")
string(REGEX REPLACE "/$" "" TRISTREAM_PC_UP "${TRISTREAM_PC_UP}")
configure_file(tristream.pc.in ${CMAKE_BINARY_DIR}/tristream.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/tristream.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
install(FILES docs/tristream.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES scripts/tristream.bash-completion DESTINATION
        ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME tristream)

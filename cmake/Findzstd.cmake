# Finds libzstd and defines the imported target zstd::zstd.
# Prefers zstd's own CMake package (zstdConfig.cmake) and falls back to a header/library search,
# because Debian's and Ubuntu's libzstd-dev do not always ship the CMake package.
find_package(zstd CONFIG QUIET NO_MODULE)
if(zstd_FOUND AND NOT TARGET zstd::zstd)
  if(TARGET zstd::libzstd_shared)
    add_library(zstd::zstd ALIAS zstd::libzstd_shared)
  elseif(TARGET zstd::libzstd_static)
    add_library(zstd::zstd ALIAS zstd::libzstd_static)
  endif()
endif()
if(NOT TARGET zstd::zstd)
  find_path(ZSTD_INCLUDE_DIR zstd.h)
  find_library(ZSTD_LIBRARY NAMES zstd)
  include(FindPackageHandleStandardArgs)
  find_package_handle_standard_args(zstd REQUIRED_VARS ZSTD_LIBRARY ZSTD_INCLUDE_DIR)
  if(zstd_FOUND)
    add_library(zstd::zstd UNKNOWN IMPORTED)
    set_target_properties(zstd::zstd PROPERTIES
      IMPORTED_LOCATION "${ZSTD_LIBRARY}"
      INTERFACE_INCLUDE_DIRECTORIES "${ZSTD_INCLUDE_DIR}")
  endif()
else()
  set(zstd_FOUND TRUE)
endif()

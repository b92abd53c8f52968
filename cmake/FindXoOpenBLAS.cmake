# Finds OpenBLAS (CBLAS interface) and defines the imported target crossover::openblas.
# Debian puts it under .../openblas-pthread/; other systems in the plain lib dir.
if(TARGET crossover::openblas)
  return()
endif()
find_path(XoOpenBLAS_INCLUDE_DIR cblas.h
  PATH_SUFFIXES openblas-pthread openblas x86_64-linux-gnu/openblas-pthread aarch64-linux-gnu/openblas-pthread)
find_library(XoOpenBLAS_LIBRARY NAMES openblas
  PATH_SUFFIXES openblas-pthread x86_64-linux-gnu/openblas-pthread aarch64-linux-gnu/openblas-pthread)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(XoOpenBLAS REQUIRED_VARS XoOpenBLAS_LIBRARY XoOpenBLAS_INCLUDE_DIR)
if(XoOpenBLAS_FOUND)
  add_library(crossover::openblas UNKNOWN IMPORTED)
  set_target_properties(crossover::openblas PROPERTIES
    IMPORTED_LOCATION "${XoOpenBLAS_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${XoOpenBLAS_INCLUDE_DIR}")
  # Found outside the system's library folders (e.g. in a folder given by
  # CMAKE_PREFIX_PATH, README "Building without root"), OpenBLAS's own dependency
  # libgfortran.so.5 may lie only there too: programs linking it get a DT_RPATH, which
  # also serves the libraries they load, instead of a DT_RUNPATH, which does not.
  include("${CMAKE_CURRENT_LIST_DIR}/XoSystemDirs.cmake")
  xo_outside_system_dirs(_xo_blas_dirs "${XoOpenBLAS_LIBRARY}")
  if(_xo_blas_dirs AND CMAKE_SYSTEM_NAME STREQUAL "Linux")
    set_property(TARGET crossover::openblas PROPERTY
      INTERFACE_LINK_OPTIONS "LINKER:--disable-new-dtags")
  endif()
endif()

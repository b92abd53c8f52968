# Finds CLBlast (C API) and defines the imported target crossover::clblast.
# A plain library search rather than CLBlast's own CLBlastConfig.cmake: Debian's copy
# names /usr/lib/<arch>/libOpenCL.so and /usr/include by absolute path, which pulls the
# system's files into a build pointed (CMAKE_PREFIX_PATH) at an unpacked folder.
if(TARGET crossover::clblast)
  return()
endif()
find_path(XoCLBlast_INCLUDE_DIR clblast_c.h)
find_library(XoCLBlast_LIBRARY NAMES clblast)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(XoCLBlast REQUIRED_VARS XoCLBlast_LIBRARY XoCLBlast_INCLUDE_DIR)
if(XoCLBlast_FOUND)
  add_library(crossover::clblast UNKNOWN IMPORTED)
  set_target_properties(crossover::clblast PROPERTIES
    IMPORTED_LOCATION "${XoCLBlast_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${XoCLBlast_INCLUDE_DIR}")
endif()

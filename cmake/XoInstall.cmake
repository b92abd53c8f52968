# Install: headers, libcrossover.a, one archive per plugin, libcrossover.so, the BLAS
# drop-in libcrossover_blas.so, the xo tool, the CMake package (crossover::crossover,
# crossover::shared, crossover::blas), crossover.pc (the static library),
# crossover-shared.pc (libcrossover.so) and crossover-blas.pc (the drop-in).
include(CMakePackageConfigHelpers)

get_property(_xo_plugin_targets GLOBAL PROPERTY XO_PLUGIN_TARGETS)
get_property(_xo_plugins GLOBAL PROPERTY XO_PLUGINS_ENABLED)

install(TARGETS crossover ${_xo_plugin_targets} crossover_shared crossover_blas EXPORT crossoverTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES core/include/crossover.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES core/include/crossover/plugin.h ${XO_GENERATED_INCLUDE}/crossover/version.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/crossover)

# The installed xo (and shared libraries) keep the RPATH to dependencies found outside the system's library
# folders (CMake's own CMAKE_INSTALL_RPATH_USE_LINK_PATH skips any folder inside the
# source or build tree, where an unpacked dependency folder may well lie).
include(XoSystemDirs)
set(_xo_dep_libs "${XoOpenBLAS_LIBRARY}")
if("opencl" IN_LIST _xo_plugins)
  list(APPEND _xo_dep_libs "${OpenCL_LIBRARY}" "${XoCLBlast_LIBRARY}")
endif()
xo_outside_system_dirs(_xo_dep_dirs ${_xo_dep_libs})
foreach(_xo_t xo crossover_shared crossover_blas)
  if(TARGET ${_xo_t} AND _xo_dep_dirs)
    set_property(TARGET ${_xo_t} APPEND PROPERTY INSTALL_RPATH "${_xo_dep_dirs}")
  endif()
endforeach()

set(XO_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/crossover)
install(EXPORT crossoverTargets NAMESPACE crossover:: DESTINATION ${XO_CMAKE_DIR})

set(XO_CONFIG_DEPS "find_dependency(Threads)\nfind_dependency(XoOpenBLAS)\n")
# The prefixes of the dependencies found outside the system's folders (an unpacked
# .ci/fetch-deps folder given by CMAKE_PREFIX_PATH: .../usr of .../usr/lib/<arch>/...):
# crossoverConfig.cmake searches them after the consumer's own paths, and crossover.pc
# links the libraries by path with an RPATH there, so a program built against the
# installed package finds what crossover was built with and needs nothing more given.
set(_xo_dep_prefixes "")
foreach(_xo_d IN LISTS _xo_dep_dirs)
  string(REGEX REPLACE "/lib(32|64)?(/.*)?$" "" _xo_p "${_xo_d}")
  list(APPEND _xo_dep_prefixes "${_xo_p}")
endforeach()
list(REMOVE_DUPLICATES _xo_dep_prefixes)
set(XO_DEP_PREFIXES "")
foreach(_xo_p IN LISTS _xo_dep_prefixes)
  string(APPEND XO_DEP_PREFIXES " \"${_xo_p}\"")
endforeach()
# crossover.pc names the archives by path (-lcrossover would find libcrossover.so beside
# them) and puts every dependency in Libs: the static library needs them whether or not
# pkg-config is asked for --static. OpenBLAS goes in directly: openblas.pc's own
# Libs.private names the Fortran runtime, which a shared libopenblas does not need from us.
set(XO_PC_REQUIRES "")
set(XO_PC_LIBS "")
foreach(t IN ITEMS crossover ${_xo_plugin_targets})
  string(APPEND XO_PC_LIBS " \${libdir}/${CMAKE_STATIC_LIBRARY_PREFIX}${t}${CMAKE_STATIC_LIBRARY_SUFFIX}")
endforeach()
get_filename_component(_xo_blas_dir "${XoOpenBLAS_LIBRARY}" DIRECTORY)
string(APPEND XO_PC_LIBS " -L${_xo_blas_dir} -lopenblas")
if("opencl" IN_LIST _xo_plugins)
  string(APPEND XO_CONFIG_DEPS "find_dependency(OpenCL)\nfind_dependency(XoCLBlast)\n")
  # By path as OpenBLAS, not `Requires: clblast OpenCL`: their .pc files need not be in
  # the consumer's pkg-config path (a fetch-deps folder's are not).
  get_filename_component(_xo_clblast_dir "${XoCLBlast_LIBRARY}" DIRECTORY)
  get_filename_component(_xo_ocl_dir "${OpenCL_LIBRARY}" DIRECTORY)
  string(APPEND XO_PC_LIBS " -L${_xo_clblast_dir} -lclblast -L${_xo_ocl_dir} -lOpenCL")
endif()
# DT_RPATH, not DT_RUNPATH: it serves OpenBLAS's own libgfortran in the folder too.
if(_xo_dep_dirs AND CMAKE_SYSTEM_NAME STREQUAL "Linux")
  string(APPEND XO_PC_LIBS " -Wl,--disable-new-dtags")
  foreach(_xo_d IN LISTS _xo_dep_dirs)
    string(APPEND XO_PC_LIBS " -Wl,-rpath,${_xo_d}")
  endforeach()
endif()
string(APPEND XO_PC_LIBS " -lm -lpthread")
if(CMAKE_DL_LIBS)
  string(APPEND XO_PC_LIBS " -l${CMAKE_DL_LIBS}")
endif()

configure_package_config_file(cmake/crossoverConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/crossoverConfig.cmake INSTALL_DESTINATION ${XO_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/crossoverConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/crossoverConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/crossoverConfigVersion.cmake
              cmake/FindXoOpenBLAS.cmake cmake/FindXoCLBlast.cmake cmake/XoSystemDirs.cmake
        DESTINATION ${XO_CMAKE_DIR})

# The .pc files name the prefix the package is installed to, normalised: it is filled in
# at install time (XoInstallPc.cmake), so `cmake --install --prefix DIR` works wherever
# DIR is, and libdir reads /DIR/lib, never lib/pkgconfig/../..//lib (which programs would
# carry in their RUNPATH).
set(XO_PC_PREFIX "@XO_PC_PREFIX@") # kept for the install step
foreach(pc crossover crossover-shared crossover-blas)
  configure_file(cmake/${pc}.pc.in ${CMAKE_CURRENT_BINARY_DIR}/${pc}.pc.install @ONLY)
endforeach()
install(CODE "set(XO_PC_BUILD_DIR \"${CMAKE_CURRENT_BINARY_DIR}\")
set(XO_PC_LIBDIR \"${CMAKE_INSTALL_LIBDIR}\")
include(\"${PROJECT_SOURCE_DIR}/cmake/XoInstallPc.cmake\")")

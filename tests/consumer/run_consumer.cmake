# cmake -P script: build consumer.c against the installed crossover (MODE cmake or
# pkg-config) and run it. Fails on any step. In pkg-config mode: the static build
# (`pkg-config --static crossover`) must run with no LD_LIBRARY_PATH and name no
# libcrossover.so; the shared one (crossover-shared.pc) must name it; the .pc versions
# must be crossover.h's.
# Optional: INIT_CACHE, a cmake -C script for the consumer's configure (what to ignore,
# where cmocka is); PC_ONLY=1: pkg-config sees the prefix's .pc files and the folders in
# PC_EXTRA only, none of the system's; PC_EXTRA: more .pc folders (cmocka's).
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(LAST_OUT "${out}" PARENT_SCOPE)
endfunction()
if(MODE STREQUAL "cmake")
  set(init "")
  if(INIT_CACHE)
    set(init -C ${INIT_CACHE})
  endif()
  run(${CMAKE_COMMAND} ${init} -S ${SRC} -B ${WORK} -DCMAKE_PREFIX_PATH=${PREFIX} -DCMAKE_C_COMPILER=${CC}
      "-DCMAKE_C_FLAGS=${EXTRA}" "-DCMAKE_EXE_LINKER_FLAGS=${EXTRA}")
  run(${CMAKE_COMMAND} --build ${WORK})
  run(${WORK}/consumer)
  run(${WORK}/consumer_shared)
  run(${WORK}/blas_consumer)
  foreach(style static shared blas)
    # nothing set in the environment but PATH (an OpenCL compiler may run the linker) and,
    # in a sanitizer build, its suppressions of the OpenCL runtimes' own leaks
    run(env -i "PATH=$ENV{PATH}" ${SAN_ENV} ${WORK}/classifier_${style} --epochs 1)
  endforeach()
else()
  find_program(PKG_CONFIG pkg-config REQUIRED)
  file(GLOB pcdirs ${PREFIX}/lib*/pkgconfig ${PREFIX}/lib/*/pkgconfig)
  string(REPLACE ";" ":" pcpath "${pcdirs};${PC_EXTRA}")
  if(PC_ONLY)
    set(ENV{PKG_CONFIG_LIBDIR} "${pcpath}")
    unset(ENV{PKG_CONFIG_PATH})
  else()
    set(ENV{PKG_CONFIG_PATH} "${pcpath}")
  endif()
  # The programs must start with nothing set: whatever they need from the prefix they
  # find through what pkg-config gave them, not through the environment.
  unset(ENV{LD_LIBRARY_PATH})
  separate_arguments(extra UNIX_COMMAND "${EXTRA}")
  function(pc_build out src)  # pc_build(OUT SRC [LINK flags...] PACKAGES pkg-config args...)
    cmake_parse_arguments(B "" "" "LINK;PACKAGES" ${ARGN})
    run(${PKG_CONFIG} ${B_PACKAGES})
    string(STRIP "${LAST_OUT}" flags)
    separate_arguments(flags UNIX_COMMAND "${flags}")
    run(${CC} -std=c11 ${extra} -o ${out} ${src} ${flags} ${B_LINK})
  endfunction()
  # Which shared libraries a program names (DT_NEEDED), checked where readelf exists.
  function(needed var exe)
    set(${var} "" PARENT_SCOPE)
    if(READELF)
      run(${READELF} -d ${exe})
      set(${var} "${LAST_OUT}" PARENT_SCOPE)
    endif()
  endfunction()

  # Static use, as README gives it: the archive is linked in, so the
  # program runs without LD_LIBRARY_PATH and names no libcrossover.so.
  # cmocka is the test's own dependency, wherever it lies (a fetch-deps folder too).
  run(${PKG_CONFIG} --variable=libdir cmocka)
  string(STRIP "${LAST_OUT}" cmocka_libdir)
  pc_build(${WORK}/consumer ${SRC}/consumer.c LINK -Wl,-rpath,${cmocka_libdir}
           PACKAGES --static --cflags --libs crossover cmocka)
  run(${WORK}/consumer)
  needed(n ${WORK}/consumer)
  if(n MATCHES "libcrossover")
    message(FATAL_ERROR "pkg-config --static crossover linked the shared library:\n${n}")
  endif()

  # The versions agree: crossover.h's (installed crossover/version.h) and the .pc files'.
  file(STRINGS "${PREFIX}/include/crossover/version.h" vline REGEX "define XO_VERSION_STRING")
  string(REGEX MATCH "\"([^\"]+)\"" _ "${vline}")
  foreach(pc crossover crossover-shared crossover-blas)
    run(${PKG_CONFIG} --modversion ${pc})
    string(STRIP "${LAST_OUT}" v)
    if(NOT v STREQUAL CMAKE_MATCH_1)
      message(FATAL_ERROR "${pc}.pc says version ${v}, crossover.h says ${CMAKE_MATCH_1}")
    endif()
  endforeach()

  # Every .pc names a normalised libdir (a path with .. or // would end up in programs'
  # RUNPATH as it is) and refers to nothing outside the package.
  foreach(pc crossover crossover-shared crossover-blas)
    run(${PKG_CONFIG} --variable=libdir ${pc})
    string(STRIP "${LAST_OUT}" dir)
    cmake_path(SET normal NORMALIZE "${dir}")
    if(NOT dir STREQUAL normal OR dir MATCHES "//|/\\.\\.?(/|$)")
      message(FATAL_ERROR "${pc}.pc: libdir ${dir} is not normalised (${normal})")
    endif()
  endforeach()
  file(GLOB pcfiles ${PREFIX}/lib*/pkgconfig/crossover*.pc)
  foreach(f ${pcfiles})
    file(READ ${f} text)
    if(text MATCHES "CONTRACT\\.md")
      message(FATAL_ERROR "${f} refers to CONTRACT.md, which is not in the package")
    endif()
  endforeach()

  # Shared use: crossover-shared.pc (and crossover-blas.pc); the program finds the
  # libraries through an rpath to the package's libdir.
  run(${PKG_CONFIG} --variable=libdir crossover-shared)
  string(STRIP "${LAST_OUT}" libdir)
  pc_build(${WORK}/consumer_shared ${SRC}/consumer.c LINK -Wl,-rpath,${libdir} -Wl,-rpath,${cmocka_libdir} -lm # consumer.c's own
           PACKAGES --cflags --libs crossover-shared cmocka)
  run(${WORK}/consumer_shared)
  needed(n ${WORK}/consumer_shared)
  if(READELF AND NOT n MATCHES "libcrossover\\.so")
    message(FATAL_ERROR "pkg-config crossover-shared did not link libcrossover.so:\n${n}")
  endif()
  pc_build(${WORK}/blas_consumer ${SRC}/blas_consumer.c LINK -Wl,-rpath,${libdir}
           PACKAGES --cflags --libs crossover-blas)
  run(${WORK}/blas_consumer)

  # The newcomer's classifier, the three ways, each run with nothing set.
  set(classifier ${SRC}/../../examples/classifier/classifier.c)
  pc_build(${WORK}/classifier_static ${classifier} LINK -lm PACKAGES --static --cflags --libs crossover)
  pc_build(${WORK}/classifier_shared ${classifier} LINK -Wl,-rpath,${libdir} ${BLAS_LIB} -lm
           PACKAGES --cflags --libs crossover-shared)
  pc_build(${WORK}/classifier_blas ${classifier} LINK -Wl,-rpath,${libdir} -lm
           PACKAGES --cflags --libs crossover-shared crossover-blas)
  foreach(style static shared blas)
    run(env -i "PATH=$ENV{PATH}" ${SAN_ENV} ${WORK}/classifier_${style} --epochs 1)
  endforeach()
endif()
message(STATUS "consumer (${MODE}) built and passed")

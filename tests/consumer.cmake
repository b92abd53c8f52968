# Install the package into a scratch prefix, then build and run an application against
# it twice: with find_package(crossover) and with pkg-config (`--static crossover`, run
# with nothing set; crossover-shared; crossover-blas). Both ways also build the
# newcomer's classifier (examples/classifier) static, shared and through the BLAS drop-in,
# and run it with nothing set in the environment.
set(XO_CONSUMER_PREFIX ${CMAKE_CURRENT_BINARY_DIR}/consumer-prefix)
# A sanitizer build's archives need the same runtime in the application.
set(XO_CONSUMER_FLAGS "")
set(XO_CONSUMER_SAN_ENV "")
if(XO_SANITIZE)
  set(XO_CONSUMER_FLAGS "-fsanitize=${XO_SANITIZE}")
  set(XO_CONSUMER_SAN_ENV "LSAN_OPTIONS=suppressions=${CMAKE_CURRENT_SOURCE_DIR}/lsan.supp")
endif()
# The consumer's own cmocka is the one this build found (in a fetch-deps folder on a
# machine without system packages): CMake's config and its .pc folder are handed on.
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/consumer-init.cmake "")
set(XO_CMOCKA_PC_DIR "")
if(cmocka_DIR)
  file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/consumer-init.cmake "set(cmocka_DIR \"${cmocka_DIR}\" CACHE PATH \"\")\n")
  get_filename_component(XO_CMOCKA_PC_DIR "${cmocka_DIR}/../../pkgconfig" ABSOLUTE)
endif()
add_test(NAME consumer_install
  COMMAND ${CMAKE_COMMAND} --install ${PROJECT_BINARY_DIR} --prefix ${XO_CONSUMER_PREFIX})
set_tests_properties(consumer_install PROPERTIES FIXTURES_SETUP xo_installed)
add_test(NAME consumer_find_package
  COMMAND ${CMAKE_COMMAND} -DMODE=cmake -DPREFIX=${XO_CONSUMER_PREFIX}
          -DSRC=${CMAKE_CURRENT_SOURCE_DIR}/consumer -DWORK=${CMAKE_CURRENT_BINARY_DIR}/consumer-cmake
          -DINIT_CACHE=${CMAKE_CURRENT_BINARY_DIR}/consumer-init.cmake
          -DCC=${CMAKE_C_COMPILER} "-DEXTRA=${XO_CONSUMER_FLAGS}" "-DSAN_ENV=${XO_CONSUMER_SAN_ENV}"
          -P ${CMAKE_CURRENT_SOURCE_DIR}/consumer/run_consumer.cmake)
add_test(NAME consumer_pkg_config
  COMMAND ${CMAKE_COMMAND} -DMODE=pkg-config -DPREFIX=${XO_CONSUMER_PREFIX}
          -DSRC=${CMAKE_CURRENT_SOURCE_DIR}/consumer -DWORK=${CMAKE_CURRENT_BINARY_DIR}/consumer-pc
          -DPC_EXTRA=${XO_CMOCKA_PC_DIR}
          -DCC=${CMAKE_C_COMPILER} "-DEXTRA=${XO_CONSUMER_FLAGS}" -DREADELF=${CMAKE_READELF}
          -DBLAS_LIB=${XoOpenBLAS_LIBRARY} "-DSAN_ENV=${XO_CONSUMER_SAN_ENV}"
          -P ${CMAKE_CURRENT_SOURCE_DIR}/consumer/run_consumer.cmake)
set_tests_properties(consumer_find_package consumer_pkg_config PROPERTIES
  FIXTURES_REQUIRED xo_installed LABELS consumer
  ENVIRONMENT "XO_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/cache/consumer;XO_CALIBRATE=off")

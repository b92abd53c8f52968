# Building without root (README): a second, smaller build of this source tree against the
# dependencies unpacked from Debian's .deb files into a folder (.ci/fetch-deps), with the
# system's own copies out of CMake's sight; asserts every library came from the folder.
# Skipped (77) where the .deb files can be neither found in apt's cache nor downloaded.
set(XO_NOROOT_WORK ${CMAKE_CURRENT_BINARY_DIR}/noroot)
file(MAKE_DIRECTORY ${XO_NOROOT_WORK})
add_test(NAME noroot_build
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/noroot.sh ${PROJECT_SOURCE_DIR} ${XO_NOROOT_WORK}
          ${CMAKE_C_COMPILER})
set_tests_properties(noroot_build PROPERTIES LABELS noroot SKIP_RETURN_CODE 77
  PROCESSORS 2 TIMEOUT 600 ENVIRONMENT "CMAKE=${CMAKE_COMMAND}")

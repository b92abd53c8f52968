# Run by `cmake --install` (XoInstall.cmake): write the .pc files with the prefix being
# installed to, normalised and without a trailing slash. In: XO_PC_BUILD_DIR (the
# configured *.pc.install files), XO_PC_LIBDIR (CMAKE_INSTALL_LIBDIR).
cmake_path(SET prefix NORMALIZE "${CMAKE_INSTALL_PREFIX}")
string(REGEX REPLACE "/+$" "" prefix "${prefix}")
foreach(pc crossover crossover-shared crossover-blas)
  file(READ "${XO_PC_BUILD_DIR}/${pc}.pc.install" text)
  string(REPLACE "@XO_PC_PREFIX@" "${prefix}" text "${text}")
  set(dest "$ENV{DESTDIR}${CMAKE_INSTALL_PREFIX}/${XO_PC_LIBDIR}/pkgconfig/${pc}.pc")
  message(STATUS "Installing: ${dest}")
  file(WRITE "${dest}" "${text}")
  list(APPEND CMAKE_INSTALL_MANIFEST_FILES "${dest}")
endforeach()

#!/usr/bin/env bash
# Builds crossover against its dependencies unpacked into a folder (.ci/fetch-deps), with
# the system's own OpenBLAS, CLBlast, OpenCL and cmocka out of CMake's sight, then checks
# that every one of them came from the folder: CMake's cache, the link lines, the headers
# the compiler read, and the libraries the loader picks for the built and the installed
# programs (no LD_LIBRARY_PATH). Runs xo, two tests and an application built against the
# installed package from that build.
#
# Usage: [CMAKE=cmake] tests/noroot.sh SOURCE_DIR WORK_DIR C_COMPILER
# Exit 77 (skipped) when the .deb files can be neither found nor downloaded.
set -uo pipefail
src=$1 work=$2 cc=$3 cmake=${CMAKE:-cmake}
deps=$work/deps build=$work/build inst=$work/install
unset LD_LIBRARY_PATH CMAKE_PREFIX_PATH PKG_CONFIG_PATH
fail() { echo "noroot: FAIL: $*" >&2; exit 1; }

# The folder is kept between runs; made again when fetch-deps changes or a .deb it came
# from is gone. It is made elsewhere and then moved, as to another machine: whatever
# still points where it was made fails the checks below.
stamp=$(sha256sum "$src/.ci/fetch-deps" | cut -c1-16)
fresh=0
[[ $(cat "$deps/.stamp" 2>/dev/null) == "$stamp" && -f $deps/debs.list ]] && fresh=1
if ((fresh)); then
  while IFS= read -r f; do [[ -f $deps/$f || -f $f ]] || fresh=0; done < "$deps/debs.list"
fi
if ((!fresh)); then
  rm -rf "$deps" "$work/fetched"
  "$src/.ci/fetch-deps" "$work/fetched" > "$work/fetch-deps.log"
  rc=$?
  if [[ $rc -eq 3 ]]; then
    echo "noroot: skipped, the .deb files are not available"; exit 77
  fi
  [[ $rc -eq 0 ]] || fail "fetch-deps exited $rc"
  mv "$work/fetched" "$deps"
  echo "$stamp" > "$deps/.stamp"
fi
triplet=$("$cc" -print-multiarch)

# 0. Nothing in the folder names an absolute /usr path (.pc, .cmake, symbolic links).
bad=$(grep -rlE "(^|[\"'=; (:]|-L|-I)/usr(/|\$|[\"'; )])" --include='*.pc' --include='*.cmake' "$deps/usr"
      find "$deps" -lname '/*')
[[ -z $bad ]] || fail "absolute paths left in the folder:"$'\n'"$bad"

# Configure a source tree with CMAKE_PREFIX_PATH = the given prefixes only: the system's
# copies are ignored both as prefixes and as directories. Then check that every cache
# entry naming a dependency and every link line lies in the folder.
ignore="/usr/include;/usr/include/$triplet;/usr/include/$triplet/openblas-pthread"
ignore+=";/usr/lib;/usr/lib/$triplet;/usr/lib/$triplet/openblas-pthread;/lib;/lib/$triplet"
configure() { # source-dir build-dir folder [more prefixes]
  local bad
  rm -rf "$2"
  "$cmake" -S "$1" -B "$2" -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER="$cc" \
    -DXO_WITH_CUDA=OFF -DCMAKE_PREFIX_PATH="$3/usr${4:+;$4}" \
    -DCMAKE_IGNORE_PREFIX_PATH="/usr;/usr/local;/" -DCMAKE_IGNORE_PATH="$ignore" \
    -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF > "$2.configure.log" 2>&1 ||
    { cat "$2.configure.log"; fail "configure $1 against $3"; }
  bad=$(grep -iE '^[A-Za-z_]*(openblas|opencl|clblast|cmocka)[A-Za-z_]*:(FILEPATH|PATH)=' \
          "$2/CMakeCache.txt" | grep -v "=$3/")
  [[ -z $bad ]] || fail "cache entries outside $3:"$'\n'"$bad"
  grep -qE "^cmocka_DIR:PATH=$3/" "$2/CMakeCache.txt" || fail "cmocka_DIR not in $3"
  bad=$(find "$2" -name link.txt -exec cat {} + |
        grep -oE '(^| )/(usr/)?lib[^ ]*lib(openblas|OpenCL|clblast|cmocka)[^ ]*' | sort -u)
  [[ -z $bad ]] || fail "linked from the system:"$'\n'"$bad"
}
# No header compiled in a build tree came from the system's copies.
check_headers() { # build-dir
  local bad
  bad=$(find "$1" -name '*.o.d' -exec cat {} + |
        grep -oE '(^| )/usr/include/[^ ]*(cblas|openblas|CL/|clblast|cmocka)[^ ]*' | sort -u)
  [[ -z $bad ]] || fail "headers read from the system:"$'\n'"$bad"
}
# The loader resolves these libraries inside the folder (no LD_LIBRARY_PATH).
sos=(libopenblas.so.0 libOpenCL.so.1 libclblast.so.1)
[[ -e $deps/usr/lib/$triplet/libgfortran.so.5 ]] && sos+=(libgfortran.so.5)
check_ldd() { # program soname...
  local prog=$1 so path; shift
  for so in "$@"; do
    path=$(ldd "$prog" | awk -v s="$so" '$1 == s {print $3}')
    [[ $path == "$deps"/* ]] || fail "$(basename "$prog"): $so -> ${path:-not found}"
  done
}
# A program runs and passes.
check_run() { # log-name program args...
  local log=$work/$1.log; shift
  "$@" > "$log" 2>&1 || { cat "$log"; fail "$*"; }
}
export OCL_ICD_VENDORS=$deps/etc/OpenCL/vendors XO_CACHE_DIR=$work/cache XO_CALIBRATE=off

# 1. The same .deb files as dpkg -x leaves them (their .cmake and .pc files name /usr):
#    configuring is enough to see what CMake resolves.
rm -rf "$work/raw"
while IFS= read -r f; do
  [[ $f == /* ]] || f=$deps/$f
  dpkg-deb -x "$f" "$work/raw" || fail "dpkg-deb -x $f"
done < "$deps/debs.list"
configure "$src" "$work/build-raw" "$work/raw"

# 2. The folder from fetch-deps: the library, xo and two tests, built, installed and run
#    (OpenCL vendors from the folder's vendor directory, empty here: no device).
rm -rf "$inst"
configure "$src" "$build" "$deps"
targets=(xo test_errors test_opencl_status)
# and the shared libraries `cmake --install` wants, where the tree has them
help=$("$cmake" --build "$build" --target help)
for t in crossover_shared crossover_blas; do grep -qw "$t" <<< "$help" && targets+=("$t"); done
"$cmake" --build "$build" -j2 --target "${targets[@]}" > "$work/build.log" 2>&1 ||
  { tail -n 40 "$work/build.log"; fail "build"; }
"$cmake" --install "$build" --prefix "$inst" > "$work/install.log" 2>&1 || fail "install"
check_headers "$build"
check_ldd "$build/bench/xo" "${sos[@]}"
check_ldd "$build/tests/test_errors" "${sos[@]}" libcmocka.so.0
check_ldd "$inst/bin/xo" "${sos[@]}"
check_run xo-info "$inst/bin/xo" info
grep -q 'device 0 (cpu)' "$work/xo-info.log" || fail "xo info lists no cpu device"
check_run test_errors "$build/tests/test_errors"
check_run test_opencl_status "$build/tests/test_opencl_status"

# 3. An application built with find_package(crossover) against the install and the folder.
configure "$src/tests/consumer" "$work/consumer" "$deps" "$inst"
"$cmake" --build "$work/consumer" > "$work/consumer.log" 2>&1 ||
  { cat "$work/consumer.log"; fail "consumer build"; }
check_headers "$work/consumer"
check_ldd "$work/consumer/consumer" "${sos[@]}" libcmocka.so.0
check_run consumer-run "$work/consumer/consumer"
# 4. The suite's consumer_find_package and consumer_pkg_config on the install, as on a
#    machine without system packages: only the install is given (cmocka, the test's own
#    dependency, from the folder); the installed package itself must lead to OpenBLAS,
#    CLBlast and the ICD loader in the folder, and the programs run with nothing set.
pcdir=$work/pc-cmocka
rm -rf "$pcdir" && mkdir -p "$pcdir"
cp "$deps/usr/lib/$triplet/pkgconfig/cmocka.pc" "$pcdir/" || fail "no cmocka.pc in the folder"
cat > "$work/consumer-init.cmake" <<EOF
set(CMAKE_IGNORE_PREFIX_PATH "/usr;/usr/local;/" CACHE STRING "")
set(CMAKE_IGNORE_PATH "$ignore" CACHE STRING "")
set(CMAKE_FIND_USE_PACKAGE_REGISTRY OFF CACHE BOOL "")
set(cmocka_DIR "$deps/usr/lib/$triplet/cmake/cmocka" CACHE PATH "")
EOF
# The classifier's CBLAS twin is the program's own use of OpenBLAS: it links the folder's.
blas_lib=$(ls "$deps/usr/lib/$triplet"/openblas-pthread/libopenblas.so* 2>/dev/null | head -1)
[[ -n $blas_lib ]] || fail "no libopenblas in the folder"
for mode in cmake pkg-config; do
  "$cmake" -DMODE=$mode -DBLAS_LIB="$blas_lib" -DPREFIX="$inst" -DSRC="$src/tests/consumer" -DWORK="$work/consumer-$mode" \
    -DCC="$cc" -DINIT_CACHE="$work/consumer-init.cmake" -DPC_ONLY=1 -DPC_EXTRA="$pcdir" \
    -DREADELF="$(command -v readelf)" -P "$src/tests/consumer/run_consumer.cmake" > "$work/consumer-$mode.log" 2>&1 ||
    { cat "$work/consumer-$mode.log"; fail "consumer ($mode) with only the install given"; }
  check_ldd "$work/consumer-$mode/consumer" "${sos[@]}"
done
echo "noroot: built and ran against $deps only"

#!/bin/sh
# A Fortran program built with gfortran against -lblas runs unchanged on libcrossover_blas.so,
# both ways a program meets it: LD_PRELOAD, and as the system's libblas.so.3 (what Debian's
# BLAS alternative does; here a libblas.so.3 link on LD_LIBRARY_PATH). XO_LOG=summary must
# show its dgemm. Usage: blas_fortran.sh LIBCROSSOVER_BLAS SOURCE.f90 WORKDIR. Exit 77
# (skipped) without gfortran or a -lblas to link, or in a sanitizer build.
set -eu
lib=$1 src=$2 work=$3
[ -z "${XO_SANITIZE:-}" ] || { echo "skipped: sanitizer build"; exit 77; }
command -v gfortran >/dev/null 2>&1 || { echo "skipped: no gfortran"; exit 77; }
rm -rf "$work" && mkdir -p "$work/alt"
gfortran -O1 -o "$work/prog" "$src" -lblas || { echo "skipped: cannot link -lblas"; exit 77; }
"$work/prog" | grep -q "fortran ok"                  # the system's BLAS, for reference
ln -s "$lib" "$work/alt/libblas.so.3"
for how in preload alternative; do
  for device in auto cpu; do
    if [ $how = preload ]; then
      out=$(XO_LOG=summary XO_DEVICE=$device LD_PRELOAD="$lib" "$work/prog" 2>&1)
    else
      out=$(XO_LOG=summary XO_DEVICE=$device LD_LIBRARY_PATH="$work/alt" "$work/prog" 2>&1)
    fi
    echo "--- $how, XO_DEVICE=$device"; echo "$out"
    echo "$out" | grep -q "fortran ok"
    echo "$out" | grep -Eq "^ +dgemm +f77 +[0-9 ]*[1-9]"
  done
done

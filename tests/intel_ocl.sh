#!/usr/bin/env bash
# A test program on Intel's OpenCL CPU runtime (docs/opencl.md "Implementations tested"):
# finds libintelocl.so, registers it through an .icd file with its absolute path in a
# scratch folder (the .icd the wheel ships names a placeholder path) and runs
# PROGRAM opencl ARGS... with OCL_ICD_VENDORS pointing there, so Intel's is the only
# OpenCL platform the program sees.
#
# Usage: tests/intel_ocl.sh WORK_DIR PROGRAM [ARGS...]
# Where it looks: XO_INTEL_OCL_LIB (the file), XO_INTEL_OCL_DIR/lib, the folder .ci/deps
# installs into (${XDG_CACHE_HOME:-~/.cache}/crossover/intel-opencl-rt/lib), and the lib
# folder of each Python prefix where `pip install intel-opencl-rt intel-cmplr-lib-rt`
# would put it. Exit 77 (skipped) where it is not installed or cannot load.
set -uo pipefail
work=$1 prog=$2
shift 2

cands=()
[[ -n ${XO_INTEL_OCL_LIB:-} ]] && cands+=("$XO_INTEL_OCL_LIB")
[[ -n ${XO_INTEL_OCL_DIR:-} ]] && cands+=("$XO_INTEL_OCL_DIR/lib/libintelocl.so")
cands+=("${XDG_CACHE_HOME:-$HOME/.cache}/crossover/intel-opencl-rt/lib/libintelocl.so")
for py in python3 /usr/bin/python3; do
  command -v "$py" > /dev/null 2>&1 || continue
  while IFS= read -r p; do
    [[ -n $p ]] && cands+=("$p/lib/libintelocl.so")
  done < <("$py" -c 'import site, sys; print(sys.prefix); print(site.getuserbase())' 2>/dev/null)
done
lib=
for f in "${cands[@]}"; do
  [[ -f $f ]] && { lib=$(cd "$(dirname "$f")" && pwd)/$(basename "$f"); break; }
done
if [[ -z $lib ]]; then
  echo "Intel's OpenCL CPU runtime is not installed (pip install intel-opencl-rt intel-cmplr-lib-rt): skipped"
  exit 77
fi
# Its dependencies (libtbb from PyPI tbb, libimf/libsvml from intel-cmplr-lib-rt) lie beside it.
missing=$(ldd "$lib" 2>&1 | grep 'not found')
if [[ -n $missing ]]; then
  echo "$lib cannot load (is intel-cmplr-lib-rt installed?): skipped"
  echo "$missing"
  exit 77
fi

rm -rf "$work" && mkdir -p "$work/vendors" || exit 1
echo "$lib" > "$work/vendors/intel-cpu.icd"
export OCL_ICD_VENDORS=$work/vendors OCL_ICD_FILENAMES=
"$prog" opencl "$@"
rc=$?
if [[ $rc -eq 77 ]]; then
  echo "intel_ocl: FAIL: $lib loads, but crossover found no OpenCL device on it" >&2
  exit 1
fi
exit $rc

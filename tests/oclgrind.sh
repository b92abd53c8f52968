#!/usr/bin/env bash
# Every own OpenCL kernel under Oclgrind, the OpenCL simulator that checks each memory
# access (docs/opencl.md "Implementations tested"): runs PROGRAM (test_cl_kernels) on
# Oclgrind alone, registered through an .icd file in a scratch folder (OCL_ICD_VENDORS),
# with its data-race and API-error checks on. Fails on any error Oclgrind reports, on
# the program failing, and on a kernel of KERNEL_DIR's .cl files that did not run
# (KERNELS instead of a folder: those kernel names, e.g. the generated xo_chain).
# Not --uninitialized (OCLGRIND_UNINITIALIZED): it reports false positives after
# clEnqueueFillBuffer and when buffer ids are reused. OCLGRIND_MAX_WGSIZE keeps the
# simulated work groups small (CLBlast is not run here: it needs larger ones).
#
# Usage: tests/oclgrind.sh PROGRAM KERNEL_DIR|"KERNEL..." WORK_DIR
# Exit 77 (skipped) where Oclgrind is not installed (Debian: apt-get install oclgrind;
# XO_OCLGRIND_ICD may name its liboclgrind-rt-icd.so elsewhere).
set -uo pipefail
prog=$1 kernels=$2 work=$3

lib=${XO_OCLGRIND_ICD:-}
if [[ -z $lib ]]; then
  for f in /usr/lib/oclgrind/liboclgrind-rt-icd.so /usr/lib/*/oclgrind/liboclgrind-rt-icd.so \
           /usr/local/lib/oclgrind/liboclgrind-rt-icd.so /usr/local/lib/liboclgrind-rt-icd.so \
           /usr/lib/*/liboclgrind-rt-icd.so; do
    [[ -f $f ]] && { lib=$f; break; }
  done
fi
if [[ -z $lib || ! -f $lib ]]; then
  echo "Oclgrind is not installed (liboclgrind-rt-icd.so not found): skipped"
  exit 77
fi

rm -rf "$work" && mkdir -p "$work/vendors" || exit 1
echo "$lib" > "$work/vendors/oclgrind.icd"
export OCL_ICD_VENDORS=$work/vendors OCL_ICD_FILENAMES=
# Oclgrind is not thread-safe: no background calibration. Its kernel binaries stay here.
export XO_CALIBRATE=off XO_CACHE_DIR=$work/cache
export OCLGRIND_CHECK_API=1 OCLGRIND_DATA_RACES=1 OCLGRIND_INST_COUNTS=1
export OCLGRIND_MAX_WGSIZE=${OCLGRIND_MAX_WGSIZE:-48} OCLGRIND_LOG=$work/oclgrind.log
unset OCLGRIND_UNINITIALIZED
"$prog" opencl > "$work/out.txt" 2>&1
rc=$?
# The program's own lines; OCLGRIND_INST_COUNTS's tables reduced to the kernels' names.
grep -v -E '^ +[0-9]+ - |^$|^Instructions executed for kernel' "$work/out.txt"
bad=0
if [[ $rc -eq 77 ]]; then
  echo "oclgrind: FAIL: Oclgrind ($lib) is installed, but crossover found no OpenCL device on it" >&2
  bad=1
elif [[ $rc -ne 0 ]]; then
  echo "oclgrind: FAIL: $prog exited with $rc" >&2
  bad=1
fi
if [[ -s $work/oclgrind.log ]]; then
  echo "oclgrind: FAIL: Oclgrind reported errors:" >&2
  head -c 20000 "$work/oclgrind.log" >&2
  bad=1
fi
# API errors found while building programs come on stderr rather than in the log.
if grep -q '^Oclgrind - ' "$work/out.txt"; then
  echo "oclgrind: FAIL: Oclgrind reported errors:" >&2
  grep -A3 '^Oclgrind - ' "$work/out.txt" | head -n 60 >&2
  bad=1
fi
ran=$(sed -n "s/^Instructions executed for kernel '\([A-Za-z0-9_]*\)':.*/\1/p" "$work/out.txt" | sort -u)
if [[ -d $kernels ]]; then
  all=$(cat "$kernels"/*.cl | sed -n 's/.*__kernel[[:space:]]\{1,\}void[[:space:]]\{1,\}\([A-Za-z0-9_]*\).*/\1/p' | sort -u)
else
  all=$(tr ' ' '\n' <<< "$kernels" | grep . | sort -u)
fi
[[ -n $all ]] || { echo "oclgrind: FAIL: no __kernel found in $kernels" >&2; bad=1; }
missing=$(comm -23 <(echo "$all") <(echo "$ran"))
if [[ -n $missing ]]; then
  echo "oclgrind: FAIL: kernels that did not run (add a call to $(basename "$prog")):" $missing >&2
  bad=1
fi
echo "oclgrind: $(echo "$ran" | grep -c .) of $(echo "$all" | grep -c .) kernels ran under Oclgrind ($lib)"
exit $bad

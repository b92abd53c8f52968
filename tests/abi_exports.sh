#!/usr/bin/env bash
# The closed ABI (docs/design.md "Exports"). libcrossover.so exports exactly the functions
# crossover.h declares, and crossover.h marks each of them XO_API; libcrossover_blas.so
# exports exactly the BLAS and CBLAS names of blas_names.h. The public list is read from
# the header itself (through the preprocessor), so it cannot drift from the API.
#
# Usage: tests/abi_exports.sh CC NM INCLUDE_DIRS CROSSOVER_SO BLAS_NAMES_H CROSSOVER_BLAS_SO
#   INCLUDE_DIRS: colon-separated folders holding crossover.h and crossover/version.h
set -uo pipefail
cc=$1 nm=$2 incdirs=$3 so=$4 blas_names=$5 blas_so=$6
bad=0
fail() { echo "abi_exports: FAIL: $*" >&2; bad=1; }

incs=()
IFS=: read -ra dirs <<< "$incdirs"
for d in "${dirs[@]}"; do incs+=("-I$d"); done

# Every function crossover.h declares, with 1 where it carries XO_API (expanded to a
# marker here), 0 where not: statements split at ; { }, typedefs and static inline
# definitions left out.
declared=$(echo '#include <crossover.h>' |
  "$cc" -E -P -DXO_API=__xo_api_marker__ "${incs[@]}" -x c - |
  tr '\n' ' ' | tr ';{}' '\n\n\n' |
  awk '!/(^|[^A-Za-z0-9_])(typedef|static)[^A-Za-z0-9_]/ &&
       match($0, /(^|[^A-Za-z0-9_])xo_[a-z0-9_]+[ \t]*\(/) {
         name = substr($0, RSTART, RLENGTH); sub(/^[^x]*/, "", name); sub(/[ \t]*\($/, "", name)
         print name, ($0 ~ /__xo_api_marker__/) ? 1 : 0 }' | sort -u)
[[ -n $declared ]] || { echo "abi_exports: FAIL: no function found in crossover.h" >&2; exit 1; }
public=$(awk '{print $1}' <<< "$declared")
while read -r name api; do
  [[ $api == 1 ]] || fail "crossover.h declares $name without XO_API (it would not be exported)"
done <<< "$declared"

# What a shared library exports: defined dynamic symbols, version suffixes dropped.
exports() { "$nm" -D --defined-only "$1" | awk 'NF >= 3 {print $3}' | sed 's/@.*//' | sort -u; }

got=$(exports "$so")
[[ -n $got ]] || { echo "abi_exports: FAIL: $nm found no exports in $so" >&2; exit 1; }
while read -r s; do
  grep -qxF "$s" <<< "$public" || fail "libcrossover.so exports $s, which is not in crossover.h's API"
done <<< "$got"
while read -r s; do
  grep -qxF "$s" <<< "$got" || fail "crossover.h declares $s, but libcrossover.so does not export it"
done <<< "$public"
echo "libcrossover.so: $(wc -l <<< "$got") exports, crossover.h: $(wc -l <<< "$public") functions"

# The drop-in: the names blas_names.h lists as exported (X(name, OWN) and X(name, FWD)
# entries; its PTR entries are private pointers), no more, no fewer.
blas=$(grep -oE 'X\([a-z0-9_]+, *(OWN|FWD)\)' "$blas_names" | sed -E 's/^X\(//; s/,.*//' | sort -u)
[[ -n $blas ]] || { echo "abi_exports: FAIL: no name found in $blas_names" >&2; exit 1; }
got=$(exports "$blas_so")
while read -r s; do
  grep -qxF "$s" <<< "$blas" || fail "libcrossover_blas.so exports $s, which is not a BLAS or CBLAS name of blas_names.h"
done <<< "$got"
while read -r s; do
  grep -qxF "$s" <<< "$got" || fail "libcrossover_blas.so does not export $s (blas_names.h lists it)"
done <<< "$blas"
echo "libcrossover_blas.so: $(wc -l <<< "$got") exports, blas_names.h: $(wc -l <<< "$blas") names"

# The version (set once, in project(VERSION)) is at least the newest release whose
# additions crossover.h carries ("added in 0.3" and the like): each addition bumps it.
read -r major minor <<< "$(printf '#include <crossover.h>\nXO_VERSION_MAJOR XO_VERSION_MINOR\n' |
  "$cc" -E -P "${incs[@]}" -x c - | tail -n 1)"
header=$(for d in "${dirs[@]}"; do [[ -f $d/crossover.h ]] && echo "$d/crossover.h"; done | head -n 1)
newest=$(grep -oiE 'added in [0-9]+\.[0-9]+' "$header" | awk '{print $3}' |
  sort -t. -k1,1n -k2,2n | tail -n 1)
if [[ -n $newest ]] && (( major * 1000 + minor < ${newest%.*} * 1000 + ${newest#*.} )); then
  fail "XO_VERSION is $major.$minor, but crossover.h has additions of $newest: bump project(VERSION)"
fi
echo "version: $major.$minor; newest additions in crossover.h: ${newest:-none}"
exit $bad

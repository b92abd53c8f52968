#!/bin/sh
# Auto against every forced device, run by run (docs/placement.md, "Auto against forced
# devices, run by run"): each user-style program (bench/programs.c) runs as its own
# process, as a user's program does, in three situations of the profile cache:
#   first  the first run after an empty cache (each placement from an empty cache);
#   busy   a cache written while the machine was busy (planted: mem_gbps = 2.0, spread
#          0.56, the sgemm curve collapsing to 0.131 GFLOP/s from n = 128): auto's 1st
#          run, and its 3rd (after two healing runs);
#   steady the cache as those runs left it: the median of 3 runs of each placement.
# Prints a markdown table of it/s and auto / best forced. Run it on a quiet machine.
#
#   bench/trust_table.sh [BUILD_DIR] [SECONDS_PER_RUN]     (defaults: build, 2)
# XO_TRUST_PROGRAMS="mlp:32 ode:" picks programs (PROGRAM:BATCH, the default is all).
set -eu
build=${1:-build}
secs=${2:-2}
prog="$build/bench/xo_programs"
xo="$build/bench/xo"
[ -x "$prog" ] && [ -x "$xo" ] || { echo "build first: $prog, $xo" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/xo-trust.XXXXXX")
trap 'rm -rf "$work"' EXIT
unset XO_DEVICE XO_CALIBRATE XO_LOG

# The placements: every device xo info lists, then auto.
configs=$(XO_CALIBRATE=off XO_CACHE_DIR="$work/probe" "$xo" info 2>/dev/null |
          awk '/^  plugin/ && !seen[$2]++ {print $2}')
configs="$configs auto"

programs=${XO_TRUST_PROGRAMS:-"mlp:1 mlp:32 mlp:256 mlp:2048 rnn:100 rnn:10000 ode:"}

# rate PROGRAM BATCH DEVICE CACHE: it/s of one run (0 when it failed), the word before "it/s".
rate() {
    dev=$3
    [ -n "$dev" ] || dev=auto
    out=$(XO_CACHE_DIR=$4 XO_DEVICE=$dev "$prog" "$1" ${2:+"$2"} --seconds "$secs" 2>/dev/null || true)
    echo "$out" | awk '{for (i = 2; i <= NF; i++) if ($i == "it/s") {print $(i - 1); exit}} END {}' | sed -n 1p | grep . || echo 0
}

# Plant a busy machine's figures in every profile of cache $1.
spoil() {
    for f in "$1"/*.profile; do
        [ -f "$f" ] || continue
        sed -i -e 's/^mem_gbps = .*/mem_gbps = 2.0/' -e 's/^sstream_gbps = .*/sstream_gbps = 2.0/' \
            -e 's/^dstream_gbps = .*/dstream_gbps = 2.0/' -e 's/^spread = .*/spread = 0.56/' \
            -e 's/^provisional = .*/provisional = 0/' -e 's/^untrusted_runs = .*/untrusted_runs = 0/' \
            -e 's/^\(sgemm_gflops_\(128\|256\|512\|1024\|2048\)\) = .*/\1 = 0.131/' "$f"
    done
}

median3() { printf '%s\n%s\n%s\n' "$1" "$2" "$3" | sort -g | sed -n 2p; }

header="| program | situation |"
rule="|---|---|"
for c in $configs; do header="$header $c |"; rule="$rule---:|"; done
echo "$header auto / best forced |"
echo "$rule---:|"

row() { # PROGRAM SITUATION RATES...: one table row with auto / best forced
    line="| $1 | $2 |"
    shift 2
    best=0 autor=0 i=0
    for r in "$@"; do
        i=$((i + 1))
        line="$line $r |"
        if [ "$i" -lt "$#" ]; then
            best=$(awk -v a="$best" -v b="$r" 'BEGIN {print (b > a) ? b : a}')
        else
            autor=$r
        fi
    done
    ratio=$(awk -v a="$autor" -v b="$best" 'BEGIN {if (b > 0) printf "%.2f", a / b; else print "-"}')
    echo "$line $ratio |"
}

for p in $programs; do
    name=${p%%:*}
    batch=${p#*:}
    label="$name${batch:+ b$batch}"
    # first runs after an empty cache
    rates=""
    for c in $configs; do
        rm -rf "$work/first"
        rates="$rates $(rate "$name" "$batch" "$c" "$work/first")"
    done
    row "$label" "first run, empty cache" $rates
    # a cache written on a busy machine: xo info measures every device, then it is spoiled
    rm -rf "$work/busy"
    XO_CACHE_DIR="$work/busy" "$xo" info >/dev/null 2>&1 || true
    spoil "$work/busy"
    rates=""
    for c in $configs; do
        [ "$c" = auto ] && continue
        rates="$rates $(rate "$name" "$batch" "$c" "$work/busy")"
    done
    a1=$(rate "$name" "$batch" auto "$work/busy")
    row "$label" "busy-written cache, run 1" $rates "$a1"
    rate "$name" "$batch" auto "$work/busy" >/dev/null
    a3=$(rate "$name" "$batch" auto "$work/busy")
    row "$label" "busy-written cache, run 3" $rates "$a3"
    # steady state: the cache as those runs left it
    rates=""
    for c in $configs; do
        r1=$(rate "$name" "$batch" "$c" "$work/busy")
        r2=$(rate "$name" "$batch" "$c" "$work/busy")
        r3=$(rate "$name" "$batch" "$c" "$work/busy")
        rates="$rates $(median3 "$r1" "$r2" "$r3")"
    done
    row "$label" "steady state (median of 3)" $rates
done

#!/bin/sh
# Auto against every forced device, run by run (docs/placement.md, "Auto against forced
# devices, run by run"): each user-style program (bench/programs.c) runs as its own
# process, as a user's program does, in three situations of the profile cache:
#   first  the first run after an empty cache (each placement from an empty cache);
#   busy   a cache written while the machine was busy (planted: mem_gbps = 2.0, spread
#          0.56, the sgemm curve collapsing to 0.131 GFLOP/s from n = 128), a fresh copy
#          for each run: auto's 1st run, and its 3rd (after two healing runs);
#   steady the cache as those runs left it.
# Every cell is the median of REPS runs; the placements take turns within each
# repetition (in reverse order every other one), so that a slow spell of the machine
# falls on all of them alike. Prints a markdown table of it/s, auto / best forced (of the
# medians), and the worst repetition's auto / best forced (each run against the forced
# runs of its own turn). Run it on a quiet machine.
#
#   bench/trust_table.sh [BUILD_DIR] [SECONDS_PER_RUN] [REPS]     (defaults: build, 3, 3)
# XO_TRUST_PROGRAMS="mlp:32 ode:" picks programs (PROGRAM:BATCH, the default is all).
set -eu
build=${1:-build}
secs=${2:-3}
reps=${3:-3}
prog="$build/bench/xo_programs"
xo="$build/bench/xo"
[ -x "$prog" ] && [ -x "$xo" ] || { echo "build first: $prog, $xo" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/xo-trust.XXXXXX")
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM HUP # through the EXIT trap
unset XO_DEVICE XO_CALIBRATE XO_LOG

# The placements: every device xo info lists, then auto.
configs=$(XO_CALIBRATE=off XO_CACHE_DIR="$work/probe" "$xo" info 2>/dev/null |
          awk '/^  plugin/ && !seen[$2]++ {print $2}')
configs="$configs auto"
reversed=$(for c in $configs; do echo "$c"; done | sed -n '1!G;h;$p')

programs=${XO_TRUST_PROGRAMS:-"mlp:1 mlp:32 mlp:256 mlp:2048 rnn:100 rnn:10000 ode:"}

# rate PROGRAM BATCH DEVICE CACHE: it/s of one run (0 when it failed), the word before "it/s".
rate() {
    out=$(XO_CACHE_DIR=$4 XO_DEVICE=$3 "$prog" "$1" ${2:+"$2"} --seconds "$secs" 2>/dev/null || true)
    echo "$out" | awk '{for (i = 2; i <= NF; i++) if ($i == "it/s") {print $(i - 1); exit}}' | sed -n 1p | grep . ||
        echo 0
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

# A busy-written cache, measured once by xo info and spoiled; each run gets a copy.
XO_CACHE_DIR="$work/busy-template" "$xo" info >/dev/null 2>&1 || true
spoil "$work/busy-template"
fresh_busy() { rm -rf "$1"; cp -r "$work/busy-template" "$1"; }

# The placements in turn for repetition $1.
order() { if [ $(($1 % 2)) -eq 0 ]; then echo $configs; else echo $reversed; fi; }

median() { sort -g "$1" | awk '{v[NR] = $1} END {if (NR) print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

header="| program | situation |"
rule="|---|---|"
for c in $configs; do header="$header $c |"; rule="$rule---:|"; done
echo "Each cell: the median it/s of $reps runs of $secs s, placements taking turns."
echo
echo "$header auto / best forced | worst run |"
echo "$rule---:|---:|"

# row LABEL SITUATION KEY: the row of situation KEY from $work/KEY.<config>, one rate per
# line in repetition order.
row() {
    line="| $1 | $2 |"
    best=0
    for c in $configs; do
        m=$(median "$work/$3.$c")
        line="$line $m |"
        [ "$c" = auto ] && autor=$m && continue
        best=$(awk -v a="$best" -v b="$m" 'BEGIN {print (b > a) ? b : a}')
    done
    ratio=$(awk -v a="$autor" -v b="$best" 'BEGIN {if (b > 0) printf "%.2f", a / b; else print "-"}')
    # The worst repetition: auto's run against the best forced run of the same turn.
    worst=$(for c in $configs; do [ "$c" = auto ] || echo "$work/$3.$c"; done | xargs paste -d' ' |
            paste -d' ' "$work/$3.auto" - |
            awk 'BEGIN {w = -1} {b = 0; for (i = 2; i <= NF; i++) if ($i > b) b = $i;
                 if (b > 0 && (w < 0 || $1 / b < w)) w = $1 / b} END {if (w < 0) print "-"; else printf "%.2f", w}')
    echo "$line $ratio | $worst |"
}

for p in $programs; do
    name=${p%%:*}
    batch=${p#*:}
    label="$name${batch:+ b$batch}"
    rm -f "$work"/first.* "$work"/busy1.* "$work"/busy3.* "$work"/steady.*
    r=0
    while [ "$r" -lt "$reps" ]; do
        for c in $(order "$r"); do
            # first run after an empty cache
            rm -rf "$work/first"
            rate "$name" "$batch" "$c" "$work/first" >>"$work/first.$c"
            # a busy-written cache: forced placements run once on their own copy; auto
            # runs three times on its copy (the 1st and the 3rd are kept)
            fresh_busy "$work/busy"
            a=$(rate "$name" "$batch" "$c" "$work/busy")
            if [ "$c" = auto ]; then
                rate "$name" "$batch" auto "$work/busy" >/dev/null
                echo "$a" >>"$work/busy1.auto"
                rate "$name" "$batch" auto "$work/busy" >>"$work/busy3.auto"
                rm -rf "$work/healed"
                cp -r "$work/busy" "$work/healed"
            else
                echo "$a" >>"$work/busy1.$c"
                echo "$a" >>"$work/busy3.$c"
            fi
        done
        r=$((r + 1))
    done
    # steady state: the cache auto's healing runs left (the last repetition's)
    r=0
    while [ "$r" -lt "$reps" ]; do
        for c in $(order "$r"); do
            rate "$name" "$batch" "$c" "$work/healed" >>"$work/steady.$c"
        done
        r=$((r + 1))
    done
    rm -rf "$work/healed"
    row "$label" "first run, empty cache" first
    row "$label" "busy-written cache, run 1" busy1
    row "$label" "busy-written cache, run 3" busy3
    row "$label" "steady state" steady
done

#!/bin/sh
# Auto against every forced device, run by run (docs/placement.md, "Auto against forced
# devices, run by run"). Each run is one process of a user-style program (bench/programs.c)
# in `--paired` mode: auto and every forced device each run their own copy of the program
# in their own context, taking turns in 100 ms slices, so that a slow spell of the machine
# falls on all of them alike and each run yields its own auto / best-forced ratio: the
# median over its rounds of the ratio within a round (as xo bench's workloads), so that a
# hiccup of the machine in one slice does not decide the run. Auto's context is created
# first and meets the profile cache as the situation leaves it:
#   first  an empty cache (auto measures at creation);
#   busy   a cache written while the machine was busy (planted: mem_gbps = 2.0, spread
#          0.56, the sgemm curve collapsing to 0.131 GFLOP/s from n = 128), a fresh copy
#          per repetition, run three times: the 1st run, and the 3rd (after two healing
#          runs);
#   steady the cache as those runs left it.
# Prints a markdown table: per situation, the median it/s of auto and of the best forced
# device, auto / best forced of each run (the median and the worst over REPS runs), the
# smallest share of auto's ops that ran on that best device, and how long auto's context
# creation took (what measuring into an empty cache costs).
# Run it on a quiet machine (nothing else running).
#
#   bench/trust_table.sh [BUILD_DIR] [SECONDS_PER_PLACEMENT] [REPS]   (defaults: build, 2, 3)
# XO_TRUST_PROGRAMS="mlp:32 ode:" picks programs (PROGRAM:BATCH, the default is all).
set -eu
build=${1:-build}
secs=${2:-2}
reps=${3:-3}
prog="$build/bench/xo_programs"
xo="$build/bench/xo"
[ -x "$prog" ] && [ -x "$xo" ] || { echo "build first: $prog, $xo" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/xo-trust.XXXXXX")
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM HUP # through the EXIT trap
unset XO_DEVICE XO_CALIBRATE XO_LOG

programs=${XO_TRUST_PROGRAMS:-"mlp:1 mlp:32 mlp:256 mlp:2048 rnn:100 rnn:10000 ode:"}

# paired PROGRAM BATCH CACHE: one paired run; prints "RATIO AUTO_RATE BEST_RATE BEST_DEVICE
# AUTO_CREATE_MS SHARE" (SHARE: % of auto's ops on that device), or "0 0 0 - 0 0" when it
# failed.
paired() {
    XO_CACHE_DIR=$3 "$prog" "$1" ${2:+"$2"} --paired --seconds "$secs" 2>/dev/null | awk '
        / it\/s / {for (i = 1; i < NF; i++) if ($(i + 1) + 0 > 0 && $(i + 2) == "it/s") rate[$i] = $(i + 1)
                    if ($0 ~ / auto [0-9.]+ it\/s/) for (i = 1; i < NF; i++) if ($i == "create") ms = $(i + 1)}
        / paired: / {for (i = 1; i <= NF; i++) {if ($i == "forced") dev = $(i + 1)
                                                if ($i == "median") {r = $(i + 1); sub(/,$/, "", r)}
                                                if ($i == "ran") share = $(i + 1)}
                     gsub(/[()]/, "", dev); sub(/%/, "", share)}
        END {if (r == "") print "0 0 0 - 0 0"; else print r, rate["auto"], rate[dev], dev, ms, share}' ||
        echo "0 0 0 - 0 0"
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

# A busy-written cache, measured once by xo info and spoiled; each repetition gets a copy.
XO_CACHE_DIR="$work/busy-template" "$xo" info >/dev/null 2>&1 || true
spoil "$work/busy-template"

median() { sort -g | awk '{v[NR] = $1} END {if (NR) print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

echo "Each row: $reps runs; each run auto and every forced device taking turns, $secs s each."
echo
echo "| program | situation | auto it/s | best forced it/s | best forced | auto / best forced, median run | worst run | auto's ops there, fewest | auto's context creation, ms |"
echo "|---|---|---:|---:|---|---:|---:|---:|---:|"

# row LABEL SITUATION KEY: from $work/KEY, one paired result per line.
row() {
    f="$work/$3"
    a=$(cut -d' ' -f2 "$f" | median)
    b=$(cut -d' ' -f3 "$f" | median)
    dev=$(cut -d' ' -f4 "$f" | sort | uniq -c | sort -rn | awk 'NR == 1 {print $2}')
    m=$(cut -d' ' -f1 "$f" | median)
    w=$(cut -d' ' -f1 "$f" | sort -g | head -n1)
    c=$(cut -d' ' -f5 "$f" | median)
    o=$(cut -d' ' -f6 "$f" | sort -g | head -n1)
    printf '| %s | %s | %.1f | %.1f | %s | %.3f | %.3f | %s%% | %.0f |\n' "$1" "$2" "$a" "$b" "$dev" "$m" "$w" "$o" "$c"
}

for p in $programs; do
    name=${p%%:*}
    batch=${p#*:}
    label="$name${batch:+ b$batch}"
    rm -f "$work"/first "$work"/busy1 "$work"/busy3 "$work"/steady
    r=0
    while [ "$r" -lt "$reps" ]; do
        rm -rf "$work/cache-empty" "$work/cache-busy"
        paired "$name" "$batch" "$work/cache-empty" >>"$work/first"
        cp -r "$work/busy-template" "$work/cache-busy"
        paired "$name" "$batch" "$work/cache-busy" >>"$work/busy1"
        paired "$name" "$batch" "$work/cache-busy" >/dev/null
        paired "$name" "$batch" "$work/cache-busy" >>"$work/busy3"
        paired "$name" "$batch" "$work/cache-busy" >>"$work/steady"
        r=$((r + 1))
    done
    row "$label" "first run, empty cache" first
    row "$label" "busy-written cache, run 1" busy1
    row "$label" "busy-written cache, run 3" busy3
    row "$label" "steady state (run 4 on it)" steady
done

#!/usr/bin/env bash
# The simulated table of docs/placement.md: each bench program against a machine file
# (XO_SIMULATE), paired (auto and every forced device) and as a plan under auto, with
# the rates on the recorded machine's clock. A simulation is deterministic, so one run
# per program is the figure (no repetitions, no quiet machine needed).
#
# Usage: bench/sim_table.sh BUILD_DIR MACHINE_FILE [SECONDS]   (simulated seconds, default 0.5)
#   XO_SIM_PROGRAMS="rnn:100 ode" picks programs (default: all of xo_programs').
set -euo pipefail
build=$1 machine=$2 seconds=${3:-0.5}
progs=${XO_SIM_PROGRAMS:-"mlp:1 mlp:32 mlp:256 mlp:2048 rnn:100 rnn:10000 ode"}
export XO_SIMULATE=$machine
cache=$(mktemp -d)
trap 'rm -rf "$cache"' EXIT
export XO_CACHE_DIR=$cache
echo "| program | forced cpu it/s | forced cuda it/s | auto it/s | plan (auto) it/s | auto / best forced | auto's ops per device |"
echo "|---|---:|---:|---:|---:|---:|---|"
for p in $progs; do
  args=(${p/:/ })
  out=$("$build/bench/xo_programs" "${args[@]}" --paired --seconds "$seconds")
  plan=$("$build/bench/xo_programs" "${args[@]}" --plan --seconds "$seconds" | awk '{print $(NF-7)}')
  rate() { awk -v k="$1" '$0 ~ " "k" [0-9.]+ it/s" { for (i = 1; i < NF; i++) if ($(i+1) == "it/s") print $i }' <<< "$out"; }
  ratio=$(sed -n 's/.*paired: auto \/ best forced ([a-z]*) \([0-9.]*\).*/\1/p' <<< "$out")
  share=$(sed -n "s/.*auto's ops by device: //p" <<< "$out")
  echo "| ${p/:/ b} | $(rate cpu) | $(rate cuda) | $(rate auto) | $plan | $ratio | $share |"
done

#!/usr/bin/env bash
# The validation table of docs/machines/ (README.md, "Validation"): each bench program
# (xo_programs) run for real on this machine and simulated from a machine file recorded
# here (XO_SIMULATE), forced on the CPU, forced on the accelerator (cuda, else opencl),
# under auto and as a plan under auto; each cell is simulated / real of the rate (it/s),
# the goal within 15%. The real runs use the profile cache in XO_CACHE_DIR, which should
# hold the profiles the recording calibrated, so that placement starts from the same ones.
#
# Usage: bench/validate_table.sh BUILD_DIR MACHINE_FILE [SECONDS]   (default 0.5 per placement)
#   XO_VALIDATE_PROGRAMS="rnn:100 ode" picks programs (default: all of xo_programs').
set -euo pipefail
build=$1 machine=$2 seconds=${3:-0.5}
progs=${XO_VALIDATE_PROGRAMS:-"rnn:100 rnn:10000 mlp:1 mlp:32 mlp:256 mlp:2048 ode"}
[[ -r $machine ]] || { echo "validate_table.sh: cannot read $machine" >&2; exit 1; }
unset XO_SIMULATE XO_DEVICE

# "PLACEMENT RATE" lines of one program, real or simulated (SIM = the machine file or "").
rates() {
  local sim=$1; shift
  local paired plan
  paired=$(env ${sim:+XO_SIMULATE=$sim} "$build/bench/xo_programs" "$@" --paired --seconds "$seconds")
  plan=$(env ${sim:+XO_SIMULATE=$sim} "$build/bench/xo_programs" "$@" --plan --seconds "$seconds")
  awk '{ for (i = 2; i < NF; i++) if ($(i+1) == "it/s") print $(i-1), $i }' <<< "$paired"
  awk '{ for (i = 2; i < NF; i++) if ($(i+1) == "it/s") print "plan", $i }' <<< "$plan"
}
accel=$(awk '$1 == "device" && ($2 == "cuda" || $2 == "opencl") { print $2; exit }' "$machine")
cells=0 within=0
echo "| program | forced cpu | forced ${accel:-none} | auto | plan (auto) |"
echo "|---|---:|---:|---:|---:|"
for p in $progs; do
  args=(${p/:/ })
  real=$(rates "" "${args[@]}")
  sim=$(rates "$machine" "${args[@]}")
  row="| ${p/:/ b}"
  for k in cpu ${accel:-none} auto plan; do
    r=$(awk -v k="$k" '$1 == k { print $2; exit }' <<< "$real")
    s=$(awk -v k="$k" '$1 == k { print $2; exit }' <<< "$sim")
    if [[ -z $r || -z $s ]]; then row+=" | -"; continue; fi
    cell=$(awk -v r="$r" -v s="$s" 'BEGIN { q = r > 0 ? s / r : 0; m = q >= 0.85 && q <= 1.15 ? "" : "**";
                                            printf "%s%.2f%s (%.4g / %.4g)", m, q, m, s, r }')
    [[ $cell == \*\** ]] || within=$((within + 1))
    cells=$((cells + 1))
    row+=" | $cell"
  done
  echo "$row |"
done
echo
echo "Each cell: simulated / real it/s (simulated it/s / real it/s); bold: outside the goal of ±15%. $within of $cells cells within ±15%."

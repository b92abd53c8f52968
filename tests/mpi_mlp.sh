#!/usr/bin/env bash
# examples/mpi_mlp under MPI (docs/scale-out.md): 20 steps on 2 ranks, eagerly and with
# the step as two plans around the allreduce (--plan), give the loss trajectory of 1 rank
# training on the same global batch (to 1e-5 relative: only the
# order of the gradient sums differs), the loss falls, and both ranks end with the same
# weights bit for bit. CPU device, one thread per rank, so each rank's arithmetic is
# deterministic.
#
# Usage: tests/mpi_mlp.sh MPIEXEC EXAMPLE WORK_DIR
# Exit 77 (skipped) where there is no mpirun or the example was not built (no MPI).
set -uo pipefail
mpiexec=${1:-} exe=${2:-} work=${3:-.}
[[ -n $mpiexec ]] && command -v "$mpiexec" > /dev/null || { echo "mpi: skipped, no mpirun"; exit 77; }
[[ -x $exe ]] || { echo "mpi: skipped, the example was not built (no MPI for C)"; exit 77; }
fail() { echo "mpi: FAIL: $*" >&2; exit 1; }

launch=("$mpiexec")
version=$("$mpiexec" --version 2>&1 | head -n 1)
if [[ $version == *"Open MPI"* || $version == *OpenRTE* ]]; then  # mpiexec says OpenRTE in 4.x
  # more ranks than cores; root in containers; shared memory and loopback only, no
  # single-copy (CMA needs ptrace rights a container may lack); no UCX probing.
  launch+=(--oversubscribe)
  [[ $(id -u) -eq 0 ]] && launch+=(--allow-run-as-root)
  major=$(sed -E 's/.* ([0-9]+)\..*/\1/' <<< "$version")
  if ((major >= 5)); then shm=sm; else shm=vader; fi
  export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,$shm OMPI_MCA_btl_${shm}_single_copy_mechanism=none
fi
export XO_DEVICE=cpu XO_THREADS=1  # XO_THREADS sets OpenBLAS's threads too
args=(--steps 20 --batch 64 --seed 7 --print)
mkdir -p "$work"
"${launch[@]}" -np 1 "$exe" "${args[@]}" > "$work/one.log" 2>&1 || { cat "$work/one.log"; fail "1 rank"; }
"${launch[@]}" -np 2 "$exe" "${args[@]}" > "$work/two.log" 2>&1 || { cat "$work/two.log"; fail "2 ranks"; }
"${launch[@]}" -np 2 "$exe" "${args[@]}" --plan > "$work/two_plans.log" 2>&1 ||
  { cat "$work/two_plans.log"; fail "2 ranks, the step as two plans"; }
cat "$work/one.log" "$work/two.log" "$work/two_plans.log"

# The loss of every step, 1 rank against 2 ($1: the 2-rank log), and the weights of the 2
# ranks, bit for bit.
against_one_rank() {
  awk -v tol=1e-5 '
    FNR == 1 { file++ }
    $1 == "step" && $3 == "loss" { loss[file, $2] = $4; n[file]++ }
    END {
      if (n[1] != 20 || n[2] != 20) { printf "steps printed: %d (1 rank), %d (2 ranks), want 20\n", n[1], n[2]; exit 1 }
      worst = 0
      for (t = 1; t <= 20; t++) {
        a = loss[1, t]; b = loss[2, t]; d = a - b; if (d < 0) d = -d
        r = d / (a < 0 ? -a : a); if (r > worst) worst = r
        if (r > tol) { printf "step %d: loss %s (1 rank) vs %s (2 ranks), %.3g relative\n", t, a, b, r; bad = 1 }
      }
      if (!(loss[1, 20] < 0.9 * loss[1, 1])) { printf "the loss did not fall: %s -> %s\n", loss[1, 1], loss[1, 20]; bad = 1 }
      printf "largest relative difference of the losses: %.3g\n", worst
      exit bad
    }' "$work/one.log" "$1" || fail "loss trajectories differ ($1)"
  local hashes
  hashes=$(awk '$1 == "rank" && $3 == "weights" { print $4 }' "$1")
  [[ $(wc -l <<< "$hashes") -eq 2 ]] || fail "$1: want 2 weight hashes, got: $hashes"
  [[ $(sort -u <<< "$hashes" | wc -l) -eq 1 ]] || fail "$1: ranks ended with different weights: $hashes"
}
against_one_rank "$work/two.log"
against_one_rank "$work/two_plans.log"
grep -q "as two plans" "$work/two_plans.log" || fail "--plan did not run the step as two plans"
echo "mpi: 2 ranks follow 1 rank's losses, eagerly and as two plans, weights identical on both ranks"

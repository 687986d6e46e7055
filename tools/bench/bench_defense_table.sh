#!/usr/bin/env bash
# The defense table of docs/results/defenses.md: every defense advbo ships, in
# front of the shipped model and of the adversarially trained one, evaluated with
# `advbo evaluate` (worst case per image; the defense's adaptive attack joins the ensemble
# last and the plain ensemble's number is kept beside it, from the same run):
#
#   bash tools/bench/bench_defense_table.sh DATASET [N] [BUDGET] [OUT_ROOT]
#
# DATASET mnist (models mnist_cw.pt and mnist_fgsm_overfit.pt, eps 0.3) or cifar10 (cifar10_cw.pt and
# cifar10_at.pt, eps 8/255). N = the first N test images (default 50), BUDGET = queries per
# attack (default 1000), ensemble = Square (ENSEMBLE overrides, e.g. square,parsimonious).
# Writes OUT_ROOT/<model>/<defense>/ (default tools/results/defense_table/<dataset>); a run
# that is interrupted resumes. Then the Markdown rows:
#   /usr/bin/python3 tools/bench/evaluate_table.py tools/results/defense_table/mnist/*/*
# ADVBO=path overrides build/advbo; THREADS (default 1) LibTorch threads; JOBS (default 2)
# evaluations in parallel; DEFENSES overrides the list (space separated specs); MODELS the
# models (space separated names under models/, e.g. "cifar10_cw").
set -euo pipefail
cd "$(dirname "$0")/../.."
dataset="${1:?dataset: mnist | cifar10}"
n="${2:-50}"
budget="${3:-1000}"
root="${4:-tools/results/defense_table/$dataset}"
ADVBO="${ADVBO:-build/advbo}"
THREADS="${THREADS:-1}"
JOBS="${JOBS:-2}"
ENSEMBLE="${ENSEMBLE:-square}"
case "$dataset" in
  mnist) models=(mnist_cw mnist_fgsm_overfit); eps=0.3 ;;
  cifar10) models=(cifar10_cw cifar10_at); eps=8/255 ;;
  *) echo "dataset must be mnist or cifar10, got '$dataset'" >&2; exit 2 ;;
esac
[ -n "${MODELS:-}" ] && read -r -a models <<< "$MODELS"
# Input transformations (deterministic, then randomised), output post-processing, the
# stateful detector, and the game defenders (level-1 R2-B2, level-0 random).
DEFENSES="${DEFENSES:-none jpeg:quality=75 bits:depth=4 median:size=3 blur:sigma=1 \
noise:sigma=0.02 resize:ratio=0.1 round:decimals=2 topk:k=1 aaa blacklight r2b2:jpeg+noise \
random:jpeg+noise r2b2:latent}"
jobs=()
for m in "${models[@]}"; do
  [ -f "models/$m.pt" ] || { echo "models/$m.pt missing: skipped" >&2; continue; }
  for d in $DEFENSES; do
    jobs+=("$m|$d")
  done
done
run() {
  local m="${1%%|*}" d="${1#*|}"
  local out="$root/$m/${d//[:=+,]/_}"
  "$ADVBO" evaluate --dataset "$dataset" --model "models/$m.pt" --eps "$eps" -n "$n" \
    --budget "$budget" --ensemble "$ENSEMBLE" --defense "$d" --seed 0 --threads "$THREADS" -q \
    -o "$out" > /dev/null
  echo "done: $m $d -> $out"
}
export -f run
export ADVBO THREADS dataset eps n budget ENSEMBLE root
printf '%s\n' "${jobs[@]}" | xargs -P "$JOBS" -I{} bash -c 'run "$@"' _ {}

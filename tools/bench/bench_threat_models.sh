#!/usr/bin/env bash
# The threat-model tables of docs/results/threat_models.md: the score-based L_inf,
# hard-label L_inf, score-based L2 and hard-label L2 attacks on the same test images, seeds
# and machine, in BlackboxBench's CIFAR-10 setting (untargeted; L_inf 0.05, L2 1.0; MNIST:
# L_inf 0.3, L2 2.0):
#
#   bash tools/bench/bench_threat_models.sh DATASET [N] [BUDGET] [OUT_ROOT]
#
# DATASET mnist | cifar10 (the shipped model; MODEL=models/x.pt another). N test images from
# index OFFSET (default 100: Bandits' exploration default was measured on test images 0-10,
# so they are left out; misclassified ones are skipped), default 50; BUDGET queries per
# instance (default 1000); OUT_ROOT default tools/results/threat_models/DATASET. Each group is
# one `advbo bench` run in OUT_ROOT/<group>/ (resumed when interrupted; SETS selects, e.g.
# "label_linf"). THREADS (default 1) LibTorch threads; ADVBO=path overrides build/advbo.
# Tables: /usr/bin/python3 tools/bench/threat_model_table.py OUT_ROOT
set -euo pipefail
cd "$(dirname "$0")/../.."
dataset="${1:?dataset: mnist | cifar10}"
n="${2:-50}"
budget="${3:-1000}"
root="${4:-tools/results/threat_models/$dataset}"
ADVBO="${ADVBO:-build/advbo}"
THREADS="${THREADS:-1}"
OFFSET="${OFFSET:-100}"
case "$dataset" in
  mnist) linf=0.3; l2=2.0 ;;
  cifar10) linf=0.05; l2=1.0 ;;
  *) echo "unknown dataset $dataset (mnist | cifar10)" >&2; exit 2 ;;
esac
mkdir -p "$root"
indices=$(seq -s, "$OFFSET" $((OFFSET + n - 1)))
model=()
[[ -n "${MODEL:-}" ]] && model=(--model "$MODEL")
declare -A attacks=(
  [score_linf]="square,signhunter,bandits,parsimonious,nes"
  [label_linf]="rays,hsja,sign-opt,geoda,bo-hl"
  [score_l2]="square-l2,simba-dct"
  [label_l2]="hsja,sign-opt,geoda")
declare -A modes=(
  [score_linf]="--norm linf --feedback scores --eps $linf"
  [label_linf]="--norm linf --feedback label --eps $linf"
  [score_l2]="--norm l2 --feedback scores --eps $l2"
  [label_l2]="--norm l2 --feedback label --eps $l2")
for g in ${SETS:-score_linf label_linf score_l2 label_l2}; do
  echo "bench_threat_models: $dataset $g" >&2
  # shellcheck disable=SC2086
  "$ADVBO" bench --dataset "$dataset" "${model[@]}" --untargeted --indices "$indices" \
    --budget "$budget" --seed 0 --threads "$THREADS" --quiet --attacks "${attacks[$g]}" \
    ${modes[$g]} --out "$root/$g" > "$root.$g.log" 2>&1 || { cat "$root.$g.log" >&2; exit 1; }
done
/usr/bin/python3 tools/bench/threat_model_table.py "$root" --out "$root/table.md" --curves "$root/curves.csv"

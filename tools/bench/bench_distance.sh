#!/usr/bin/env bash
# Hard-label attacks measured the way the field reports them: `advbo bench --goal
# min-distance`, untargeted, every attack spending its whole budget shrinking its closest
# adversarial query, on the same images, seeds and machine. Records carry the distance at 100 /
# 250 / 500 / 1,000 / 2,500 / 5,000 / 10,000 queries (within the budget) and the bad queries a
# Blacklight detector beside the model would flag; table.txt, summary.json and curves.png (median
# distance against queries) summarise them.
#
#   bash tools/bench/bench_distance.sh DATASET NORM [N] [BUDGET] [OUT_ROOT]
#
# DATASET mnist | cifar10 (the shipped model and data; the first N correctly classified test
# images, default 100); NORM l2 (hsja, sign-opt, geoda, ta, gta, cgba, cgba-h, bo-hl) | linf
# (rays, hsja, sign-opt, geoda, bo-hl), ATTACKS overrides; BUDGET default 1000; eps (only what
# "success" means here): the threat-model defaults (L2 2.0 MNIST / 1.0 CIFAR-10, L_inf 0.3 /
# 0.05). One `advbo bench` run
# in OUT_ROOT/DATASET_NORM_BUDGET/ (default OUT_ROOT tools/results/distance; resumed when
# interrupted). ADVBO=path overrides build/advbo. TARGETED=1: targeted on every other class
# (`--targeted`; N images x 9 targets) with the attacks that have a targeted mode (L2: hsja,
# sign-opt, ta, gta, cgba, cgba-h; L_inf: hsja, sign-opt), each starting from an image of the
# target class; output in DATASET_NORM_BUDGET_targeted/.
set -euo pipefail
cd "$(dirname "$0")/../.."
dataset="${1:?dataset: mnist | cifar10}"
norm="${2:?norm: l2 | linf}"
n="${3:-100}"
budget="${4:-1000}"
root="${5:-tools/results/distance}"
goal=(--untargeted)
suffix=""
if [[ "${TARGETED:-0}" == 1 ]]; then
  goal=(--targeted)
  suffix="_targeted"
  case "$norm" in
    l2) attacks="${ATTACKS:-hsja,sign-opt,ta,gta,cgba,cgba-h}" ;;
    linf) attacks="${ATTACKS:-hsja,sign-opt}" ;;
    *) echo "unknown norm $norm (l2 | linf)" >&2; exit 2 ;;
  esac
else
  case "$norm" in
    l2) attacks="${ATTACKS:-hsja,sign-opt,geoda,ta,gta,cgba,cgba-h,bo-hl}" ;;
    linf) attacks="${ATTACKS:-rays,hsja,sign-opt,geoda,bo-hl}" ;;
    *) echo "unknown norm $norm (l2 | linf)" >&2; exit 2 ;;
  esac
fi
out="$root/${dataset}_${norm}_${budget}${suffix}"
mkdir -p "$root"
"${ADVBO:-build/advbo}" bench --dataset "$dataset" --attacks "$attacks" --feedback label \
  --norm "$norm" --goal min-distance "${goal[@]}" -n "$n" --budget "$budget" --seed 0 -q \
  --out-dir "$out" > "$out.log" 2>&1
cat "$out/table.txt"

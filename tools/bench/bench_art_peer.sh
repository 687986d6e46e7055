#!/usr/bin/env bash
# Side by side with IBM ART on the same shipped CIFAR-10 model, test images, float
# queries and budget:
#   label: advbo's hsja (L_inf, L2) and sign-opt (L2) and ART's HopSkipJump and SignOPTAttack.
#          Both walk the whole budget (advbo with eps = 1e-4, which no query reaches; ART has no
#          stopping radius), so the median distance of the closest adversarial query can be
#          compared at every query count, and the wall time per image.
#   score: advbo's simba-dct and square-l2 and ART's SimBA (DCT) and SquareAttack (L2), score
#          feedback, success = the first adversarial query inside the L2 ball of radius 1.0.
# PEER_SETS="label score" (default both) picks the sets.
#
#   bash tools/bench/bench_art_peer.sh ART_DIR [N] [BUDGET] [OUT_ROOT]
#
# ART_DIR: a checkout of ART's public code (tools/bench/art_peer.py). N test images from index
# 100 (default 30; misclassified ones skipped by both), BUDGET default 1000, OUT_ROOT default
# tools/results/art_peer. Both sides run with one thread. ADVBO=path overrides build/advbo.
# Tables: OUT_ROOT/{advbo,art}/table.md (threat_model_table.py).
set -euo pipefail
cd "$(dirname "$0")/../.."
art="${1:?usage: $0 ART_DIR [N] [BUDGET] [OUT_ROOT]}"
n="${2:-30}"
budget="${3:-1000}"
root="${4:-tools/results/art_peer}"
ADVBO="${ADVBO:-build/advbo}"
indices=$(seq -s, 100 $((100 + n - 1)))
mkdir -p "$root/advbo"
sets="${PEER_SETS:-label score}"
if [[ " $sets " == *" label "* ]]; then
  common=(bench --dataset cifar10 --untargeted --indices "$indices" --budget "$budget" --seed 0
          --threads 1 --quiet --pixels float --feedback label --eps 0.0001)
  "$ADVBO" "${common[@]}" --norm linf --attacks hsja --out "$root/advbo/label_linf"
  "$ADVBO" "${common[@]}" --norm l2 --attacks hsja,sign-opt --out "$root/advbo/label_l2"
  /usr/bin/python3 tools/bench/art_peer.py --art "$art" --out "$root/art" --n "$n" --offset 100 \
    --budget "$budget" --attacks hsja_linf,hsja_l2,signopt_l2 --threads 1
fi
if [[ " $sets " == *" score "* ]]; then
  "$ADVBO" bench --dataset cifar10 --untargeted --indices "$indices" --budget "$budget" --seed 0 \
    --threads 1 --quiet --pixels float --feedback scores --norm l2 --eps 1.0 \
    --attacks simba-dct,square-l2 --out "$root/advbo/score_l2"
  /usr/bin/python3 tools/bench/art_peer.py --art "$art" --out "$root/art" --n "$n" --offset 100 \
    --budget "$budget" --attacks simba_l2,square_l2 --eps 1.0 --threads 1
fi
for side in advbo art; do
  /usr/bin/python3 tools/bench/threat_model_table.py "$root/$side" --out "$root/$side/table.md" \
    --curves "$root/$side/curves.csv" > /dev/null
done
cat "$root/advbo/table.md" "$root/art/table.md"

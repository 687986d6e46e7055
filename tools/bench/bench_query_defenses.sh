#!/usr/bin/env bash
# The defenses against query attacks beside their adaptive attacks, on the
# shipped CIFAR-10 model at the field's setting (L_inf eps = 8/255, untargeted, 8-bit
# queries), with `advbo evaluate` (worst case per image over the ensemble; the defense's
# adaptive attack runs last, and the plain ensemble's number is kept beside) and
# `advbo bench` for per-attack numbers:
#
#   bash tools/bench/bench_query_defenses.sh STEP [N] [OUT_ROOT]
#
# STEP: aaa        no defense vs aaa (Square, 2,500 queries: Chen et al. 2022's setting;
#                  adaptive: aaa-adaptive:interval=4,reverse=1/square)
#       rnd        noise:sigma=0.02 (RND, Qin et al. 2021) vs eot:k=10/square, 2,500 queries
#       blacklight plain Square under blacklight:action=flag (when is it first detected?)
#                  and Square vs oars/square (uniform noise) and oars:quantization=50/square
#                  (targeted noise, the declared adaptive attack) under blacklight (reject),
#                  1,000 queries
#       all        the three
# N = the first N test images (default 100). OUT_ROOT default tools/results/query_defenses.
# ADVBO=path overrides build/advbo; THREADS (default 1) LibTorch threads per run.
set -euo pipefail
cd "$(dirname "$0")/../.."
step="${1:?step: aaa | rnd | blacklight | all}"
n="${2:-100}"
root="${3:-tools/results/query_defenses}"
ADVBO="${ADVBO:-build/advbo}"
THREADS="${THREADS:-1}"
common=(--dataset cifar10 --eps 8/255 --seed 0 --threads "$THREADS" -q)

aaa() {
  "$ADVBO" evaluate "${common[@]}" -n "$n" --budget 2500 --ensemble square -o "$root/aaa/none"
  "$ADVBO" evaluate "${common[@]}" -n "$n" --budget 2500 --ensemble square --defense aaa \
    -o "$root/aaa/aaa"
}
rnd() {
  "$ADVBO" evaluate "${common[@]}" -n "$n" --budget 2500 --ensemble square \
    --defense noise:sigma=0.02 -o "$root/rnd/noise"
}
blacklight() {
  "$ADVBO" bench "${common[@]}" --untargeted -n "$n" --budget 1000 --attacks square \
    --defense blacklight:action=flag -o "$root/blacklight/flag"
  "$ADVBO" bench "${common[@]}" --untargeted -n "$n" --budget 1000 --attacks square,oars/square \
    --defense blacklight -o "$root/blacklight/reject"
  "$ADVBO" bench "${common[@]}" --untargeted -n "$n" --budget 1000 \
    --attacks oars:quantization=50/square --defense blacklight -o "$root/blacklight/reject_targeted"
}
case "$step" in
  aaa) aaa ;;
  rnd) rnd ;;
  blacklight) blacklight ;;
  all) aaa; rnd; blacklight ;;
  *) echo "unknown step $step" >&2; exit 1 ;;
esac

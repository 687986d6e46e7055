#!/usr/bin/env bash
# R2-B2 in the adversarial-ML game (Dai 2021 thesis Sec. 8.4.2, Table 8.1, App. E.6.2) with
# `advbo game`: 150 rounds, 5 random initial rounds, refits every 10 rounds.
#
#   bash tools/bench/bench_r2b2_adv.sh SETTING [JOBS] [OUT_ROOT]
#
# SETTING
#   mnist-random    Table 8.1 rows 0v0 1v0 1Lv0 0v1 0v1L 2v1 1v2, random-search level 0
#   mnist-gpmw      the same with GP-MW on a 100 x 100 grid of [-2, 2]^2 as level 0
#   cifar10-random  the same on CIFAR-10 (needs models/cifar10_vae.pt)
#   mnist-outside   GP-UCB and TS attackers that ignore the defender (App. E.6.2.2b) against
#                   no defender, an R2-B2-Lite level-1 defender and (for reference: what the
#                   defender stage alone does) a random-search level-0 defender
#   cifar10-outside the same on CIFAR-10
# Each setting is played on
#   one/    ONE image with 10 initialisations. The image is chosen as the paper does, "so that
#           the difficulties of attack and defense are comparable" (App. E.6.2.1b), by a fixed
#           rule: of the first 40 correctly classified test images, the one whose 0v0 game
#           (seed 0, one initialisation) has a success count closest to half the rounds;
#   multi/  the first 10 correctly classified test images, 1 initialisation each.
# Every (scope, matchup) is its own `advbo game` process writing OUT_ROOT/SETTING/scope/
# MATCHUP/; finished ones (summary.json present) are skipped, so an interrupted run resumes.
# JOBS processes run side by side (default nproc). ADVBO=path overrides build/advbo.
# Tables: /usr/bin/python3 tools/bench/r2b2_table.py OUT_ROOT/SETTING
set -euo pipefail
cd "$(dirname "$0")/../.."
setting="${1:?usage: $0 SETTING [JOBS] [OUT_ROOT]}"
jobs="${2:-$(nproc)}"
root="${3:-results/r2b2_adv}"
ADVBO="${ADVBO:-build/advbo}"
out="$root/$setting"
mkdir -p "$out"

case "$setting" in
  mnist-*) game=mnist ;;
  cifar10-*) game=cifar10 ;;
  *) echo "unknown setting $setting" >&2; exit 2 ;;
esac
level0=random
[[ "$setting" == mnist-gpmw ]] && level0=gpmw
case "$setting" in
  *-outside) pairs="gpucb:none gpucb:r2b2:1-lite ts:none ts:r2b2:1-lite gpucb:random ts:random" ;;
  *) pairs="0v0 1v0 1Lv0 0v1 0v1L 2v1 1v2" ;;
esac

# ---- The one image (screening game, cached in $root/screen-$game/).
screen="$root/screen-$game"
if [[ ! -f "$screen/summary.json" ]]; then
  "$ADVBO" game --game "$game" --matchups 0v0 --games 40 --rounds 150 --seed 0 --quiet \
    --out-dir "$screen" >/dev/null
fi
image=$(/usr/bin/python3 -c "
import json, sys
s = json.load(open('$screen/summary.json'))
succ = s['results'][0]['per_run_successes']
half = s['rounds'] / 2
best = min(range(len(succ)), key=lambda i: (abs(succ[i] - half), i))
print(s['images'][best])")
echo "bench_r2b2_adv: $setting, one image = test image $image (see $screen/summary.json)"

commands=()
for p in $pairs; do
  if [[ "$p" == *:* ]]; then  # attacker:defender of the outside-attacker runs
    att="${p%%:*}"; def="${p#*:}"; name="${att}-vs-${def//:/}"
    agents=(--attacker "$att" --defender "$def")
  else
    name="$p"; agents=(--matchups "$p")
  fi
  for scope in one multi; do
    dir="$out/$scope/$name"
    [[ -f "$dir/summary.json" ]] && continue
    if [[ $scope == one ]]; then sel=(--indices "$image" --inits 10); else sel=(--games 10 --inits 1); fi
    commands+=("$ADVBO game --game $game --level0 $level0 ${agents[*]} ${sel[*]} --rounds 150 --seed 0 --quiet --out-dir $dir > $dir.log 2>&1")
  done
done
echo "bench_r2b2_adv: ${#commands[@]} games to play, $jobs at a time"
mkdir -p "$out/one" "$out/multi"
if ((${#commands[@]} > 0)); then
  printf '%s\n' "${commands[@]}" | xargs -d '\n' -P "$jobs" -I{} bash -c '{}' || true
fi
rc=0
for p in $pairs; do
  for scope in one multi; do
    n="$p"; [[ "$p" == *:* ]] && { a="${p%%:*}"; d="${p#*:}"; n="${a}-vs-${d//:/}"; }
    [[ -f "$out/$scope/$n/summary.json" ]] || { echo "missing: $out/$scope/$n (see its .log)" >&2; rc=1; }
  done
done
/usr/bin/python3 tools/bench/r2b2_table.py "$out" || true
exit $rc

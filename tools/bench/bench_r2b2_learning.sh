#!/usr/bin/env bash
# One learning change of the R2-B2-Lite defender, played on one setting of
# tools/bench/bench_r2b2_bound.sh with the same images and seeds, so that
# tools/bench/r2b2_learning_table.py can pair it against the thesis' Lite defender there.
#
#   bash tools/bench/bench_r2b2_learning.sh SETTING ATTACKER NAME [-- DEFENDER OPTIONS]
#
# SETTING: mnist_6590 | mnist_10 | cifar10_10 (as in bench_r2b2_bound.sh); ATTACKER: gpucb | ts;
# NAME: the variant's folder name; DEFENDER OPTIONS: added to `advbo game ... --defender
# r2b2:1-lite`, e.g. `-- --defender-observes --defender-vertices`. Writes
# OUT/learning/SETTING/ATTACKER-NAME/ (OUT = tools/results/r2b2_bound, or $OUT) and skips a
# variant whose summary.json exists.
set -euo pipefail
cd "$(dirname "$0")/../.."
[[ $# -ge 3 ]] || { echo "usage: $0 SETTING ATTACKER NAME [-- DEFENDER OPTIONS]" >&2; exit 2; }
setting=$1 att=$2 name=$3
shift 3
if [[ $# -gt 0 ]]; then
  [[ "$1" == "--" ]] || { echo "usage: $0 SETTING ATTACKER NAME [-- DEFENDER OPTIONS]" >&2; exit 2; }
  shift
fi
case "$setting" in
  mnist_6590) where=(--game mnist --indices 6590 --inits 10) ;;
  mnist_10) where=(--game mnist --games 10 --inits 1) ;;
  cifar10_10) where=(--game cifar10 --games 10 --inits 1) ;;
  *) echo "bench_r2b2_learning: unknown setting $setting" >&2; exit 2 ;;
esac
out="${OUT:-tools/results/r2b2_bound}/learning/$setting"
dir="$out/$att-$name"
[[ -f "$dir/summary.json" ]] && exit 0
mkdir -p "$out"
echo "bench_r2b2_learning: $setting $att $name: $*" >&2
"${ADVBO:-build/advbo}" game "${where[@]}" --attacker "$att" --defender r2b2:1-lite "$@" \
  --rounds 150 --seed 0 --quiet --out-dir "$dir" > "$dir.log" 2>&1

#!/usr/bin/env bash
# The R2-B2 defender beside what any defender could do: GP-UCB and TS attackers
# (unaware of the defender, Dai 2021 thesis App. E.6.2.2b / Fig. E.10) against no defender, a
# random-search defender, the level-1 R2-B2-Lite defender and the omniscient defender (it sees
# the attacker's action and plays the best of its candidates on the true model: the bound),
# on the same images and seeds. The defaults of `advbo game` otherwise (models/<game>_cw.pt,
# models/<game>_vae.pt, eps 0.2 MNIST / 0.05 CIFAR-10, 150 rounds, 5 random initial rounds).
#
#   bash tools/bench/bench_r2b2_bound.sh [OUT] [SETTINGS] [-- EXTRA GAME OPTIONS]
#
# SETTINGS (default "mnist_6590 mnist_10 cifar10_10"):
#   mnist_6590   MNIST test image 6590 (the thesis' image), 10 initialisations
#   mnist_10     the first 10 correctly classified MNIST test images, 1 initialisation each
#   cifar10_10   the first 10 correctly classified CIFAR-10 test images (shipped sample)
# Environment: DEFENDERS (default "none random r2b2:1-lite r2b2:1-lite-tuned omniscient";
# r2b2:1-lite-tuned = the Lite defender with its tuned learning:
# --defender-vertices --defender-candidates 1000 --defender-beta constant:0.1), ATTACKERS (default
# "gpucb ts"), OMNI_CIFAR10 (the omniscient defender's candidates on CIFAR-10, default 200 =
# exactly the R2-B2 defender's own set: 1000 would take ~65 min per attacker here; MNIST uses
# the default 1000). Each game is its own `advbo game` run in OUT/SETTING/ATTACKER-vs-DEFENDER/
# (skipped when its summary.json exists, so an interrupted bench resumes). SEED (default 0) is
# the games' seed: tools/bench/bench_r2b2_seeds.sh plays the bench again on fresh seeds.
# Table: /usr/bin/python3 tools/bench/r2b2_bound_table.py OUT
set -euo pipefail
cd "$(dirname "$0")/../.."
out="${1:-tools/results/r2b2_bound}"
settings="${2:-mnist_6590 mnist_10 cifar10_10}"
extra=()
if [[ $# -gt 2 ]]; then
  [[ "$3" == "--" ]] || { echo "usage: $0 [OUT] [SETTINGS] [-- GAME OPTIONS]" >&2; exit 2; }
  extra=("${@:4}")
fi
ADVBO="${ADVBO:-build/advbo}"
for setting in $settings; do
  case "$setting" in
    mnist_6590) where=(--game mnist --indices 6590 --inits 10) ;;
    mnist_10) where=(--game mnist --games 10 --inits 1) ;;
    cifar10_10) where=(--game cifar10 --games 10 --inits 1) ;;
    *) echo "bench_r2b2_bound: unknown setting $setting" >&2; exit 2 ;;
  esac
  for att in ${ATTACKERS:-gpucb ts}; do
    for def in ${DEFENDERS:-none random r2b2:1-lite r2b2:1-lite-tuned omniscient}; do
      dir="$out/$setting/${att}-vs-${def//:/}"
      agent=(--defender "$def")
      # advbo game refuses an option no agent reads: the candidate count only for omniscient.
      [[ "$setting" == cifar10_10 && "$def" == omniscient ]] &&
        agent+=(--omniscient-candidates "${OMNI_CIFAR10:-200}")
      [[ "$def" == r2b2:1-lite-tuned ]] && agent=(--defender r2b2:1-lite --defender-vertices
        --defender-candidates 1000 --defender-beta constant:0.1)
      [[ -f "$dir/summary.json" ]] && continue
      mkdir -p "$(dirname "$dir")"
      echo "bench_r2b2_bound: $setting $att vs $def" >&2
      "$ADVBO" game "${where[@]}" --attacker "$att" "${agent[@]}" --rounds 150 --seed "${SEED:-0}" \
        --quiet "${extra[@]}" --out-dir "$dir" > "$dir.log" 2>&1
    done
  done
done

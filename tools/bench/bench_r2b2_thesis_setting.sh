#!/usr/bin/env bash
# The adversarial-ML game in the R2-B2 thesis' own setting: its target
# architecture class (by default a plain CNN without batch norm, models/mnist_cw_plain.pt;
# MODEL=models/mnist_r2b2_cnn.pt is the thesis' own architecture re-trained), its VAE
# (models/mnist_vae_r2b2.pt, converted from the authors' weights by tools/train/convert_r2b2_vae.py)
# and its MNIST image (test image 6590 = img_inds_mnist.pkl[3], the index r2_b2_mnist.py
# plays), eps = 0.2, 150 rounds, 5 random initial rounds, 10 initialisations, seed 0.
#
#   bash tools/bench/bench_r2b2_thesis_setting.sh [OUT] [BETAS] [-- EXTRA GAME OPTIONS]
#
# Environment: GAME (default mnist; cifar10 plays the shipped CIFAR-10 sample with
# MODEL models/cifar10_cw.pt and VAE models/cifar10_vae.pt unless given), VAE (default
# models/mnist_vae_r2b2.pt), MODEL (default models/mnist_cw_plain.pt), IMAGES (default "--indices 6590 --inits 10"; the
# 10-image rows: "--games 10 --inits 5"), ROWS (default: all nine games below, by their
# names here: gpucb:none ... 0v1). EXTRA options go to every game (e.g.
# --gp-outputs raw --gp-lengthscale 0.2 --gp-restarts 10: the reference code's GPy).
#
# Plays, for each exploration weight in BETAS (default "r2b2_ref r2b2_joint": the reference
# code's own-action d, and advbo's former joint-dimension reading -- paired, same seeds):
#   Fig. E.10  GP-UCB and TS attackers (unaware of the defender) against no defender, a
#              random-search (level-0) defender and the level-1 R2-B2-Lite defender
#   Table 8.1  0v0 (random v random), 1v0, 0v1
# Each game is its own `advbo game` run in OUT/BETA/NAME/ (skipped when summary.json exists).
# Table: /usr/bin/python3 tools/bench/r2b2_table.py OUT/BETA (per BETA).
set -euo pipefail
cd "$(dirname "$0")/../.."
out="${1:-tools/results/r2b2_thesis_setting}"
betas="${2:-r2b2_ref r2b2_joint}"
extra=()
if [[ $# -gt 2 ]]; then
  [[ "$3" == "--" ]] || { echo "usage: $0 [OUT] [BETAS] [-- GAME OPTIONS]" >&2; exit 2; }
  extra=("${@:4}")
fi
ADVBO="${ADVBO:-build/advbo}"
read -r -a images <<< "${IMAGES:---indices 6590 --inits 10}"
GAME="${GAME:-mnist}"
if [[ "$GAME" == cifar10 ]]; then
  MODEL="${MODEL:-models/cifar10_cw.pt}"; VAE="${VAE:-models/cifar10_vae.pt}"
fi
common=(--game "$GAME" --model "${MODEL:-models/mnist_cw_plain.pt}" --vae "${VAE:-models/mnist_vae_r2b2.pt}"
        "${images[@]}" --rounds 150 --seed 0 --quiet "${extra[@]}")
for beta in $betas; do
  for p in ${ROWS:-gpucb:none gpucb:random gpucb:r2b2:1-lite ts:none ts:random ts:r2b2:1-lite 0v0 1v0 0v1}; do
    if [[ "$p" == *:* ]]; then
      att="${p%%:*}"; def="${p#*:}"; name="${att}-vs-${def//:/}"
      agents=(--attacker "$att" --defender "$def")
    else
      name="$p"; agents=(--matchups "$p")
    fi
    dir="$out/$beta/$name"
    [[ -f "$dir/summary.json" ]] && continue
    mkdir -p "$(dirname "$dir")"
    echo "bench_r2b2_thesis_setting: $beta $name" >&2
    "$ADVBO" game "${common[@]}" "${agents[@]}" --beta "$beta" --out-dir "$dir" > "$dir.log" 2>&1
  done
done

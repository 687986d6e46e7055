#!/usr/bin/env bash
# Sets up and builds advbo, then runs the default job: a targeted BOS^2 attack on the
# shipped MNIST model and the shipped MNIST test images (extra arguments are passed on).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
mkdir -p results
exec build/advbo attack --model models/mnist_cw.pt --dataset mnist --targeted \
  --eps 0.3 --budget 900 --num-images 2 --seed 0 --out results/quickstart.jsonl "$@"

#!/usr/bin/env bash
# BO-BOS hyperparameter-tuning study (Dai 2021 thesis, Sec. 4.5.1 / Fig. 4.1, App. A.4.1):
# logistic regression on MNIST (batch 20-500, L2 1e-6-1, learning rate 1e-3-0.1; 80/20 split),
# N = 50 epochs, a 1,500-epoch budget, paired seeds; BO-BOS with gamma = 0.89 / 0.95 / 0.99 / 1,
# GP-UCB (the same loop without early stopping) and Hyperband (eta = 3, R = 80); then the
# table, goal checks and curves (~35 min on 2 cores with the 24,262-image pool). Then the same
# comparison on an RBF LS-SVM (2,500 MNIST images; an epoch is one conjugate-gradient
# iteration, N = 50), where bad configurations are plainly bad early (~15 min).
#
#   bash tools/bench/bench_bobos.sh [SEEDS] [MNIST_DIR] [OUT_DIR]
#     defaults: 10, ../shared/datasets/mnist if present (t10k + 14,262 training images) else
#     the shipped data/mnist (10,000 test images), tools/results/bobos
set -euo pipefail
cd "$(dirname "$0")/../.."
seeds="${1:-10}"
mnist="${2:-}"
if [ -z "$mnist" ]; then
  mnist=data/mnist
  [ -d ../shared/datasets/mnist ] && mnist=../shared/datasets/mnist
fi
out="${3:-tools/results/bobos}"
source tools/bench/bench_prologue.sh
bench_prologue bench_bobos
mkdir -p "$out"
build/tools/bench_bobos --task mnist-lr --mnist-dir "$mnist" --seeds "$seeds" --budget 1500 \
  --methods bo-bos:0.89,bo-bos:0.95,bo-bos:0.99,bo-bos:1,gp-ucb,hyperband \
  --out "$out/mnist_lr.jsonl"
/usr/bin/python3 tools/bench/bobos_table.py "$out/mnist_lr.jsonl" --out "$out/table.md" \
  --plot "$out/curves.png"
build/tools/bench_bobos --task mnist-lssvm --mnist-dir "$mnist" --seeds "$seeds" --budget 1500 \
  --methods bo-bos:0.89,bo-bos:0.95,bo-bos:0.99,bo-bos:1,gp-ucb,hyperband \
  --out "$out/mnist_lssvm.jsonl"
/usr/bin/python3 tools/bench/bobos_table.py "$out/mnist_lssvm.jsonl" --out "$out/table_lssvm.md" \
  --plot "$out/curves_lssvm.png"

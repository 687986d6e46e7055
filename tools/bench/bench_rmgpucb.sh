#!/usr/bin/env bash
# RM-GP-UCB (Dai 2021 thesis, Ch. 7):
#  1. the synthetic study (Sec. 7.6.1 / Fig. 7.1): 20 GP-drawn functions x 5 inits, M = 4
#     meta-tasks of 20 points; gaps 0.05, 0.05, 4, 4 and all gaps 8; GP-UCB, RM-GP-UCB with
#     uniform weights and RM-GP-UCB; 50 iterations; table, goal checks, curves (~4 min);
#  2. the real meta-HPO study: an RBF LS-SVM on MNIST subsets tuned by `advbo bo --algo
#     rm-gp-ucb --meta` with a similar (MNIST), an inverted-noisy and a Fashion-MNIST meta-task,
#     10 runs, 30 evaluations, against plain GP-UCB (~12 min on 2 cores).
#
#   bash tools/bench/bench_rmgpucb.sh [FUNCTIONS] [INITS] [OUT_DIR] [MNIST_DIR]
#     defaults: 20 5 tools/results/rmgpucb, ../shared/datasets/mnist if present (24,262 images)
#     else the shipped data/mnist (10,000)
set -euo pipefail
cd "$(dirname "$0")/../.."
functions="${1:-20}"
inits="${2:-5}"
out="${3:-tools/results/rmgpucb}"
mnist="${4:-}"
if [ -z "$mnist" ]; then
  mnist=data/mnist
  [ -d ../shared/datasets/mnist ] && mnist=../shared/datasets/mnist
fi
source tools/bench/bench_prologue.sh
bench_prologue bench_rmgpucb
cmake --build build --target advbo >&2
mkdir -p "$out"
build/tools/bench_rmgpucb --functions "$functions" --inits "$inits" --iterations 50 --seed 0 \
  --out "$out/synthetic.jsonl"
/usr/bin/python3 tools/bench/rmgpucb_table.py "$out/synthetic.jsonl" --out "$out/table.md" \
  --plot "$out/curves.png"
pool=10000
[ -e "$mnist/train-images-idx3-ubyte.gz" ] && pool=24262
[ -e /usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz ] || bash tools/setup.sh
/usr/bin/python3 tools/bench/rmgpucb_hpo.py --advbo build/advbo --mnist "$mnist" --pool "$pool" \
  --out-dir "$out" --runs 10 --budget 30 --jobs 2

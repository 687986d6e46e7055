#!/usr/bin/env bash
# Federated BO with `advbo fbo`: the DP-FTS-DE synthetic study (N = 200 agents x
# SEEDS seeds, default 20: TS, FTS, FTS-DE with P = 2 / 3 and its two ablations, DP-FTS and
# DP-FTS-DE, the S, q and z sweeps with clipped fractions and privacy losses) and the
# mnist-lssvm family (20 agents x 5 seeds), then the table, goal checks and curves (~15 min on
# 2 cores).
#
#   bash tools/bench/bench_fbo.sh [SEEDS] [OUT_DIR] [MNIST_DIR]
#     defaults: 20 tools/results/fbo, ../shared/datasets/mnist if present else data/mnist
set -euo pipefail
cd "$(dirname "$0")/../.."
seeds="${1:-20}"
out="${2:-tools/results/fbo}"
mnist="${3:-}"
if [ -z "$mnist" ]; then
  mnist=data/mnist
  [ -d ../shared/datasets/mnist ] && mnist=../shared/datasets/mnist
fi
[ -x build/advbo ] || bash tools/setup.sh
cmake --build build --target advbo >&2
/usr/bin/python3 -c "import matplotlib" 2> /dev/null || {
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq python3-matplotlib >&2
}
/usr/bin/python3 tools/bench/fbo_study.py --advbo build/advbo --out-dir "$out" --seeds "$seeds" \
  --jobs 2 --real --real-seeds 5 --mnist "$mnist"

#!/usr/bin/env bash
# RM-GP-UCB synthetic study (Dai 2021 thesis, Sec. 7.6.1 / Fig. 7.1): 20 GP-drawn functions x 5
# inits, M = 4 meta-tasks of 20 points; gaps 0.05, 0.05, 4, 4 and all gaps 8; GP-UCB, RM-GP-UCB
# with uniform weights and RM-GP-UCB; 50 iterations; then the table, goal checks and curves
# (a few minutes on 2 cores). The real meta-HPO study (issue #15) is not in yet.
#
#   bash tools/bench_rmgpucb.sh [FUNCTIONS] [INITS] [OUT_DIR]   # default 20 5 tools/results/rmgpucb
set -euo pipefail
cd "$(dirname "$0")/.."
functions="${1:-20}"
inits="${2:-5}"
out="${3:-tools/results/rmgpucb}"
source tools/bench_prologue.sh
bench_prologue bench_rmgpucb
mkdir -p "$out"
build/tools/bench_rmgpucb --functions "$functions" --inits "$inits" --iterations 50 --seed 0 \
  --out "$out/synthetic.jsonl"
/usr/bin/python3 tools/rmgpucb_table.py "$out/synthetic.jsonl" --out "$out/table.md" \
  --plot "$out/curves.png"

#!/usr/bin/env bash
# UHE-BO synthetic study (Ha et al.): Branin, Hartmann-3, Deceptive (n = 3), h1 x five methods
# (UHE-BO, MAP-BO, RA-BO, Random+EXP3, random) x RUNS paired seeds (default 20; ~10 min on 2
# cores), T = 100, then the regret / fit-MSE table, the goal checks and the regret curves.
#
#   bash tools/bench/bench_uhe_bo.sh [RUNS] [OUT_DIR]      # default 20 tools/results/uhe_bo
set -euo pipefail
cd "$(dirname "$0")/../.."
runs="${1:-20}"
out="${2:-tools/results/uhe_bo}"
source tools/bench/bench_prologue.sh
bench_prologue bench_uhe_bo
mkdir -p "$out"
build/tools/bench_uhe_bo --runs "$runs" --seed 0 --horizon 100 --out "$out/runs.jsonl"
/usr/bin/python3 tools/bench/uhe_bo_table.py "$out/runs.jsonl" --out "$out/table.md" \
  --plot "$out/regret_curves.png"

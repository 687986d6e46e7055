#!/usr/bin/env bash
# FTS (Dai 2021 thesis, Ch. 5), the synthetic study of Fig. 5.1 — GP draws (SE,
# l = 0.03) on a 1,000-point grid, N = 50 agents with g_n = f +- d_n, t_n observations each, M
# shared normalised random features; standard TS against FTS with d_n = 0.02 (t_n = 40 / 100, M
# = 50 / 100 / 200) and d_n = 1.2 (p_t = 1 - 1/sqrt(t) and 1 - 1/t^2); FUNCTIONS x INITS paired
# runs, 50 iterations; then the table, goal checks and curves (~3 min on 2 cores).
#
#   bash tools/bench/bench_fts.sh [FUNCTIONS] [INITS] [OUT_DIR]     defaults: 5 5 tools/results/fts
set -euo pipefail
cd "$(dirname "$0")/../.."
functions="${1:-5}"
inits="${2:-5}"
out="${3:-tools/results/fts}"
source tools/bench/bench_prologue.sh
bench_prologue bench_fts
mkdir -p "$out"
build/tools/bench_fts --functions "$functions" --inits "$inits" --seed 0 --out "$out/synthetic.jsonl"
/usr/bin/python3 tools/bench/fts_table.py "$out/synthetic.jsonl" --out "$out/table.md" \
  --plot "$out/curves.png"

#!/usr/bin/env bash
# Hybrid Batch BO (Azimi et al. 2012) Table 2 reproduction: six benchmarks x nine methods x
# RUNS runs (default 100; ~5 min on 2 cores) in the paper's setting, then the table next to
# the paper's, the goal checks and the regret curves.
#
#   bash tools/bench/bench_hybrid_batch.sh [RUNS] [OUT_DIR]     # default 100 tools/results/hybrid_batch
set -euo pipefail
cd "$(dirname "$0")/../.."
runs="${1:-100}"
out="${2:-tools/results/hybrid_batch}"
source tools/bench/bench_prologue.sh
bench_prologue bench_hybrid_batch
mkdir -p "$out"
build/tools/bench_hybrid_batch --runs "$runs" --seed 0 --out "$out/runs.jsonl"
/usr/bin/python3 tools/bench/hybrid_batch_table.py "$out/runs.jsonl" --out "$out/table.md" \
  --plot "$out/regret_curves.png"

#!/usr/bin/env bash
# PO-GP-UCB (Kharkovskii et al. 2020, Sec. 4 and App. A): non-private GP-UCB against
# PO-GP-UCB over epsilon sweeps (r = 10) and r sweeps at fixed epsilon, 50 paired runs, T = 50:
#  1. synthetic: GP draws (SE, l = 1.25) on a 100 x 100 grid of [0, 5]^2, delta = 1e-5, the
#     paper's Fig. 2a and Tables 1-3 settings;
#  2. Branin-Hoo: -log(branin) on a 31 x 31 grid, inputs made isotropic by an ARD fit, delta =
#     1e-3, Fig. 3 and Tables 10-12 settings.
# Then the table (with the paper's printed numbers), goal checks and curves (~5 min on 2 cores).
#
#   bash tools/bench/bench_po_gp_ucb.sh [RUNS] [OUT_DIR]     defaults: 50 tools/results/po_gp_ucb
set -euo pipefail
cd "$(dirname "$0")/../.."
runs="${1:-50}"
out="${2:-tools/results/po_gp_ucb}"
source tools/bench/bench_prologue.sh
bench_prologue bench_po_gp_ucb
mkdir -p "$out"
sweep() {  # LOGEPS R... -> po:LOGEPS:R,...
  local e="$1"; shift
  local r; for r in "$@"; do printf 'po:%s:%s,' "$e" "$r"; done
}
synthetic="gp-ucb,$(sweep 0 10)$(sweep 0.5 10)$(sweep 0.9 10)$(sweep 1.1 3 6 8 10 15 20)"
synthetic+="$(sweep 1.3 3 9 12 15 20 30)$(sweep 1.5 5 10 15 20 30 50)"
branin="gp-ucb,$(sweep 0 10)$(sweep 1.8 10)$(sweep 2 10)$(sweep 2.3 3 6 8 10 15 20)"
branin+="$(sweep 2.5 3 9 12 15 20 30)$(sweep 2.7 5 10 15 20 30 50)"
build/tools/bench_po_gp_ucb --runs "$runs" --studies synthetic --methods "${synthetic%,}" \
  --out "$out/synthetic.jsonl"
build/tools/bench_po_gp_ucb --runs "$runs" --studies branin --methods "${branin%,}" \
  --out "$out/branin.jsonl"
cat "$out/synthetic.jsonl" "$out/branin.jsonl" > "$out/runs.jsonl.partial"
mv "$out/runs.jsonl.partial" "$out/runs.jsonl"
rm "$out/synthetic.jsonl" "$out/branin.jsonl"
/usr/bin/python3 tools/bench/po_gp_ucb_table.py "$out/runs.jsonl" --out "$out/table.md" \
  --plot "$out/curves.png"

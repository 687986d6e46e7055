#!/usr/bin/env bash
# R2-B2 synthetic games (Dai 2021 thesis Sec. 8.4.1, Fig. 8.2 / App. E.6.1.1): for each game
# type, 10 sampled GP payoff functions x 5 initialisations, 150 rounds, level-0 = GP-MW,
# matchups 0v0 (both level 0), 1v0, 1Lv0 (R2-B2-Lite), 2v1 (agent 1 one level above agent 2).
#
#   bash tools/bench/bench_games.sh [OUT_DIR] [ADVBO]
#
# Writes OUT_DIR/<type>/{rounds.jsonl,summary.json,table.txt,curves.csv,curves.png}
# (default OUT_DIR = results/r2b2_synthetic) and prints the three tables.
set -euo pipefail
cd "$(dirname "$0")/../.."
out="${1:-results/r2b2_synthetic}"
advbo="${2:-build/advbo}"
for type in common general constant; do
  "$advbo" game --game synthetic --type "$type" --matchups 0v0,1v0,1Lv0,2v1 --level0 gpmw \
    --games 10 --inits 5 --rounds 150 --seed 0 --quiet --out-dir "$out/$type"
done
for type in common general constant; do cat "$out/$type/table.txt"; echo; done

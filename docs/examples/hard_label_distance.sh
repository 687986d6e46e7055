#!/usr/bin/env bash
# Hard-label distance at a budget (README, "Examples"): three hard-label L2 attacks on the shipped
# CIFAR-10 model, each spending its whole budget shrinking its closest adversarial query; the
# table gives the median distance within 100, 250, 500 and 1,000 queries.
#
#   bash docs/examples/hard_label_distance.sh [OUT] [N] [BUDGET]
#
# N test images (default 2) and BUDGET queries (default 300) keep the example short; the
# benchmark uses 100 and 1,000 (docs/benchmarks/threat_models.md). Writes OUT/table.txt,
# summary.json, records.jsonl and curves.png (median distance against queries); OUT defaults
# to a new temporary folder. ADVBO=path overrides build/advbo.
set -euo pipefail
cd "$(dirname "$0")/../.."
advbo="${ADVBO:-build/advbo}"
out="${1:-$(mktemp -d)}"
"$advbo" bench --dataset cifar10 --feedback label --norm l2 --goal min-distance \
  --attacks bo-hl,cgba,hsja --untargeted -n "${2:-2}" --budget "${3:-300}" --seed 0 -q -o "$out"
cat "$out/table.txt"

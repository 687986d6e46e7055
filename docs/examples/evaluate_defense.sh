#!/usr/bin/env bash
# Evaluate a defense (README, "Examples"): the worst-case robust accuracy of the shipped CIFAR-10
# model behind AAA (Chen et al., NeurIPS 2022), over Square and AAA's adaptive attack, which
# `advbo evaluate` adds by itself.
#
#   bash docs/examples/evaluate_defense.sh [OUT] [N] [BUDGET]
#
# N test images (default 4) and BUDGET queries per image (default 500) keep the example short;
# the defense benchmark uses 100 and 2,500 (docs/benchmarks/defenses.md). Below evaluate's
# default budget the number is printed as an upper bound. Writes OUT/table.txt, summary.json,
# images.jsonl and records.jsonl; OUT defaults to a new temporary folder. ADVBO=path overrides
# build/advbo.
set -euo pipefail
cd "$(dirname "$0")/../.."
advbo="${ADVBO:-build/advbo}"
out="${1:-$(mktemp -d)}"
"$advbo" evaluate --dataset cifar10 --defense aaa -n "${2:-4}" --budget "${3:-500}" --seed 0 -q \
  -o "$out"
cat "$out/table.txt"

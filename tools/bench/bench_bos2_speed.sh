#!/usr/bin/env bash
# BO time per query against the model's forward time: BOS² with the
# default and the thesis-literal settings on the same instances, ONE single-threaded process
# (run it on an otherwise idle machine), MNIST and CIFAR-10.
#
#   bash tools/bench/bench_bos2_speed.sh [MNIST_IMAGES] [CIFAR_IMAGES]     (default 2 and 1)
#
# Writes results/bos2_speed_<dataset>/ (records, table) and prints, per row, the model and
# BO milliseconds per query and their ratio (tools/bench/paper_compare.py) plus the BO time by
# phase (the records' bo_phase_seconds). ADVBO=path overrides build/advbo.
set -euo pipefail
cd "$(dirname "$0")/../.."
ADVBO="${ADVBO:-build/advbo}"
run() {
  local ds="$1" n="$2" eps="$3" out="results/bos2_speed_$1"
  "$ADVBO" bench --dataset "$ds" --attacks "bos2,bos2:preset=thesis" --num-images "$n" --pixels float \
    --targeted --eps "$eps" --budget 900 --seed 0 --threads 1 -q --out-dir "$out" >/dev/null
  echo "## $ds ($n images x 9 targets, one process, --threads 1)"
  /usr/bin/python3 tools/bench/paper_compare.py "$out/records.jsonl" "$ds"
  /usr/bin/python3 - "$out/records.jsonl" <<'PY'
import collections, json, sys
phase = collections.defaultdict(lambda: collections.Counter())
used = collections.Counter()
for line in open(sys.argv[1]):
    r = json.loads(line)
    used[r["attack"]] += r["queries_used"]
    for k, v in r.get("bo_phase_seconds", {}).items():
        phase[r["attack"]][k] += v
for a in sorted(phase):
    parts = ", ".join(f"{k} {1000 * v / used[a]:.2f}" for k, v in phase[a].most_common())
    print(f"\n{a}: BO ms per query by phase: {parts}")
PY
}
run mnist "${1:-2}" 0.3
run cifar10 "${2:-1}" 0.05

#!/usr/bin/env bash
# BOS^2 and Square Attack against each input-transformation defense, with the
# defended model's clean accuracy: `advbo bench --defense SPEC` on the BOS^2 paper's protocol
# (targeted, every other class, T = 900; eps 0.3 MNIST, 0.05 CIFAR-10) on the first N
# correctly classified test images behind each defense.
#
#   bash tools/bench/bench_defenses.sh [mnist|cifar10|all] [SHARDS] [OUT_ROOT]
#
# N = 5 MNIST images (45 instances), 3 CIFAR-10 images (27 instances) per defense. Each
# (dataset, defense) runs as SHARDS parallel resumable shards (default nproc) into
# OUT_ROOT/<dataset>/<defense>/ (default results/defenses) and is merged there; re-running
# skips finished instances. Table: /usr/bin/python3 tools/bench/defense_table.py OUT_ROOT
# ADVBO=path overrides build/advbo.
set -euo pipefail
cd "$(dirname "$0")/../.."
which="${1:-all}"
shards="${2:-$(nproc)}"
root="${3:-results/defenses}"
ADVBO="${ADVBO:-build/advbo}"
DEFENSES=(none jpeg:quality=75 bits:depth=4 median:size=3 blur:sigma=1 noise:sigma=0.02
          resize:ratio=0.1 r2b2:jpeg+noise)

run() {
  local ds="$1" n="$2" eps="$3"
  for d in "${DEFENSES[@]}"; do
    local out="$root/$ds/${d//[:=+]/_}"
    mkdir -p "$out"
    local pids=()
    for k in $(seq 1 "$shards"); do
      "$ADVBO" bench --dataset "$ds" --attacks bos2,square --num-images "$n" --targeted --pixels float \
        --eps "$eps" --budget 900 --seed 0 --threads 1 --defense "$d" --shard "$k/$shards" \
        --quiet --out-dir "$out/shard-$k" >"$out/shard-$k.log" 2>&1 &
      pids+=($!)
    done
    local rc=0
    for p in "${pids[@]}"; do wait "$p" || rc=1; done
    ((rc == 0)) || { echo "bench_defenses: $ds $d failed (see $out/shard-*.log)" >&2; return 1; }
    "$ADVBO" bench merge "$out"/shard-*/ --out-dir "$out" >/dev/null
    echo "bench_defenses: $ds $d done"
  done
}

case "$which" in
  mnist) run mnist 5 0.3 ;;
  cifar10) run cifar10 3 0.05 ;;
  all) run mnist 5 0.3 && run cifar10 3 0.05 ;;
  *) echo "usage: $0 [mnist|cifar10|all] [SHARDS] [OUT_ROOT]" >&2; exit 2 ;;
esac
/usr/bin/python3 tools/bench/defense_table.py "$root"

#!/usr/bin/env bash
# Paired ablation of BOS^2 settings: every row changes one setting of the
# default configuration (Bos2Options::Tuned, in its MNIST form on MNIST) or restores the
# thesis-literal one, on the same instances and seeds, side by side with Square Attack,
# through `advbo bench`.
#
#   bash tools/bench/bench_bos2_ablation.sh DATASET NUM_IMAGES [SHARDS] [MODEL]
#
# Writes results/bos2_ablation_<dataset>[_<model name>][_float]/ (shards resumable; merged
# records, table.txt, summary.json) and ablation.md (tools/paired_compare.py against the `bos2`
# row: McNemar on success, paired bootstrap on queries, BO and model ms per query).
# ADVBO=path overrides build/advbo; ROWS=... overrides the row list; PIXELS=8bit (default, every
# query an 8-bit image) | float (the thesis' query space; the issue-#12 ablation).
set -euo pipefail
cd "$(dirname "$0")/../.."
ds="${1:?dataset}"
n="${2:?number of images}"
shards="${3:-$(nproc)}"
model="${4:-}"
ADVBO="${ADVBO:-build/advbo}"
PIXELS="${PIXELS:-8bit}"
ROWS="${ROWS:-bos2,bos2-nostop,bos2:tr=0,bos2:refine=0,bos2:patience=0,bos2:refine_p=0.1,\
bos2:saturation=3,bos2:saturation=1,bos2:kernel=matern52,bos2:beta=constant:9,bos2:noise=fit,\
bos2:pool=0,bos2:refit=5,bos2:decompositions=1,bos2:polish=0,bos2:preset=fast,square}"
eps=0.3; [ "$ds" = cifar10 ] && eps=0.05
name="bos2_ablation_$ds"; margs=()
if [ -n "$model" ]; then name="${name}_$(basename "$model" .pt)"; margs=(--model "$model"); fi
if [ "$PIXELS" = float ]; then name="${name}_float"; fi
out="results/$name"
mkdir -p "$out"
pids=()
for k in $(seq 1 "$shards"); do
  "$ADVBO" bench --dataset "$ds" "${margs[@]}" --attacks "$ROWS" --num-images "$n" --targeted --pixels "$PIXELS" \
    --eps "$eps" --budget 900 --seed 0 --threads 1 --shard "$k/$shards" -q \
    --out-dir "$out/shard-$k" >"$out/shard-$k.log" 2>&1 &
  pids+=($!)
done
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=1; done
((rc == 0)) || { echo "bench_bos2_ablation: a shard failed (see $out/shard-*.log)" >&2; exit 1; }
"$ADVBO" bench merge "$out"/shard-*/ --out-dir "$out"
/usr/bin/python3 tools/paired_compare.py "$out/records.jsonl" --ref bos2 --out "$out/ablation.md"

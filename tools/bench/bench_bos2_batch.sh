#!/usr/bin/env bash
# BOS² speed variants against the default on the same instances and seeds: batched proposals
# (bos2:batch=q, Kriging believer) and the K^-1 polish (bos2:precision=1). Each variant runs
# alone as 2 shards in parallel on the 2 cores (one LibTorch thread each) so its wall time
# is its own; then the paired comparison of ASR, queries and ms per query against `bos2`
# (tools/paired_compare.py).
#
#   bash tools/bench/bench_bos2_batch.sh [IMAGES] [OUT]        (default 17 -> 153 instances)
#   SPECS="bos2 bos2:batch=2 bos2:batch=4 bos2:batch=8 bos2:precision=1" DATASET=mnist
#   PIXELS=8bit ADVBO=build/advbo SEED=0                        (environment, defaults shown)
#   EXTRA="--model models/mnist_carlini.pt --rescale-compat"    (more bench flags; default none)
#
# Writes OUT/<n>/{table.txt,summary.json} per spec (n = its position), OUT/records.jsonl (all
# specs), OUT/wall.txt (seconds per spec) and OUT/paired.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
ADVBO="${ADVBO:-build/advbo}"
N="${1:-17}"
OUT="${2:-results/bos2_batch}"
SPECS="${SPECS:-bos2 bos2:batch=2 bos2:batch=4 bos2:batch=8 bos2:precision=1}"
DATASET="${DATASET:-mnist}"
PIXELS="${PIXELS:-8bit}"
SEED="${SEED:-0}"
read -r -a EXTRA_FLAGS <<< "${EXTRA:-}"
mkdir -p "$OUT"
: > "$OUT/wall.txt"
: > "$OUT/records.jsonl"
i=0
for spec in $SPECS; do
  i=$((i + 1))
  rm -rf "${OUT:?}/$i"
  start=$(date +%s%N)
  for k in 1 2; do
    "$ADVBO" bench --dataset "$DATASET" --attacks "$spec" -n "$N" --targeted --budget 900 \
      --seed "$SEED" --pixels "$PIXELS" --threads 1 --shard "$k/2" ${EXTRA_FLAGS[@]+"${EXTRA_FLAGS[@]}"} -q -o "$OUT/$i/shard$k" >/dev/null &
  done
  wait
  end=$(date +%s%N)
  "$ADVBO" bench merge "$OUT/$i/shard1" "$OUT/$i/shard2" -o "$OUT/$i/merged" >/dev/null
  echo "$spec wall_seconds $(( (end - start) / 1000000000 ))" | tee -a "$OUT/wall.txt"
  cat "$OUT/$i/merged/records.jsonl" >> "$OUT/records.jsonl"
  mv "$OUT/$i/merged/table.txt" "$OUT/$i/merged/summary.json" "$OUT/$i/"
  rm -rf "${OUT:?}/$i/shard1" "${OUT:?}/$i/shard2" "${OUT:?}/$i/merged"
done
# The paired table needs the reference row `bos2` among the specs.
if [[ " $SPECS " == *" bos2 "* ]]; then
  /usr/bin/python3 tools/paired_compare.py "$OUT/records.jsonl" --ref bos2 --out "$OUT/paired.md"
fi

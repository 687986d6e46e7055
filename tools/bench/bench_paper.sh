#!/usr/bin/env bash
# Reproduces the BOS^2 paper's attack tables (Kharkovskii 2020 thesis, Sec. 5.3,
# Tables 5.1-5.4) with `advbo bench`: MNIST 50 images x 9 targets (eps 0.3) and CIFAR-10
# 20 images x 9 targets (eps 0.05), budget T = 900, seed 0, all eight rows.
#
#   bash tools/bench/bench_paper.sh [mnist|cifar10|all] [SHARDS]
#
# Runs SHARDS (default: nproc) single-threaded shards side by side, each into
# results/bench_<dataset>[_<model>]/shard-k (resumable: re-running skips finished
# instances), then merges them into that folder (table.txt, summary.json, curves.csv/png)
# and writes paper_compare.md next to the thesis' figures. Copy the merged folder to
# tools/results/ to publish it. ADVBO=path overrides build/advbo; MODEL=path attacks another
# model (e.g. models/mnist_cw_plain.pt; the folder name gets the model's name);
# ATTACKS=a,b,... overrides the rows; OUT=folder overrides the output folder; NUM_IMAGES=N
# attacks only the first N images (the first N x 9 instances of the full run, same seeds).
# PIXELS=float (default, the thesis' protocol) | 8bit picks the query space (folder suffix
# _8bit); RESCALE=1 adds --rescale-compat (the BayesOpt reference code's threat model, folder
# suffix _rescale). Tables report both the float ASR and the 8-bit ASR (each reported image
# rounded onto the grid inside the ball and re-queried; in 8-bit mode the two agree).
set -euo pipefail
cd "$(dirname "$0")/../.."
which="${1:-all}"
shards="${2:-$(nproc)}"
ATTACKS="${ATTACKS:-bos2,bos2-nostop,bayesopt,genattack,zoo,autozoom,square,random}"
MODEL="${MODEL:-}"
ADVBO="${ADVBO:-build/advbo}"
PIXELS="${PIXELS:-float}"
RESCALE="${RESCALE:-0}"

run_dataset() {
  local ds="$1" n="$2" eps="$3" out="results/bench_$1" margs=()
  if [ -n "$MODEL" ]; then out="${out}_$(basename "$MODEL" .pt)"; margs=(--model "$MODEL"); fi
  margs+=(--pixels "$PIXELS")
  if [ "$PIXELS" = 8bit ]; then out="${out}_8bit"; fi
  if [ "$RESCALE" = 1 ]; then out="${out}_rescale"; margs+=(--rescale-compat); fi
  out="${OUT:-$out}"
  mkdir -p "$out"
  local pids=()
  for k in $(seq 1 "$shards"); do
    "$ADVBO" bench --dataset "$ds" "${margs[@]}" --attacks "$ATTACKS" --num-images "$n" --targeted \
      --eps "$eps" --budget 900 --seed 0 --threads 1 --shard "$k/$shards" \
      --out-dir "$out/shard-$k" >"$out/shard-$k.log" 2>&1 &
    pids+=($!)
  done
  local rc=0
  for p in "${pids[@]}"; do wait "$p" || rc=1; done
  ((rc == 0)) || { echo "bench_paper: a $ds shard failed (see $out/shard-*.log)" >&2; return 1; }
  "$ADVBO" bench merge "$out"/shard-*/ --out-dir "$out"
  /usr/bin/python3 tools/bench/paper_compare.py "$out/records.jsonl" "$ds" > "$out/paper_compare.md"
}

case "$which" in
  mnist) run_dataset mnist "${NUM_IMAGES:-50}" 0.3 ;;
  cifar10) run_dataset cifar10 "${NUM_IMAGES:-20}" 0.05 ;;
  all) run_dataset mnist "${NUM_IMAGES:-50}" 0.3 && run_dataset cifar10 "${NUM_IMAGES:-20}" 0.05 ;;
  *) echo "usage: $0 [mnist|cifar10|all] [SHARDS]" >&2; exit 2 ;;
esac

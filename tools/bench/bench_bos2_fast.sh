#!/usr/bin/env bash
# BO work per query: the default `bos2` against `bos2:preset=fast` (Bos2Options::Fast) and the
# settings it is made of, on the same instances and seeds (docs/results/attacks.md, "BO work
# per query"):
#   1. the paired MNIST rows (17 images x 9 targets = 153 instances, 8-bit, T = 900), each
#      row alone as 2 shards on the 2 cores (tools/bench/bench_bos2_batch.sh) -> OUT/paired_mnist153.md;
#   2. BO and model ms per query, one process per core (default and fast side by side), the
#      first correctly classified image x 9 targets, MNIST and CIFAR-10, REPS times ->
#      OUT/speed_<dataset>_<spec>_r<k>.jsonl and their pooled table OUT/speed.md
#      (tools/bench/bo_model_ratio.py);
#   3. the 450-instance MNIST rows `bos2:preset=fast` (q = 1) and `bos2:preset=fast,batch=4`,
#      paired -> OUT/fast450/.
#
#   bash tools/bench/bench_bos2_fast.sh [OUT]     (default results/bos2_fast)
#   STEPS="paired speed fast450" REPS=1 ADVBO=build/advbo     (environment, defaults shown)
set -euo pipefail
cd "$(dirname "$0")/../.."
ADVBO="${ADVBO:-build/advbo}"
OUT="${1:-results/bos2_fast}"
mkdir -p "$OUT"
STEPS="${STEPS:-paired speed fast450}"
REPS="${REPS:-1}"
if [[ " $STEPS " == *" paired "* ]]; then
  SPECS="bos2 bos2:precision=1,restarts=0 bos2:precision=1,restarts=0,polish=8 \
bos2:preset=fast bos2:preset=fast,batch=4" bash tools/bench/bench_bos2_batch.sh 17 "$OUT/mnist153"
  cp "$OUT/mnist153/paired.md" "$OUT/paired_mnist153.md"
fi
if [[ " $STEPS " == *" speed "* ]]; then
  for r in $(seq 1 "$REPS"); do
    for ds in mnist cifar10; do
      for spec in bos2 bos2:preset=fast; do
        (dir="$OUT/speed_${ds}_${spec//[:=,]/_}_r$r"
         eps=0.3; [[ "$ds" == cifar10 ]] && eps=0.05  # the BOS^2 thesis' radii (Tables 5.2, 5.3)
         "$ADVBO" bench --dataset "$ds" --attacks "$spec" -n 1 --targeted --eps "$eps" --budget 900 --seed 0 \
           --pixels 8bit --threads 1 -q -o "$dir" > /dev/null &&
           mv "$dir/records.jsonl" "$dir.jsonl" && rm -rf "$dir") &
      done
      wait
    done
  done
  /usr/bin/python3 tools/bench/bo_model_ratio.py "$OUT"/speed_*_r*.jsonl | tee "$OUT/speed.md"
fi
if [[ " $STEPS " == *" fast450 "* ]]; then
  SPECS="bos2:preset=fast bos2:preset=fast,batch=4" bash tools/bench/bench_bos2_batch.sh 50 \
    "$OUT/fast450"
  /usr/bin/python3 tools/paired_compare.py "$OUT/fast450/records.jsonl" --ref bos2:preset=fast \
    --out "$OUT/fast450/paired.md"
fi

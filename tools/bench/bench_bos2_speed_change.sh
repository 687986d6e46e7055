#!/usr/bin/env bash
# One arm of a BOS² speed change: the same instances, seeds and budget as every other arm, so
# tools/bench/speed_change_table.py can pair them. Run it once per build (or setting) on an
# otherwise idle machine:
#
#   ADVBO=OLD_BUILD/advbo bash tools/bench/bench_bos2_speed_change.sh OUT/before
#   bash tools/bench/bench_bos2_speed_change.sh OUT/after
#   ONE_CORE=1 bash tools/bench/bench_bos2_speed_change.sh OUT/after_one_core   # taskset -c 0
#   python3 tools/bench/speed_change_table.py OUT/before/cifar10/records.jsonl.gz \
#       OUT/after/cifar10/records.jsonl.gz:after
#
# Each dataset: `advbo bench --attacks ATTACKS` (default bos2; ATTACKS="bos2,square" adds
# Square for the wall-time comparison), 2 images x 9 targets, 8-bit queries, T 900, seed 0,
# one lane, one worker, one LibTorch thread; CIFAR-10 at eps 0.05, MNIST at 0.3. Writes
# OUT/<dataset>/ (records.jsonl.gz, table.txt, command.txt). ADVBO=path overrides build/advbo;
# NUM_IMAGES=n and SEED=s the images per dataset (2) and the seed (0), for the paired check of
# a change that alters the records on more, fresh instances.
set -euo pipefail
cd "$(dirname "$0")/../.."
out="${1:?OUT: the folder of this arm}"
ADVBO="${ADVBO:-build/advbo}"
[ -x "$ADVBO" ] || { echo "$ADVBO: no advbo binary (bash tools/setup.sh)" >&2; exit 1; }
prefix=()
[ "${ONE_CORE:-0}" = 1 ] && prefix=(taskset -c 0)
for ds in ${DATASETS:-cifar10 mnist}; do
  case "$ds" in mnist) eps=0.3 ;; cifar10) eps=0.05 ;; *) echo "dataset $ds?" >&2; exit 1 ;; esac
  args=(bench --dataset "$ds" --attacks "${ATTACKS:-bos2}" --num-images "${NUM_IMAGES:-2}" --targeted
        --eps "$eps" --budget 900 --seed "${SEED:-0}" --lockstep 1 --workers 1 --threads 1 -q)
  tmp=$(mktemp -d)
  "${prefix[@]}" "$ADVBO" "${args[@]}" --out-dir "$tmp" > /dev/null
  mkdir -p "$out/$ds"
  gzip -9n -c "$tmp/records.jsonl" > "$out/$ds/records.jsonl.gz"
  cp "$tmp/table.txt" "$out/$ds/table.txt"
  echo "${prefix[*]:+${prefix[*]} }advbo ${args[*]}" > "$out/$ds/command.txt"
  rm -rf "$tmp"
  cat "$out/$ds/table.txt"
done

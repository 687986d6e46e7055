#!/usr/bin/env bash
# Submits an `advbo bench` run to Slurm as N shards (a job array, one shard per task) and the
# merge as a job that starts when every shard succeeded. Prints the two job ids.
#
#   bash tools/slurm/submit_bench.sh N OUT_DIR [advbo bench options...]
#   e.g. bash tools/slurm/submit_bench.sh 4 runs/mnist --attacks bos2,square -n 10
# Run from the repository root after the build (build/advbo); OUT_DIR/merged gets the table.
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: bash tools/slurm/submit_bench.sh N OUT_DIR [advbo bench options...]" >&2
  exit 2
fi
n="$1"
out="$2"
shift 2
case "$n" in '' | *[!0-9]* | 0) echo "submit_bench.sh: N must be a positive integer" >&2; exit 2 ;; esac
[ -x build/advbo ] || { echo "submit_bench.sh: build/advbo missing (bash tools/setup.sh)" >&2; exit 2; }
mkdir -p "$out"
array=$(sbatch --parsable --array="1-$n" --export=ALL,ADVBO_SHARDS="$n" \
  --output="$out/slurm-%x-%A_%a.out" tools/slurm/bench_array.sbatch "$out" "$@")
merge=$(sbatch --parsable --dependency="afterok:${array%%;*}" --output="$out/slurm-%x-%j.out" \
  tools/slurm/bench_merge.sbatch "$out")
echo "array job ${array%%;*} ($n shards), merge job ${merge%%;*}; results in $out/merged"

#!/usr/bin/env bash
# Repeats the Slurm check on this machine (as root): brings up the single-node cluster
# (local_cluster.sh), runs a small `advbo bench` once in one process and once as SHARDS Slurm
# array tasks merged by a dependent job (submit_bench.sh), and compares the two record sets
# (compare_records.py: identical apart from timings) and tables. Writes everything to OUT_DIR.
#
#   bash tools/slurm/check_local.sh [SHARDS] [OUT_DIR]     defaults: 4 tools/results/slurm
set -euo pipefail
cd "$(dirname "$0")/../.."
shards="${1:-4}"
out="${2:-tools/results/slurm}"
opts=(--attacks square,random,bos2 -n 2 --budget 300 --seed 0)
[ -x build/advbo ] || bash tools/setup.sh
bash tools/slurm/local_cluster.sh > /dev/null
rm -rf "$out/single" "$out/sharded"
mkdir -p "$out"
start=$(date +%s)
build/advbo bench "${opts[@]}" --out-dir "$out/single" -q > /dev/null
single=$(($(date +%s) - start))
start=$(date +%s)
bash tools/slurm/submit_bench.sh "$shards" "$out/sharded" "${opts[@]}"
while squeue -h | grep -q .; do sleep 2; done
sharded=$(($(date +%s) - start))
[ -s "$out/sharded/merged/records.jsonl" ] || { echo "the merge job failed: see $out/sharded/slurm-*.out" >&2; exit 1; }
{
  echo "# advbo bench on a single-node Slurm cluster (tools/slurm/check_local.sh)"
  echo
  echo "Options: ${opts[*]}; $shards shards as a job array, merged by a dependent job."
  echo "Wall time: single process ${single} s, Slurm (submit to merged) ${sharded} s."
  echo
  echo '## Single process'
  echo '```'
  cat "$out/single/table.txt"
  echo '```'
  echo "## Slurm, $shards shards + merge"
  echo '```'
  cat "$out/sharded/merged/table.txt"
  echo '```'
  echo '## Records compared (compare_records.py)'
  echo '```'
  /usr/bin/python3 tools/slurm/compare_records.py "$out/single/records.jsonl" \
    "$out/sharded/merged/records.jsonl"
  echo '```'
} > "$out/report.md"
cat "$out/report.md"

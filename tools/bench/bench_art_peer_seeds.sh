#!/usr/bin/env bash
# advbo's HopSkipJump (L2) beside IBM ART's over several seeds per image (the check of
# advbo's median distance within 5 % of ART's at every budget). One seed per image
# leaves the medians at 100-500 queries within noise of each other (tools/results/art_peer_2500:
# 6-15 % apart, paired 0.97-1.01); pooling seeds shrinks that noise.
#
#   bash tools/bench/bench_art_peer_seeds.sh ART_DIR [N] [BUDGET] [SEEDS] [OUT_ROOT]
#
# ART_DIR: a checkout of ART's public code (tools/bench/art_peer.py). N test images from index
# 100 (default 100; misclassified ones skipped by both), BUDGET default 1000, SEEDS a
# comma-separated list (default 0,1,2,3,4), OUT_ROOT default tools/results/art_peer_seeds.
# Both sides run with one thread, side by side (one core each). ADVBO=path overrides build/advbo.
# Table: OUT_ROOT/table.md (tools/bench/art_peer_distance.py over all seeds).
set -euo pipefail
cd "$(dirname "$0")/../.."
art="${1:?usage: $0 ART_DIR [N] [BUDGET] [SEEDS] [OUT_ROOT]}"
n="${2:-100}"
budget="${3:-1000}"
seeds="${4:-0,1,2,3,4}"
root="${5:-tools/results/art_peer_seeds}"
ADVBO="${ADVBO:-build/advbo}"
[[ "$n" =~ ^[1-9][0-9]*$ ]] || { echo "$0: N '$n' must be a positive integer" >&2; exit 2; }
[[ "$seeds" =~ ^[0-9]+(,[0-9]+)*$ ]] ||
  { echo "$0: SEEDS '$seeds' must be a comma-separated list of integers" >&2; exit 2; }
indices=$(seq -s, 100 $((100 + n - 1)))
mkdir -p "$root"
run_advbo() {
  for s in ${seeds//,/ }; do
    "$ADVBO" bench --dataset cifar10 --untargeted --indices "$indices" --budget "$budget" \
      --seed "$s" --threads 1 --quiet --pixels float --feedback label --eps 0.0001 --norm l2 \
      --attacks hsja --out "$root/advbo_seed$s"
  done
}
run_art() {
  for s in ${seeds//,/ }; do
    /usr/bin/python3 tools/bench/art_peer.py --art "$art" --out "$root/art_seed$s" --n "$n" \
      --offset 100 --budget "$budget" --attacks hsja_l2 --threads 1 --seed "$s"
  done
}
run_advbo > "$root/advbo.log" 2>&1 &
advbo_pid=$!
run_art > "$root/art.log" 2>&1
wait "$advbo_pid"
ours="" theirs=""
for s in ${seeds//,/ }; do
  ours+="${ours:+,}$root/advbo_seed$s/records.jsonl"
  theirs+="${theirs:+,}$root/art_seed$s/label_l2/records.jsonl"
done
/usr/bin/python3 tools/bench/art_peer_distance.py "$ours" "$theirs" --budget "$budget" \
  --out "$root/table.md"

#!/usr/bin/env bash
# the wall time of `advbo evaluate` on models/cifar10_at.pt, the ways to use both
# cores side by side on the same images:
#   shards    two processes (--shard 1/2, 2/2), one LibTorch thread and one job at a time each
#             (--threads 1 --lockstep 1, with the frozen graph)
#   lockstep  one process, one worker group: LibTorch's default threads, --lockstep auto (8)
#             (--workers 1: one worker group)
#   default   one process, the defaults: two worker groups (--workers auto = 2 here) of
#             --lockstep auto lanes, one LibTorch thread per forward pass; the white-box
#             reference at LibTorch's default threads
# Each then combines its records (`evaluate merge` for the shards); they must agree image by
# image on the verdicts (the last float bits of the scores differ between B = 1 and B = 8).
#
#   bash tools/bench/bench_evaluate_speed.sh [N] [OUT] [ARMS]
#       default: the first 40 test images, tools/results/evaluate_speed, ARMS "shards lockstep
#       default"; the table compares the arms that ran, the first one as the base
# ADVBO=path overrides build/advbo.
set -euo pipefail
cd "$(dirname "$0")/../.."
n="${1:-40}"
out="${2:-tools/results/evaluate_speed}"
arms="${3:-shards lockstep default}"
ADVBO="${ADVBO:-build/advbo}"
common=(evaluate --dataset cifar10 --model models/cifar10_at.pt -n "$n" --seed 0 -q)
mkdir -p "$out"
: > "$out/walls.txt"
for arm in $arms; do
  rm -rf "${out:?}/$arm"
  t0=$(date +%s.%N)
  case "$arm" in
    shards)
      rm -rf "$out/shard1" "$out/shard2"
      "$ADVBO" "${common[@]}" --threads 1 --lockstep 1 --shard 1/2 -o "$out/shard1" > "$out/shard1.log" 2>&1 &
      p1=$!
      "$ADVBO" "${common[@]}" --threads 1 --lockstep 1 --shard 2/2 -o "$out/shard2" > "$out/shard2.log" 2>&1 &
      p2=$!
      wait $p1 $p2
      "$ADVBO" evaluate merge "$out/shard1" "$out/shard2" -o "$out/shards" > "$out/merge.log" 2>&1 ;;
    lockstep) "$ADVBO" "${common[@]}" --workers 1 -o "$out/lockstep" > "$out/lockstep.log" 2>&1 ;;
    default) "$ADVBO" "${common[@]}" -o "$out/default" > "$out/default.log" 2>&1 ;;
    *) echo "unknown arm $arm" >&2; exit 2 ;;
  esac
  t1=$(date +%s.%N)
  echo "$arm $(echo "$t1 - $t0" | bc)" >> "$out/walls.txt"
done
/usr/bin/python3 - "$out" "$n" <<'EOF'
import json, sys
out, n = sys.argv[1], int(sys.argv[2])
walls = dict((l.split()[0], float(l.split()[1])) for l in open(f"{out}/walls.txt"))
arms = list(walls)
names = {"shards": "2 shards × 1 thread, --lockstep 1",
         "lockstep": "1 process, --workers 1 (default threads, --lockstep auto)",
         "default": "1 process, the defaults (--workers auto, --lockstep auto)"}
def summary(d):
    return json.load(open(f"{out}/{d}/summary.json"))
def verdicts(d):
    return {r["image_index"]: (r["robust"], r["queries"])
            for r in map(json.loads, open(f"{out}/{d}/images.jsonl"))}
rows = [("wall s (whole command)",) + tuple(f"{walls[a]:.1f}" for a in arms),
        ("wall min",) + tuple(f"{walls[a] / 60:.1f}" for a in arms)]
for key in ("robust_accuracy", "reference_robust_accuracy", "combined_robust_accuracy",
            "queries_mean", "not_evaluated"):
    rows.append((key,) + tuple(json.dumps(summary(a).get(key)) for a in arms))
lines = [f"# `advbo evaluate` wall time, CIFAR-AT, first {n} test images", "",
         f"`bash tools/bench/bench_evaluate_speed.sh {n} OUT \"{' '.join(arms)}\"` (one run, this machine, 2 cores)", "",
         "| | " + " | ".join(names[a] for a in arms) + " |", "| --- |" + " ---: |" * len(arms)]
lines += ["| " + " | ".join(r) + " |" for r in rows]
base = verdicts(arms[0])
for a in arms[1:]:
    v = verdicts(a)
    differ = sum(base[i][0] != v.get(i, (None,))[0] for i in base)
    qdiffer = sum(base[i][1] != v.get(i, (None, None))[1] for i in base)
    lines += ["", f"{a} vs {arms[0]}: images whose black-box verdict differs: {differ} of {len(base)}; "
              f"whose query count differs: {qdiffer}."]
open(f"{out}/README.md", "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
EOF

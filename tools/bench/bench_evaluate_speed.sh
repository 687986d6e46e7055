#!/usr/bin/env bash
# Issue #56: the wall time of the default `advbo evaluate` on models/cifar10_at.pt, the two ways
# to use both cores side by side on the same images:
#   shards    two processes (--shard 1/2, 2/2), one LibTorch thread and one job at a time each
#             (--threads 1 --lockstep 1: issue #55's way, now with the frozen graph)
#   lockstep  one process, LibTorch's default threads, --lockstep 0 (auto: 8 lanes)
# Both then combine their records (`evaluate merge` for the shards) and must agree image by
# image on the verdicts (the last float bits of the scores differ between B = 1 and B = 8).
#
#   bash tools/bench/bench_evaluate_speed.sh [N] [OUT]    (default: the first 40 test images,
#                                                          tools/results/evaluate_speed)
# ADVBO=path overrides build/advbo.
set -euo pipefail
cd "$(dirname "$0")/../.."
n="${1:-40}"
out="${2:-tools/results/evaluate_speed}"
ADVBO="${ADVBO:-build/advbo}"
common=(evaluate --dataset cifar10 --model models/cifar10_at.pt -n "$n" --seed 0 -q)
rm -rf "$out/shards" "$out/shard1" "$out/shard2" "$out/lockstep"
mkdir -p "$out"
t0=$(date +%s.%N)
"$ADVBO" "${common[@]}" --threads 1 --lockstep 1 --shard 1/2 -o "$out/shard1" > "$out/shard1.log" 2>&1 &
p1=$!
"$ADVBO" "${common[@]}" --threads 1 --lockstep 1 --shard 2/2 -o "$out/shard2" > "$out/shard2.log" 2>&1 &
p2=$!
wait $p1 $p2
"$ADVBO" evaluate merge "$out/shard1" "$out/shard2" -o "$out/shards" > "$out/merge.log" 2>&1
t1=$(date +%s.%N)
"$ADVBO" "${common[@]}" -o "$out/lockstep" > "$out/lockstep.log" 2>&1
t2=$(date +%s.%N)
/usr/bin/python3 - "$out" "$n" "$(echo "$t1 - $t0" | bc)" "$(echo "$t2 - $t1" | bc)" <<'EOF'
import json, sys
out, n, wall_shards, wall_lockstep = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
def summary(d):
    return json.load(open(f"{out}/{d}/summary.json"))
def verdicts(d):
    return {r["image_index"]: (r["robust"], r["queries"])
            for r in map(json.loads, open(f"{out}/{d}/images.jsonl"))}
a, b = summary("shards"), summary("lockstep")
def get(s, *keys):
    for k in keys:
        if k in s:
            return s[k]
    return None
rows = [("wall s (whole command)", f"{wall_shards:.1f}", f"{wall_lockstep:.1f}")]
for key in ("robust_accuracy", "reference_robust_accuracy", "combined_robust_accuracy",
            "queries_mean", "not_evaluated"):
    rows.append((key, json.dumps(get(a, key)), json.dumps(get(b, key))))
lines = [f"# `advbo evaluate` wall time, CIFAR-AT, first {n} test images (issue #56)", "",
         "`bash tools/bench/bench_evaluate_speed.sh " + str(n) + "` (one run, this machine, 2 cores)", "",
         "| | 2 shards × 1 thread, --lockstep 1 | 1 process, default threads, --lockstep auto |",
         "| --- | ---: | ---: |"]
lines += [f"| {r[0]} | {r[1]} | {r[2]} |" for r in rows]
va, vb = verdicts("shards"), verdicts("lockstep")
differ = sum(va[i][0] != vb.get(i, (None,))[0] for i in va)
qdiffer = sum(va[i][1] != vb.get(i, (None, None))[1] for i in va)
lines += ["", f"Images whose black-box verdict differs: {differ} of {len(va)}; whose query count differs: {qdiffer}."]
open(f"{out}/README.md", "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
EOF

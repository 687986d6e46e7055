#!/usr/bin/env bash
# the frozen inference graph against the plain module, in one run.
#
#   bash tools/bench/bench_model_graph.sh [OUT]      (default tools/results/model_graph)
#
# 1. build/tools/bench_model_graph: forward milliseconds per image of the plain and the
#    frozen graph at batch 1 / 10 / 100, one thread (the least a query can cost here).
# 2. `advbo bench` Square (CIFAR-10 shipped model, first 20 images, eps 8/255, 500 queries, untargeted,
#    one thread) with --model-graph plain and frozen: the model time per query an attack
#    actually pays, and ASR / queries of the two graphs side by side (paired: same images,
#    seed and budget).
# ADVBO=path overrides build/advbo.
set -euo pipefail
cd "$(dirname "$0")/../.."
out="${1:-tools/results/model_graph}"
ADVBO="${ADVBO:-build/advbo}"
mkdir -p "$out"
build/tools/bench_model_graph --models models/cifar10_at.pt,models/cifar10_cw.pt,models/mnist_cw.pt \
  --batches 1,10,100 --threads 1 --reps 5 --images 200 --out "$out/forward.jsonl"
for g in plain frozen; do
  "$ADVBO" bench --dataset cifar10 --attacks square --untargeted -n 20 --budget 500 --eps 8/255 --seed 0 \
    --threads 1 -q --model-graph "$g" --out-dir "$out/square_cifar10_$g" > /dev/null
done
/usr/bin/python3 - "$out" <<'EOF'
import json, statistics, sys
out = sys.argv[1]
fw = [json.loads(l) for l in open(f"{out}/forward.jsonl")]
lines = ["# Frozen inference graph vs plain module", "",
         "Forward time, ms per image (best of 5 passes over 200 random images, 1 thread):", "",
         "| model | graph | batch 1 | batch 10 | batch 100 | max abs diff of raw outputs | same argmax |",
         "| --- | --- | ---: | ---: | ---: | ---: | --- |"]
for m in dict.fromkeys(r["model"] for r in fw):
    for g in ("plain", "frozen"):
        rs = {r["batch"]: r for r in fw if r["model"] == m and r["graph"] == g}
        any_r = next(iter(rs.values()))
        lines.append(f"| {m} | {g} | " + " | ".join(f"{rs[b]['best_ms_per_image']:.3f}" for b in (1, 10, 100))
                     + f" | {any_r['max_abs_diff_frozen_vs_plain']:.2e} | {any_r['same_argmax']} |")
lines += ["", "Square on the shipped CIFAR-10 model (models/cifar10_cw.pt), first 20 images, eps 8/255, 500 queries, untargeted, 1 thread (paired: same images and seed):", "",
          "| graph | ASR | mean queries | model ms per query | wall s per instance | instances whose verdict differs |",
          "| --- | ---: | ---: | ---: | ---: | ---: |"]
runs = {}
for g in ("plain", "frozen"):
    runs[g] = {(r["image_index"], r["target"]): r for r in map(json.loads, open(f"{out}/square_cifar10_{g}/records.jsonl"))}
for g in ("plain", "frozen"):
    rs = list(runs[g].values())
    q = sum(r["queries"] for r in rs)
    ms = 1000 * sum(r["model_seconds"] for r in rs) / q
    differ = sum(runs[g][k]["success"] != runs["plain"][k]["success"] for k in runs[g])
    lines.append(f"| {g} | {100*statistics.mean(r['success'] for r in rs):.1f} % | "
                 f"{statistics.mean(r['queries'] for r in rs):.1f} | {ms:.3f} | "
                 f"{statistics.mean(r['seconds'] for r in rs):.2f} | {differ} |")
open(f"{out}/README.md", "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
EOF

#!/usr/bin/env bash
# Instances in lockstep (--lockstep B) against one job at a time, and
# one LibTorch thread against both cores, side by side in one run on the same images and seeds.
#
#   bash tools/bench/bench_lockstep.sh [OUT]      (default tools/results/lockstep)
#
# 1. build/tools/bench_model_graph: the frozen graph's forward ms per image at batch 1 / 8 / 10,
#    1 and 2 intra-op threads (the limits a query can reach here).
# 2. `advbo bench` runs, each with --lockstep 1 and 8 and with --threads 1 and 2:
#    Square on the shipped CIFAR-10 and MNIST models (first 20 images, 500 queries,
#    untargeted; eps 8/255 and 0.06) and BOS^2 on MNIST (first 2 images x 9 targets, the
#    default budget). Wall time of the whole command, the model's forward time per image
#    (the lockstep summary line; for B = 1 the records' model_seconds), and the instances whose
#    verdict or query count differs from the B = 1, 1-thread run of the same attack.
# Partial results go to OUT/runs.jsonl as they finish; OUT/README.md is the table.
# ADVBO=path overrides build/advbo.
set -euo pipefail
cd "$(dirname "$0")/../.."
out="${1:-tools/results/lockstep}"
ADVBO="${ADVBO:-build/advbo}"
mkdir -p "$out"
for t in 1 2; do
  build/tools/bench_model_graph --models models/cifar10_cw.pt,models/mnist_cw.pt --batches 1,8,10 \
    --threads "$t" --reps 5 --images 200 --out "$out/forward_threads$t.jsonl"
done
ADVBO="$ADVBO" /usr/bin/python3 - "$out" <<'EOF'
import json, os, re, shutil, statistics, subprocess, sys, time
out = sys.argv[1]
advbo = os.environ["ADVBO"]
cases = {
    "square_cifar10": "bench --dataset cifar10 --attacks square --untargeted -n 20 --budget 500 --eps 8/255 --seed 0",
    "square_mnist": "bench --dataset mnist --attacks square --untargeted -n 20 --budget 500 --eps 0.06 --seed 0",
    "bos2_mnist": "bench --dataset mnist --attacks bos2 -n 2 --seed 0",
}
runs_path = f"{out}/runs.jsonl"
open(runs_path, "w").close()
runs = []
REPS = 3  # the arms interleaved, rep by rep: machine noise hits them alike
for rep in range(REPS):
  for case, cmd in cases.items():
    for threads in (1, 2):
        for lanes in (1, 8):
            d = f"{out}/{case}_t{threads}_b{lanes}"
            shutil.rmtree(d, ignore_errors=True)
            args = [advbo] + cmd.split() + ["--threads", str(threads), "--lockstep", str(lanes), "--out-dir", d]
            t0 = time.perf_counter()
            p = subprocess.run(args, capture_output=True, text=True, check=True)
            wall = time.perf_counter() - t0
            os.remove(f"{d}/curves.png")  # not kept: the table says it
            recs = [json.loads(l) for l in open(f"{d}/records.jsonl")]
            q = sum(r["queries"] for r in recs)
            m = re.search(r"model forward ([0-9.]+) s = ([0-9.]+) ms per image", p.stderr)
            pad = re.search(r"\(([0-9]+) % padding\)", p.stderr)
            fwd = float(m.group(1)) if m else sum(r["model_seconds"] for r in recs)
            run = {"case": case, "threads": threads, "lockstep": lanes, "rep": rep, "wall_s": wall,
                   "queries": q, "forward_s": fwd, "forward_ms_per_query": 1000 * fwd / q,
                   "padding_pct": int(pad.group(1)) if pad else 0,
                   "asr": statistics.mean(r["success"] for r in recs),
                   "command": "advbo " + " ".join(args[1:]).replace(d, "OUT")}
            runs.append(run)
            with open(runs_path, "a") as f:
                f.write(json.dumps(run) + "\n")
            print(rep, case, threads, lanes, f"{wall:.2f} s", file=sys.stderr)

def keyed(case, t, b):
    return {(r["attack"], r["image_index"], r["target"]): r
            for r in map(json.loads, open(f"{out}/{case}_t{t}_b{b}/records.jsonl"))}

fw = {}
for t in (1, 2):
    for r in map(json.loads, open(f"{out}/forward_threads{t}.jsonl")):
        if r["graph"] == "frozen":
            fw[(r["model"], t, r["batch"])] = r["best_ms_per_image"]
lines = ["# Instances in lockstep and both cores", "",
         "`bash tools/bench/bench_lockstep.sh` (one run, this machine: 2 cores). Frozen graph.", "",
         "Forward time of the frozen graph, ms per image (best of 5 passes over 200 random images):", "",
         "| model | threads | batch 1 | batch 8 | batch 10 |", "| --- | ---: | ---: | ---: | ---: |"]
for m in ("models/cifar10_cw.pt", "models/mnist_cw.pt"):
    for t in (1, 2):
        lines.append(f"| {m} | {t} | " + " | ".join(f"{fw[(m, t, b)]:.3f}" for b in (1, 8, 10)) + " |")
lines += ["", f"Attack runs, {REPS} repetitions with the arms interleaved (wall = the whole command, start-up "
          "and selection included: median and range; model ms per query = forward seconds / queries, "
          "padding included, median; differs = instances whose verdict or query count differs from the "
          "1-thread, lockstep-1 run -- records are identical across repetitions):", "",
          "| run | threads | lockstep | ASR | queries | wall s, median (min-max) | speed-up vs 1 thread, lockstep 1 (medians) | model ms per query | padding | differs |",
          "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
def arm(case, t, b):
    return [r for r in runs if r["case"] == case and r["threads"] == t and r["lockstep"] == b]
for case in cases:
    base = statistics.median(r["wall_s"] for r in arm(case, 1, 1))
    ref = keyed(case, 1, 1)
    for t in (1, 2):
        for b in (1, 8):
            rs = arm(case, t, b)
            walls = [r["wall_s"] for r in rs]
            other = keyed(case, t, b)
            differs = sum(other[k]["success"] != v["success"] or other[k]["queries"] != v["queries"]
                          for k, v in ref.items())
            r = rs[0]
            lines.append(f"| {case} | {t} | {b} | {100 * r['asr']:.1f} % | {r['queries']} | "
                         f"{statistics.median(walls):.2f} ({min(walls):.2f}-{max(walls):.2f}) | "
                         f"{base / statistics.median(walls):.2f}x | "
                         f"{statistics.median(x['forward_ms_per_query'] for x in rs):.3f} | "
                         f"{r['padding_pct']} % | {differs} / {len(ref)} |")
lines += ["", "Commands (OUT = the run's folder):", ""]
lines += [f"- `{r['command']}`" for r in runs if r["rep"] == 0]
open(f"{out}/README.md", "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
EOF

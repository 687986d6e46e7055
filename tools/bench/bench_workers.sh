#!/usr/bin/env bash
# the two ways to use both cores, side by side in one run on the same images
# and seeds: one group of B lanes whose forward passes use LibTorch's intra-op threads (2 here;
# `--workers 1`, the default before worker groups) against two worker groups of B lanes, each
# group's forward passes at one LibTorch thread (`--workers 2`).
#
#   bash tools/bench/bench_workers.sh [OUT]      (default tools/results/workers)
#
# Cases: Square on the shipped CIFAR-10 model (first 40 images, 500 queries, eps 8/255,
# lockstep 8), Square on MNIST (first 40 images, 500 queries, eps 0.06, lockstep 1), BOS^2 on
# MNIST (first 2 images x 9 targets, lockstep 1) and BOS^2 on CIFAR-10 (first image x 9
# targets, lockstep 8); 3 repetitions with the arms interleaved. Wall time of the whole command
# (start-up included) and the instances whose record differs from the one-group arm (timing
# and `workers` fields aside). Partial results go to OUT/runs.jsonl; OUT/README.md is the table.
# ADVBO=path overrides build/advbo.
set -euo pipefail
cd "$(dirname "$0")/../.."
out="${1:-tools/results/workers}"
ADVBO="${ADVBO:-build/advbo}"
mkdir -p "$out"
ADVBO="$ADVBO" /usr/bin/python3 - "$out" <<'EOF'
import json, os, shutil, statistics, subprocess, sys, time
out = sys.argv[1]
advbo = os.environ["ADVBO"]
cases = {
    "square_cifar10": "bench --dataset cifar10 --attacks square --untargeted -n 40 --budget 500 --eps 8/255 --seed 0 --lockstep 8",
    "square_mnist": "bench --dataset mnist --attacks square --untargeted -n 40 --budget 500 --eps 0.06 --seed 0 --lockstep 1",
    "bos2_mnist": "bench --dataset mnist --attacks bos2 -n 2 --seed 0 --lockstep 1",
    "bos2_cifar10": "bench --dataset cifar10 --attacks bos2 -n 1 --seed 0 --lockstep 8",
}
runs_path = f"{out}/runs.jsonl"
open(runs_path, "w").close()
runs = []
REPS = 3
def strip(r):
    return {k: v for k, v in r.items() if "seconds" not in k and k != "workers"}
for rep in range(REPS):
    for case, cmd in cases.items():
        for workers in (1, 2):
            d = f"{out}/{case}_w{workers}"
            shutil.rmtree(d, ignore_errors=True)
            args = [advbo] + cmd.split() + ["--workers", str(workers), "-q", "-o", d]
            t0 = time.perf_counter()
            p = subprocess.run(args, capture_output=True, text=True, check=True)
            wall = time.perf_counter() - t0
            os.remove(f"{d}/curves.png")
            recs = [json.loads(l) for l in open(f"{d}/records.jsonl")]
            run = {"case": case, "workers": workers, "rep": rep, "wall_s": wall,
                   "queries": sum(r["queries"] for r in recs),
                   "asr": statistics.mean(r["success"] for r in recs), "instances": len(recs),
                   "command": "advbo " + " ".join(args[1:]).replace(d, "OUT")}
            runs.append(run)
            with open(runs_path, "a") as f:
                f.write(json.dumps(run) + "\n")
            print(rep, case, workers, f"{wall:.2f} s", file=sys.stderr)

def keyed(case, w):
    return {(r["attack"], r["image_index"], r["target"]): strip(r)
            for r in map(json.loads, open(f"{out}/{case}_w{w}/records.jsonl"))}
lines = ["# Both cores: one group with intra-op threads vs two worker groups", "",
         "`bash tools/bench/bench_workers.sh` (one run, this machine: 2 cores, frozen graph, "
         f"{REPS} repetitions with the arms interleaved; wall = the whole command, start-up included, "
         "median and range; paired = the median of the per-repetition ratios)", "",
         "| case | lockstep | instances | ASR | queries | `--workers 1` wall s | `--workers 2` wall s | speed-up (paired median) | records differing |",
         "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
for case, cmd in cases.items():
    a = sorted((r for r in runs if r["case"] == case and r["workers"] == 1), key=lambda r: r["rep"])
    b = sorted((r for r in runs if r["case"] == case and r["workers"] == 2), key=lambda r: r["rep"])
    wa, wb = [r["wall_s"] for r in a], [r["wall_s"] for r in b]
    ratio = statistics.median(x / y for x, y in zip(wa, wb))
    ka, kb = keyed(case, 1), keyed(case, 2)
    differ = sum(ka[k] != kb.get(k) for k in ka)
    lanes = cmd.split("--lockstep ")[1].split()[0]
    lines.append(f"| {case} | {lanes} | {a[0]['instances']} | {100 * a[0]['asr']:.1f} % | {a[0]['queries']} | "
                 f"{statistics.median(wa):.2f} ({min(wa):.2f}-{max(wa):.2f}) | "
                 f"{statistics.median(wb):.2f} ({min(wb):.2f}-{max(wb):.2f}) | {ratio:.2f}x | {differ} / {len(ka)} |")
lines += ["", "Commands (OUT = the run's folder):", ""]
lines += [f"- `{r['command']}`" for r in runs if r["rep"] == 0]
open(f"{out}/README.md", "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
EOF

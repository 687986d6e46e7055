#!/usr/bin/python3
"""Simple regret of `advbo bo` on the built-in test functions, over many seeds.

For every (function, acquisition) pair runs `build/advbo bo -f FUNCTION --acq ACQ --budget B
--seed S -q -o TRACE` for seeds 1..N and reports the number of seeds that reached simple
regret < 0.01, and the median / worst simple regret after B evaluations.

Writes tools/results/bo_regret.jsonl (one line per run) and tools/results/bo_regret.md.
Usage: tools/bench/bench_bo.py [--functions branin,hartmann3,...] [--acqs ei,ucb,ts] [--seeds 20]
                         [--budget 40]
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--functions", default="branin")
    ap.add_argument("--acqs", default="ei,ucb,ts")
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--budget", type=int, default=40)
    ap.add_argument("--out-prefix", default=os.path.join(ROOT, "tools", "results", "bo_regret"))
    args = ap.parse_args()
    binary = os.path.join(ROOT, "build", "advbo")
    rows, table = [], []
    with tempfile.TemporaryDirectory() as tmp, open(args.out_prefix + ".jsonl", "w") as out:
        for fn in args.functions.split(","):
            for acq in args.acqs.split(","):
                regrets, secs = [], []
                for seed in range(1, args.seeds + 1):
                    trace = os.path.join(tmp, "t.jsonl")
                    cmd = [binary, "bo", "-f", fn, "--acq", acq, "--budget", str(args.budget),
                           "--seed", str(seed), "-q", "-o", trace]
                    subprocess.run(cmd, check=True, capture_output=True)
                    with open(trace) as f:
                        summary = [json.loads(l) for l in f][-1]
                    row = {"function": fn, "acq": acq, "budget": args.budget, "seed": seed,
                           "simple_regret": summary["simple_regret"], "best_y": summary["best_y"],
                           "seconds_bo": summary["seconds_bo"], "command": " ".join(cmd[1:-2])}
                    out.write(json.dumps(row) + "\n")
                    regrets.append(summary["simple_regret"])
                    secs.append(summary["seconds_bo"])
                solved = sum(r < 0.01 for r in regrets)
                line = (f"| {fn} | {acq} | {args.budget} | {solved}/{len(regrets)} | "
                        f"{statistics.median(regrets):.2e} | {max(regrets):.2e} | "
                        f"{statistics.mean(secs) / args.budget * 1000:.1f} |")
                print(line, flush=True)
                table.append(line)
    with open(args.out_prefix + ".md", "w") as f:
        f.write("| function | acquisition | evaluations | seeds with regret < 0.01 | median regret | "
                "worst regret | BO ms per evaluation |\n|---|---|---|---|---|---|---|\n")
        f.write("\n".join(table) + "\n")


if __name__ == "__main__":
    main()

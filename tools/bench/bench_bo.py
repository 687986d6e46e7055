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
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools"))  # tools/report_util.py
from report_util import open_text  # noqa: E402


HEADER = ("| function | acquisition | evaluations | seeds with regret < 0.01 | median regret | "
          "worst regret | BO ms per evaluation |\n|---|---|---|---|---|---|---|")


def row_line(fn, acq, budget, regrets, secs):
    solved = sum(r < 0.01 for r in regrets)
    return (f"| {fn} | {acq} | {budget} | {solved}/{len(regrets)} | "
            f"{statistics.median(regrets):.2e} | {max(regrets):.2e} | "
            f"{statistics.mean(secs) / budget * 1000:.1f} |")


def print_table(path):
    """--table: the table of a committed run's records (plain or .jsonl.gz), in run order."""
    groups = {}
    with open_text(path) as f:
        for line in f:
            r = json.loads(line)
            g = groups.setdefault((r["function"], r["acq"], r["budget"]), ([], []))
            g[0].append(r["simple_regret"])
            g[1].append(r["seconds_bo"])
    print(HEADER)
    for (fn, acq, budget), (regrets, secs) in groups.items():
        print(row_line(fn, acq, budget, regrets, secs))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--table", metavar="RECORDS", help="print the table of these records and exit")
    ap.add_argument("--functions", default="branin")
    ap.add_argument("--acqs", default="ei,ucb,ts")
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--budget", type=int, default=40)
    ap.add_argument("--out-prefix", default=os.path.join(ROOT, "tools", "results", "bo_regret"))
    args = ap.parse_args()
    if args.table:
        return print_table(args.table)
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
                line = row_line(fn, acq, args.budget, regrets, secs)
                print(line, flush=True)
                table.append(line)
    with open(args.out_prefix + ".md", "w") as f:
        f.write(HEADER + "\n" + "\n".join(table) + "\n")


if __name__ == "__main__":
    main()

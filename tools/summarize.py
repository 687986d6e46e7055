#!/usr/bin/env python3
"""Recompute the summary of `advbo attack` JSONL records (stdlib only).

Usage: python3 tools/summarize.py RESULTS.jsonl [...]
Prints instances, ASR, max/mean/median queries over successes, mean queries with failures
counted at the budget, seconds per instance and the model/BO time split, and the
instances that failed.
"""
import json
import statistics
import sys


def main(paths):
    recs = []
    for p in paths:
        with open(p) as f:
            recs += [json.loads(line) for line in f if line.strip()]
    if not recs:
        sys.exit("no records")
    ok = [r for r in recs if r["success"]]
    q = [r["queries"] for r in ok]
    secs = sum(r["seconds"] for r in recs)
    model = sum(r["model_seconds"] for r in recs)
    print(f"instances                  {len(recs)}")
    print(f"ASR                        {100 * len(ok) / len(recs):.1f} % ({len(ok)}/{len(recs)})")
    if q:
        print(f"queries max/mean/median    {max(q)} / {statistics.mean(q):.1f} / {statistics.median(q):.1f}")
    print("mean queries (fail=budget) "
          f"{statistics.mean(r['queries'] if r['success'] else r['budget'] for r in recs):.1f}")
    print(f"seconds per instance       {secs / len(recs):.2f} s (model {model / len(recs):.2f} s = "
          f"{100 * model / secs:.1f} %, BO {(secs - model) / len(recs):.2f} s)")
    stops = sum(l["stopped_early"] for r in recs for l in r["loops"])
    loops = sum(len(r["loops"]) for r in recs)
    print(f"perturbation loops         {loops} ({stops} ended by Bayesian optimal stopping)")
    for r in recs:
        if not r["success"]:
            print(f"failed: image {r['image_index']} ({r['true_class']} -> {r['target']}), "
                  f"best objective {r['final_objective']:.3f}")


if __name__ == "__main__":
    main(sys.argv[1:])

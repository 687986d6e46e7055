#!/usr/bin/env python3
"""Print the summary of advbo runs (stdlib only).

Usage: python3 tools/summarize.py PATH [...]
PATH is an `advbo attack` records file (run.jsonl: its summary is run.summary.json beside it),
that summary itself, or a `bench` / `evaluate` output folder (its summary.json). advbo computes
every summary once (experiment::SummarizeRecords); this script prints it: instances,
ASR, max/mean/median queries over successes, mean queries with failures counted at the budget,
seconds per instance and the model's share, BOS^2's perturbation loops when there are any, and
the instances that failed (from the records, when a records file is given).
A records file without a summary beside it (runs made by older versions) is
summarised here from its records with the same definitions.
"""
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report_util import open_text  # noqa: E402


def records_of(path):
    with open_text(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def summarize(recs):
    """The fields of experiment::SummarizeRecords, for records without a summary file."""
    ok = [r for r in recs if r["success"]]
    q = [r["queries"] for r in ok]
    secs = sum(r["seconds"] for r in recs)
    model = sum(r["model_seconds"] for r in recs)
    checked = [r for r in recs if isinstance(r.get("quantized_success"), bool)]
    ok8 = sum(1 for r in checked if r["success"] and r["quantized_success"])
    s = {"instances": len(recs), "successes": len(ok), "asr": 100 * len(ok) / len(recs),
         "successes_8bit": ok8 if len(checked) == len(recs) else None,
         "asr_8bit": 100 * ok8 / len(recs) if len(checked) == len(recs) else None,
         "max_queries": max(q) if q else None,
         "mean_queries": statistics.mean(q) if q else None,
         "median_queries": statistics.median(q) if q else None,
         "mean_queries_fail_at_budget": statistics.mean(
             r["queries"] if r["success"] else r["budget"] for r in recs),
         "seconds_per_instance": secs / len(recs),
         "model_fraction": model / secs if secs > 0 else 0.0}
    loops = [l for r in recs for l in r.get("loops") or []]
    if any("loops" in r for r in recs):
        s["perturbation_loops"] = len(loops)
        s["loops_stopped_early"] = sum(1 for l in loops if l.get("stopped_early"))
    return s


def fmt(v, digits):
    return "-" if v is None else f"{v:.{digits}f}"


def show(name, s):
    print(f"{name}")
    print(f"  instances                  {s['instances']}")
    print(f"  ASR                        {s['asr']:.1f} % ({s['successes']}/{s['instances']})")
    if s.get("asr_8bit") is not None:
        print(f"  8-bit ASR                  {s['asr_8bit']:.1f} % ({s['successes_8bit']}/"
              f"{s['instances']}; the saved 8-bit image re-queried)")
    print(f"  queries max/mean/median    {fmt(s['max_queries'], 0)} / {fmt(s['mean_queries'], 1)} / "
          f"{fmt(s['median_queries'], 1)}")
    print(f"  mean queries (fail=budget) {s['mean_queries_fail_at_budget']:.1f}")
    spi, frac = s["seconds_per_instance"], s["model_fraction"]
    print(f"  seconds per instance       {spi:.2f} s (model {spi * frac:.2f} s = {100 * frac:.1f} %, "
          f"BO {spi * (1 - frac):.2f} s)")
    if "perturbation_loops" in s:
        print(f"  perturbation loops         {s['perturbation_loops']} ({s['loops_stopped_early']} "
              "ended by Bayesian optimal stopping)")


def main(paths):
    if not paths:
        sys.exit(__doc__)
    for p in paths:
        if os.path.isdir(p):
            summary = json.load(open(os.path.join(p, "summary.json")))
            if isinstance(summary, list):  # bench: one entry per attack
                for s in summary:
                    show(f"{p}: {s['attack']}", s)
            else:  # evaluate: its members' summaries
                for name, s in summary.get("attacks", {}).items():
                    show(f"{p}: {name}", s)
            continue
        if p.endswith(".summary.json"):
            s = json.load(open(p))
            show(f"{p}: {s['attack']}", s)
            continue
        recs = records_of(p)
        if not recs:
            sys.exit(f"{p}: no records")
        stem = p[:-len(".gz")] if p.endswith(".gz") else p
        beside = (stem[:-len(".jsonl")] if stem.endswith(".jsonl") else stem) + ".summary.json"
        s = json.load(open(beside)) if os.path.exists(beside) else summarize(recs)
        show(f"{p}: {recs[0].get('attack', '?')}", s)
        for r in recs:
            if not r["success"]:
                print(f"  failed: image {r['image_index']} ({r['true_class']} -> {r['target']}), "
                      f"best objective {r.get('final_objective', float('nan')):.3f}")


if __name__ == "__main__":
    main(sys.argv[1:])

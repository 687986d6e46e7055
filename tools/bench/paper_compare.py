#!/usr/bin/env python3
"""Markdown table of an `advbo bench` run next to the BOS^2 paper's figures
(Kharkovskii 2020 thesis, Tables 5.1-5.4), with the time split per attack.

Usage: python3 tools/bench/paper_compare.py RECORDS.jsonl {mnist|cifar10}

The success and query columns come from the bench's summary.json beside RECORDS (advbo's one
record summary, experiment::SummarizeRecords); the records give the model/BO split
per query, BOS^2's median after its initial queries and, for the BO attacks, the wall time of
the whole row. Columns: ASR, 8-bit ASR (the reported image rounded onto the grid inside the ball and
re-queried), max / mean / median queries over successes, mean queries with failures
at the budget, seconds per instance (model share), ms per query in the model and outside it,
and -- when tools/bench/reachability.py wrote reachability.jsonl next to RECORDS -- the failures it
labelled search-limited / unreachable ("–" for attacks it did not diagnose).
"""
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/report_util.py
from report_util import read_records, records_path  # noqa: E402

# Thesis Tables 5.1-5.4: ASR %, max, mean, median over successes (ZOO/AutoZOOM: first success).
PAPER = {
    "mnist": {"bos2": (99, 897, 108.75, 63), "bos2-nostop": (99, 895, 133.34, 88),
              "bayesopt": (98, 817, 116.99, 79), "genattack": (64, 881, 428.66, 396),
              "zoo": (1, 95, 65.88, 67), "autozoom": (1, 77, 72.5, 72.5)},
    "cifar10": {"bos2": (84, 877, 253.5, 164.5), "bos2-nostop": (83, 896, 248.03, 181),
                "bayesopt": (79, 883, 247.49, 176.5), "genattack": (64, 891, 410.7, 386),
                "zoo": (20, 452, 142.28, 104), "autozoom": (1, 176, 169.5, 169.5)},
}
ORDER = ["bos2", "bos2-nostop", "bayesopt", "genattack", "zoo", "autozoom", "square",
         "parsimonious", "random"]


def main():
    if len(sys.argv) != 3 or sys.argv[2] not in PAPER:
        sys.exit(__doc__)
    recs = list(read_records(sys.argv[1], "paper_compare"))
    by = {}
    for r in recs:
        by.setdefault(r["attack"], []).append(r)
    with open(os.path.join(os.path.dirname(sys.argv[1]) or ".", "summary.json")) as f:
        summaries = {e["attack"]: e for e in json.load(f)}
    paper = PAPER[sys.argv[2]]
    reach = {}  # attack -> [search-limited, unreachable]
    reach_path = records_path(os.path.join(os.path.dirname(sys.argv[1]), "reachability.jsonl"))
    if os.path.exists(reach_path):
        for d in read_records(reach_path, "paper_compare"):
            reach.setdefault(d["attack"], [0, 0])[d["label"] == "unreachable"] += 1
    print("| attack | instances | ASR % | 8-bit ASR % | max / mean / median queries | median − 30 initial "
          "| mean queries (fail = T) | s / instance (model %) | ms / query model · BO "
          "| BO ÷ model | failures search-limited / unreachable | paper ASR % · max / mean / median |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for a in sorted(by, key=lambda k: (ORDER.index(k) if k in ORDER else
                                       ORDER.index(k.split(":")[0]) + 0.5
                                       if k.split(":")[0] in ORDER else 99, k)):
        rs, s = by[a], summaries[a]
        n = s["instances"]
        succ = [r["queries"] for r in rs if r["success"]]
        asr = s["asr"]
        # 8-bit ASR: the reported image rounded onto the grid inside the ball and re-queried
        # (equal to the ASR with --pixels 8bit; not defined under rescale_compat).
        asr8 = f"{s['asr_8bit']:.1f}" if s.get("asr_8bit") is not None else "–"
        allq = s["mean_queries_fail_at_budget"]
        secs = s["seconds_per_instance"] * n
        model = secs * s["model_fraction"]
        used = sum(r["queries_used"] for r in rs)
        q = (f"{s['max_queries']:g} / {s['mean_queries']:.2f} / {s['median_queries']:g}"
             if s["successes"] else "– / – / –")
        p = paper.get(a.split(":")[0] if a.endswith("preset=thesis") else a)
        ptxt = f"{p[0]} · {p[1]} / {p[2]} / {p[3]}" if p else "–"
        # BOS^2 Alg. 5 resets t after its 30 initial queries; the thesis may not count them.
        after = (f"{statistics.median(max(0, x - 30) for x in succ):g}"
                 if succ and a.startswith("bos2") else "–")
        print(f"| {a} | {n} | {asr:.1f} | {asr8} | {q} | {after} | {allq:.1f} | "
              f"{secs / n:.2f} ({100 * model / secs:.0f} %) "
              f"| {1000 * model / used:.2f} · {1000 * (secs - model) / used:.2f} "
              f"| {(secs - model) / model:.1f} | "
              f"{' / '.join(map(str, reach[a])) if a in reach else '–'} | {ptxt} |")
    for a in ("bos2", "bos2-nostop", "bayesopt"):
        if a in by:
            s = sum(r["seconds"] for r in by[a])
            print(f"\n{a}: whole row {s / 60:.1f} CPU-minutes ({s / 120:.1f} min wall on 2 cores in "
                  f"parallel shards)", end="")
    print()


if __name__ == "__main__":
    main()

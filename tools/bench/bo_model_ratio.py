#!/usr/bin/python3
"""BO time per query against the model's forward time, from `advbo bench` records.

Pools the records of every file given (e.g. repetitions of the same speed run) per
(dataset, attack) and prints a Markdown table: queries, model and BO milliseconds per query
(total seconds over total queries used), their ratio, the range of the ratio over the files
(each file is one repetition), and the BO time by phase (the records' bo_phase_seconds).

  /usr/bin/python3 tools/bench/bo_model_ratio.py speed_*.jsonl [--json OUT]
  /usr/bin/python3 tools/bench/bo_model_ratio.py BEFORE.jsonl:before AFTER.jsonl:after --per-file

With --per-file every file is its own row (its attack followed by the file's LABEL, or its
path), e.g. two builds side by side.

Exits with status 2 naming the file if a record lacks bo_seconds / model_seconds /
queries_used (an attack without a BO loop, or a file that is not bench records).
"""
import argparse
import collections
import json
import sys
import os

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/report_util.py
from report_util import open_text  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("records", nargs="+", help="records.jsonl files of `advbo bench`")
    ap.add_argument("--json", help="also write the table as JSON to this file")
    ap.add_argument("--per-file", action="store_true",
                    help="one row per file (FILE:LABEL names it) instead of pooling them")
    args = ap.parse_args()
    total = collections.defaultdict(lambda: collections.Counter())
    phases = collections.defaultdict(lambda: collections.Counter())
    per_file = collections.defaultdict(list)  # key -> [ratio per file]
    for spec in args.records:
        path, _, label = spec.partition(":") if args.per_file else (spec, "", "")
        file_sum = collections.defaultdict(lambda: collections.Counter())
        with open_text(path) as f:
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                r = json.loads(line)
                try:
                    key = (r["dataset"], r["attack"], (label or path) if args.per_file else "")
                    c = {"q": r["queries_used"], "bo": r["bo_seconds"], "model": r["model_seconds"]}
                except KeyError as e:
                    print(f"bo_model_ratio: {path}:{n}: record has no {e} (not BO bench records?)",
                          file=sys.stderr)
                    sys.exit(2)
                total[key].update(c)
                file_sum[key].update(c)
                phases[key].update(r.get("bo_phase_seconds", {}))
        for key, c in file_sum.items():
            if c["model"] > 0:
                per_file[key].append(c["bo"] / c["model"])
    rows = []
    print("| dataset | attack | files | queries | model ms / query | BO ms / query | BO ÷ model |"
          " range over files | BO ms / query by phase |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | --- | --- |")
    for key in list(total) if args.per_file else sorted(total):  # per file: in file order
        c = total[key]
        q = max(c["q"], 1)
        ratio = c["bo"] / c["model"] if c["model"] > 0 else float("nan")
        ph = {k: 1000 * v / q for k, v in phases[key].most_common()}
        rs = per_file[key]
        name = f"`{key[1]}`" + (f" ({key[2]})" if key[2] else "")
        rows.append({"dataset": key[0], "attack": key[1], "files": len(rs), "queries": c["q"],
                     "model_ms_per_query": 1000 * c["model"] / q,
                     "bo_ms_per_query": 1000 * c["bo"] / q, "bo_over_model": ratio,
                     "ratio_min": min(rs), "ratio_max": max(rs), "phase_ms_per_query": ph,
                     **({"file": key[2]} if key[2] else {})})
        print(f"| {key[0]} | {name} | {len(rs)} | {c['q']} | {1000 * c['model'] / q:.2f} | "
              f"{1000 * c['bo'] / q:.2f} | **{ratio:.2f}** | {min(rs):.2f}–{max(rs):.2f} | "
              + ", ".join(f"{k} {v:.2f}" for k, v in ph.items() if v >= 0.005) + " |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()

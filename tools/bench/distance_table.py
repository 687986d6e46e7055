#!/usr/bin/env python3
"""Tables of tools/bench/bench_distance.sh: per run (dataset, norm, budget) and
attack, the success rate at eps, the median (mean) distance of the closest adversarial query
within 100 / 250 / 500 / 1,000 / ... queries (advbo's summary.json), the share of bad queries
(Blacklight, flag mode) and, paired on the same images, on how many images each attack ends
closer than the reference attack (REF, default bo-hl where it ran, else hsja; targeted runs
pair on image and target) and the paired
ratio of the final distances (geometric mean of distance / reference's over the images both
reached, with the standard error of the mean log ratio). Stdlib only.

    /usr/bin/python3 tools/bench/distance_table.py [ROOT] [--markdown FILE]
"""
import argparse
import json
import math
import os
import pathlib
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/
from report_util import mean_se, open_text  # noqa: E402


def fmt(x, nd=3):
    return "–" if x is None else f"{x:.{nd}f}"


def table(run):
    summary = json.loads((run / "summary.json").read_text())
    records = [json.loads(line) for line in open_text(run / "records.jsonl").read().splitlines()
               if line.strip()]
    first = records[0]
    checkpoints = sorted({int(k) for s in summary for k in s.get("distance_at", {})})
    final = {}
    for r in records:
        final.setdefault(r["attack"], {})[(r["image_index"], r.get("target"))] = (
            r["distance"] if r["distance"] is not None else float("inf"))
    ref = "bo-hl" if "bo-hl" in final else "hsja"
    norm = "L2" if first["norm"] == "l2" else "L∞"
    images = len({r["image_index"] for r in records})
    instances = len({(r["image_index"], r.get("target")) for r in records})
    goal = (f"targeted, {images} images x every other class = {instances} instances"
            if first.get("target") is not None else f"{images} images")
    head = (f"**{first['dataset']}, {norm}, eps {first['epsilon']:g}, budget {first['budget']}, "
            f"{goal}** (`{run.name}`)\n\n")
    cols = ["attack", f"ASR at eps"] + [f"{norm} at {q}" for q in checkpoints] + [
        "found", "bad queries", f"closer than {ref} at the end (paired)",
        f"end distance / {ref}'s (paired, ± SE)"]
    lines = ["| " + " | ".join(cols) + " |", "|" + " --- |" * len(cols)]
    for s in summary:
        a = s["attack"]
        cells = [a, f"{s['asr']:.1f} %"]
        for q in checkpoints:
            d = s.get("distance_at", {}).get(str(q))
            cells.append("–" if d is None else f"{fmt(d['median'])} ({fmt(d['mean'])})")
        found = sum(d < math.inf for d in final.get(a, {}).values())
        cells.append(f"{found} of {len(final.get(a, {}))}")
        share = s.get("bad_query_share")
        cells.append("–" if share is None else f"{100 * share:.1f} %")
        if a == ref:
            cells += ["(reference)", "(reference)"]
        else:
            both = [i for i in final.get(a, {}) if i in final.get(ref, {})]
            closer = sum(final[a][i] < final[ref][i] for i in both)
            cells.append(f"{closer} of {len(both)}")  # instances
            logs = [math.log(final[a][i] / final[ref][i]) for i in both
                    if 0 < final[a][i] < math.inf and 0 < final[ref][i] < math.inf]
            if len(logs) > 1:
                m, se = mean_se(logs)
                cells.append(f"{math.exp(m):.3f} (log ± {se:.3f})")
            else:
                cells.append("–")
        lines.append("| " + " | ".join(cells) + " |")
    return head + "\n".join(lines) + "\n\nCells: median (mean) distance of the closest " \
        "adversarial query within that many queries; the median counts an instance with none " \
        "yet as infinitely far, the mean is over the instances with one (\"found\" at the end), " \
        "so compare means only where the found counts agree, and otherwise the paired columns.\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("root", nargs="?", default="tools/results/distance")
    ap.add_argument("--markdown")
    ap.add_argument("--runs", help="comma-separated run folders under ROOT (default: all)")
    a = ap.parse_args()
    runs = sorted(p.parent for p in pathlib.Path(a.root).glob("*/summary.json"))
    if a.runs:
        want = a.runs.split(",")
        missing = [w for w in want if w not in {r.name for r in runs}]
        if missing:
            sys.exit(f"distance_table: {a.root}: no run {', '.join(missing)}")
        runs = [r for w in want for r in runs if r.name == w]
    text = "\n".join(table(r) for r in runs)
    print(text)
    if a.markdown:
        pathlib.Path(a.markdown).write_text(text)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Median distance of the closest adversarial query at each query count, advbo beside IBM ART
(issue #59's check of issue #40: advbo's HopSkipJump within 5 % of ART's at every budget), from
the records of tools/bench/bench_art_peer.sh or any run pair with distance_trace ([query,
distance] at each improvement): per checkpoint, the median over images of each side, advbo's
median over ART's, and the paired geometric-mean ratio over the images both reached (with the
standard error of the mean log ratio). Stdlib only.

    /usr/bin/python3 tools/bench/art_peer_distance.py ADVBO.jsonl ART.jsonl [--budget B]
        [--out FILE.md]
"""
import argparse
import json
import math
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/
from report_util import mean_se  # noqa: E402


def distances(path, checkpoints):
    """image index -> [closest distance within q queries for q in checkpoints] (inf before)."""
    out = {}
    with open(path) as f:
        for line in f:
            if not line.strip():
                continue
            r = json.loads(line)
            trace = r.get("distance_trace") or []
            row = []
            for q in checkpoints:
                within = [d for n, d in trace if n <= q]
                row.append(min(within) if within else math.inf)
            out[r["image_index"]] = row
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("advbo")
    ap.add_argument("art")
    ap.add_argument("--budget", type=int, default=5000)
    ap.add_argument("--out")
    a = ap.parse_args()
    checkpoints = [q for q in (100, 250, 500, 1000, 2500, 5000, 10000) if q <= a.budget]
    ours, theirs = distances(a.advbo, checkpoints), distances(a.art, checkpoints)
    both = sorted(set(ours) & set(theirs))
    if not both:
        raise SystemExit("no image in both record files")
    lines = [f"{len(both)} images in both runs; median L2 distance of the closest adversarial "
             "query within that many queries\n",
             "| queries | advbo | ART | advbo / ART (medians) | paired ratio (log ± SE) |",
             "| --- | --- | --- | --- | --- |"]
    for k, q in enumerate(checkpoints):
        mo = statistics.median(ours[i][k] for i in both)
        mt = statistics.median(theirs[i][k] for i in both)
        logs = [math.log(ours[i][k] / theirs[i][k]) for i in both
                if 0 < ours[i][k] < math.inf and 0 < theirs[i][k] < math.inf]
        paired = "–"
        if len(logs) > 1:
            m, se = mean_se(logs)
            paired = f"{math.exp(m):.3f} (± {se:.3f})"
        lines.append(f"| {q} | {mo:.4g} | {mt:.4g} | {mo / mt:.3f} | {paired} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()

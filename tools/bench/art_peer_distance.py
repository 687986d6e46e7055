#!/usr/bin/env python3
"""Median distance of the closest adversarial query at each query count, advbo beside IBM ART
(the check that advbo's HopSkipJump is within 5 % of ART's at every budget), from
the records of tools/bench/bench_art_peer.sh or any run pair with distance_trace ([query,
distance] at each improvement): per checkpoint, the median over images of each side, advbo's
median over ART's, and the paired geometric-mean ratio over the images both reached (with the
standard error of the mean log ratio). Stdlib only.

Each side may be a comma-separated list of record files, one per seed
(tools/bench/bench_art_peer_seeds.sh): the medians then pool every (image, seed) run, and the
paired ratio compares, per image, the mean log distance over that side's seeds.

    /usr/bin/python3 tools/bench/art_peer_distance.py ADVBO.jsonl[,...] ART.jsonl[,...]
        [--budget B] [--out FILE.md]
"""
import argparse
import json
import math
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/
from report_util import mean_se, open_text  # noqa: E402


def distances(paths, checkpoints):
    """image index -> one row per record file (seed) in `paths` (comma-separated), each row
    [closest distance within q queries for q in checkpoints] (inf before the first)."""
    out = {}
    for path in paths.split(","):
        seen = set()
        with open_text(path) as f:
            for line in f:
                if not line.strip():
                    continue
                r = json.loads(line)
                if r["image_index"] in seen:
                    raise SystemExit(f"{path}: image {r['image_index']} twice (one attack and "
                                     "seed per file)")
                seen.add(r["image_index"])
                trace = r.get("distance_trace") or []
                row = []
                for q in checkpoints:
                    within = [d for n, d in trace if n <= q]
                    row.append(min(within) if within else math.inf)
                out.setdefault(r["image_index"], []).append(row)
    return out


def mean_log(rows, k):
    """Mean log distance at checkpoint k over the seeds of one image (None if any is 0 / inf)."""
    values = [row[k] for row in rows]
    if not all(0 < v < math.inf for v in values):
        return None
    return sum(math.log(v) for v in values) / len(values)


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
    runs_ours = sum(len(ours[i]) for i in both)
    runs_theirs = sum(len(theirs[i]) for i in both)
    lines = [f"{len(both)} images in both runs ({runs_ours} advbo runs, {runs_theirs} ART runs); "
             "median L2 distance of the closest adversarial query within that many queries\n",
             "| queries | advbo | ART | advbo / ART (medians) | paired ratio (log ± SE) |",
             "| --- | --- | --- | --- | --- |"]
    for k, q in enumerate(checkpoints):
        mo = statistics.median(row[k] for i in both for row in ours[i])
        mt = statistics.median(row[k] for i in both for row in theirs[i])
        pairs = [(mean_log(ours[i], k), mean_log(theirs[i], k)) for i in both]
        logs = [o - t for o, t in pairs if o is not None and t is not None]
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

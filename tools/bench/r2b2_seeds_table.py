#!/usr/bin/env python3
"""The tuned R2-B2-Lite defender on fresh seeds (tools/bench/bench_r2b2_seeds.sh): per seed and
attacker, the cut in successful attack rounds against no defender,
cut = 1 - successes(defender) / successes(none), for the thesis' Lite defender, the tuned one
and the omniscient bound, on MNIST image 6590 (10 initialisations x 150 rounds per game). Seed 0
(tools/results/r2b2_bound, the seed the tuned settings were chosen on) is listed apart as
in-sample; the mean +- s.e. over the fresh seeds and the paired difference tuned - Lite (per
seed) are the out-of-sample numbers. Stdlib only.

    /usr/bin/python3 tools/bench/r2b2_seeds_table.py [SEEDS_DIR] [--in-sample DIR] [--out FILE]
"""
import argparse
import json
import math
import os
import pathlib
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/report_util.py
from report_util import emit  # noqa: E402

DEFENDERS = (("r2b21-lite", "thesis' Lite"), ("r2b21-lite-tuned", "tuned Lite"),
             ("omniscient", "omniscient bound"))


def successes(folder, attacker, defender):
    path = folder / f"{attacker}-vs-{defender}" / "summary.json"
    try:
        return sum(json.loads(path.read_text())["results"][0]["per_run_successes"])
    except (OSError, KeyError, json.JSONDecodeError) as e:
        sys.exit(f"r2b2_seeds_table: {path}: {e}")


def cuts(folder, attacker):
    none = successes(folder, attacker, "none")
    return {d: 1 - successes(folder, attacker, d) / none for d, _ in DEFENDERS}


def mean_se(xs):
    m = sum(xs) / len(xs)
    se = math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1) / len(xs)) if len(xs) > 1 else 0
    return m, se


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("seeds_dir", nargs="?", default="tools/results/r2b2_seeds")
    ap.add_argument("--in-sample", default="tools/results/r2b2_bound",
                    help="the bench of seed 0 (its mnist_6590/ folder)")
    ap.add_argument("--out")
    a = ap.parse_args()
    root = pathlib.Path(a.seeds_dir)
    seeds = sorted((int(p.name[4:]), p / "mnist_6590") for p in root.glob("seed*")
                   if (p / "mnist_6590").is_dir())
    if not seeds:
        sys.exit(f"r2b2_seeds_table: {root}: no seedN/mnist_6590 folders")
    lines = ["| attacker | seed | " + " | ".join(f"cut: {n}" for _, n in DEFENDERS) +
             " | tuned − thesis' Lite |", "| --- | --- | ---: | ---: | ---: | ---: |"]
    for attacker in ("gpucb", "ts"):
        label = {"gpucb": "GP-UCB", "ts": "TS"}[attacker]
        c0 = cuts(pathlib.Path(a.in_sample) / "mnist_6590", attacker)
        lines.append(f"| {label} | 0 (in-sample) | " +
                     " | ".join(f"{c0[d]:.1%}" for d, _ in DEFENDERS) +
                     f" | {c0['r2b21-lite-tuned'] - c0['r2b21-lite']:+.1%} |")
        fresh = [cuts(f, attacker) for _, f in seeds]
        for (s, _), c in zip(seeds, fresh):
            lines.append(f"| {label} | {s} | " + " | ".join(f"{c[d]:.1%}" for d, _ in DEFENDERS) +
                         f" | {c['r2b21-lite-tuned'] - c['r2b21-lite']:+.1%} |")
        cells = []
        for d, _ in DEFENDERS:
            m, se = mean_se([c[d] for c in fresh])
            cells.append(f"**{m:.1%} ± {se:.1%}**")
        m, se = mean_se([c["r2b21-lite-tuned"] - c["r2b21-lite"] for c in fresh])
        lines.append(f"| {label} | {seeds[0][0]}–{seeds[-1][0]} (mean ± s.e.) | " +
                     " | ".join(cells) + f" | **{m:+.1%} ± {se:.1%}** |")
    emit(lines, a.out)


if __name__ == "__main__":
    main()

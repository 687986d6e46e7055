#!/usr/bin/python3
"""The R2-B2-Lite defender's cut per setting (Dai 2021 thesis App. E.6.2.2b,
Fig. E.10): for each LABEL=DIR made by tools/bench/bench_r2b2_thesis_setting.sh (DIR holds
<game>/summary.json, e.g. OUT/r2b2_ref), the successful rounds of 150 of the GP-UCB and TS
attackers against no defender, the random-search (level-0) defender and the level-1
R2-B2-Lite defender, mean +- s.e. over runs, and the cut in % against the random defender
and against no defender, with the paired differences (Lite - random and Lite - none, same
images and seeds) and their s.e.

    /usr/bin/python3 tools/bench/r2b2_cut_table.py std=OUT1/r2b2_ref raw=OUT2/r2b2_ref \\
        [--out FILE.md]

Stdlib only; a missing game prints "–".
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from report_util import emit, mean_se, open_text, paired  # noqa: E402


def runs(folder, name):
    """Successful rounds per run of one game, keyed by run (image x initialisation: the same
    key has the same seed in every game of a setting), or None when the game is missing."""
    path = os.path.join(folder, name, "summary.json")
    if not os.path.isfile(path):
        return None
    with open_text(path) as f:
        return dict(enumerate(json.load(f)["results"][0]["per_run_successes"]))


def cut(base, lite):
    """The cut in % of `lite` against `base` (means); against a base of 0 the difference in
    rounds, as no percentage exists."""
    if base is None or lite is None:
        return "–"
    if base == 0:
        return "0 %" if lite == 0 else f"{lite:+.1f} rounds over 0"
    return f"{100 * (1 - lite / base):.0f} %"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("settings", nargs="+", help="LABEL=DIR")
    ap.add_argument("--out")
    a = ap.parse_args()
    lines = ["| setting | attacker | no defender | random defender | R2-B2-Lite defender | "
             "fewer than vs random (goal ≥ 90 %) | fewer than vs none (goal ≥ 0 %) | "
             "paired Lite − random | paired Lite − none |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for item in a.settings:
        if "=" not in item:
            sys.exit(f"{item}: use LABEL=DIR")
        label, folder = item.split("=", 1)
        if not os.path.isdir(folder):
            sys.exit(f"{folder}: not a folder")
        for att in ("gpucb", "ts"):
            none, rnd, lite = (runs(folder, f"{att}-vs-{d}") for d in ("none", "random", "r2b21-lite"))
            cell = {k: (mean_se(list(v.values())) if v else None)
                    for k, v in (("n", none), ("r", rnd), ("l", lite))}
            fmt = lambda c: "–" if c is None else f"{c[0]:.1f} ± {c[1]:.1f}"  # noqa: E731
            diff = lambda b: ("–" if not (b and lite and b.keys() == lite.keys())  # noqa: E731
                              else "{:+.1f} ± {:.1f}".format(*paired(lite, b)))
            lines.append(f"| {label} | {'GP-UCB' if att == 'gpucb' else 'TS'} | {fmt(cell['n'])} | "
                         f"{fmt(cell['r'])} | {fmt(cell['l'])} | "
                         f"{cut(cell['r'] and cell['r'][0], cell['l'] and cell['l'][0])} | "
                         f"{cut(cell['n'] and cell['n'][0], cell['l'] and cell['l'][0])} | {diff(rnd)} | "
                         f"{diff(none)} |")
    emit(lines, a.out)


if __name__ == "__main__":
    main()

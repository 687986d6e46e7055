#!/usr/bin/python3
"""Report of tools/bench/bench_parsimonious.sh: per defender, how many of the images Parsimonious
attacks without a defender are fully defended (no success within T queries), and on the
others the queries to success with / without the defender (Dai 2021 thesis Sec. 8.4.2.2:
"completely prevent any successful attacks for 53 of these [70] images and requires
Parsimonious to use more than 3.5 times more queries on average ... for 10 other images").
Stdlib only.

Usage: /usr/bin/python3 tools/bench/parsimonious_table.py DIR [--out FILE.md]
Reads DIR/none/summary.json and DIR/<defender>/summary.json (advbo game summaries).
"""
import argparse
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/report_util.py
from report_util import emit  # noqa: E402


def load(path):
    with open(path) as f:
        s = json.load(f)
    return {i: (ok, q) for i, ok, q in zip(s["images"], s["per_run_success"], s["per_run_queries"])}, s


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir")
    ap.add_argument("--out")
    a = ap.parse_args()
    base_file = os.path.join(a.dir, "none", "summary.json")
    if not os.path.isfile(base_file):
        sys.exit(f"{base_file}: missing (run tools/bench/bench_parsimonious.sh first)")
    base, s0 = load(base_file)
    attacked = [i for i, (ok, _) in base.items() if ok]
    lines = [f"{s0['game']}: Parsimonious, eps {s0['epsilon']}, T = {s0['rounds']} queries, seed "
             f"{s0['seed']}; {len(attacked)} of {len(base)} screened images attacked without a defender "
             f"(mean {statistics.mean(base[i][1] for i in attacked):.1f} queries)", "",
             "| defender | images | fully defended | attacked: mean queries with / without | "
             "mean ratio | images with ratio ≥ 3.5 |",
             "| --- | --- | --- | --- | --- | --- |"]
    for d in sorted(os.listdir(a.dir)):
        f = os.path.join(a.dir, d, "summary.json")
        if d == "none" or not os.path.isfile(f):
            continue
        res, s = load(f)
        imgs = [i for i in attacked if i in res]
        held = [i for i in imgs if not res[i][0]]
        hit = [i for i in imgs if res[i][0]]
        ratios = [res[i][1] / max(base[i][1], 1) for i in hit]
        pair = (f"{statistics.mean(res[i][1] for i in hit):.1f} / "
                f"{statistics.mean(base[i][1] for i in hit):.1f}") if hit else "—"
        lines.append(f"| `{s['defender']}` | {len(imgs)} | {len(held)} | {pair} | "
                     f"{statistics.mean(ratios):.2f} | {sum(r >= 3.5 for r in ratios)} |"
                     if hit else f"| `{s['defender']}` | {len(imgs)} | {len(held)} | — | — | 0 |")
    emit(lines, a.out)


if __name__ == "__main__":
    main()

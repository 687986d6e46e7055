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
from report_util import emit, open_text, paired  # noqa: E402
from paired_compare import mcnemar_exact  # noqa: E402


def load(path):
    with open_text(path) as f:
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
    lines += paired_lines(a.dir, attacked, s0["rounds"])
    emit(lines, a.out)


def paired_lines(d, attacked, rounds):
    """R2-B2 against the random defender of the same action space, on the images both
    played: who fully defends which (exact McNemar p on the discordant images) and the paired
    difference in queries Parsimonious spends (failures count as T)."""
    out = ["", "Paired, R2-B2 vs the random defender of the same action space (images both played; "
           f"queries with failures = {rounds}):", "",
           "| pair | images | only R2-B2 defends / only random defends | McNemar p | "
           "queries R2-B2 − random (mean ± s.e.) | more / fewer queries under R2-B2 | sign-test p |",
           "| --- | --- | --- | --- | --- | --- | --- |"]
    rows = 0
    for name in sorted(os.listdir(d)):
        if not name.startswith("r2b2_"):
            continue
        other = "random_" + name[len("r2b2_"):]
        fr, fo = (os.path.join(d, x, "summary.json") for x in (name, other))
        if not (os.path.isfile(fr) and os.path.isfile(fo)):
            continue
        r, _ = load(fr)
        o, _ = load(fo)
        common = [i for i in attacked if i in r and i in o]
        only_r = sum(1 for i in common if not r[i][0] and o[i][0])
        only_o = sum(1 for i in common if r[i][0] and not o[i][0])
        q = lambda res: {i: (res[i][1] if res[i][0] else rounds) for i in common}  # noqa: E731
        qr, qo = q(r), q(o)
        m, se = paired(qr, qo)
        more = sum(qr[i] > qo[i] for i in common)
        fewer = sum(qr[i] < qo[i] for i in common)
        out.append(f"| `{name}` vs `{other}` | {len(common)} | {only_r} / {only_o} | "
                   f"{mcnemar_exact(only_r, only_o):.3g} | {m:+.1f} ± {se:.1f} | {more} / {fewer} | "
                   f"{mcnemar_exact(more, fewer):.3g} |")
        rows += 1
    return out if rows else []


if __name__ == "__main__":
    main()

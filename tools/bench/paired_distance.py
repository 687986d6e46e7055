#!/usr/bin/python3
"""Paired comparison of two hard-label runs of one attack on the same instances:
e.g. an attack before and after a change, from two `advbo bench` records files. Per instance
(image index, target) present in both: wins / losses in success (with the exact two-sided
McNemar p), the paired difference in queries with failures counted at the budget (mean and
standard error), and at each checkpoint the geometric-mean ratio of the closest adversarial
distance (B / A, with the standard error of the mean log ratio) and how many instances got
closer / farther. Stdlib only.

Usage: /usr/bin/python3 tools/bench/paired_distance.py A.jsonl B.jsonl --attack NAME
           [--attack-b NAME] [--checkpoints 100,500,1000] [--label TEXT]
"""
import argparse
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/
from report_util import read_records  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # tools/bench/
from threat_model_table import distance_at  # noqa: E402


def mcnemar(w, l):
    """Exact two-sided McNemar p-value on w vs l discordant pairs."""
    n = w + l
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, k) for k in range(0, min(w, l) + 1)) / 2 ** n
    return min(1.0, 2 * tail)


def mean_se(xs):
    m = sum(xs) / len(xs)
    if len(xs) < 2:
        return m, float("nan")
    return m, math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1) / len(xs))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--attack", required=True)
    ap.add_argument("--attack-b", help="the attack's name in B (default: --attack)")
    ap.add_argument("--checkpoints", default="100,500,1000")
    ap.add_argument("--label", default="")
    args = ap.parse_args()
    key = lambda r: (r["image_index"], r.get("target"))  # noqa: E731
    a = {key(r): r for r in read_records(args.a, "paired_distance") if r["attack"] == args.attack}
    b = {key(r): r for r in read_records(args.b, "paired_distance") if r["attack"] == (args.attack_b or args.attack)}
    common = sorted(set(a) & set(b), key=str)
    if not common:
        sys.exit(f"paired_distance: no instance of {args.attack} in both files")
    budget = a[common[0]]["budget"]
    w = sum(b[k]["success"] and not a[k]["success"] for k in common)
    l = sum(a[k]["success"] and not b[k]["success"] for k in common)
    q = lambda r: r["queries"] if r["success"] else r["budget"]  # noqa: E731
    dq, dq_se = mean_se([q(b[k]) - q(a[k]) for k in common])
    cells = [args.label or args.attack, str(len(common)), f"{w} / {l}", f"{mcnemar(w, l):.2g}",
             f"{dq:+.1f} ± {dq_se:.1f}"]
    for c in (int(x) for x in args.checkpoints.split(",")):
        logs = []
        for k in common:
            da = distance_at(a[k].get("distance_trace") or [], c)
            db = distance_at(b[k].get("distance_trace") or [], c)
            if math.isfinite(da) and math.isfinite(db) and da > 0 and db > 0:
                logs.append(math.log(db / da))
        if not logs:
            cells.append("—")
            continue
        m, se = mean_se(logs)
        closer, farther = sum(x < 0 for x in logs), sum(x > 0 for x in logs)
        cells.append(f"{math.exp(m):.3f} (± {se:.3f}), {closer} / {farther}")
    head = ["run", "instances", "wins / losses (B vs A)", "McNemar p",
            f"Δ queries B − A (failures = {budget})"]
    head += [f"distance ratio B / A @ {c} (± s.e. of log), closer / farther"
             for c in args.checkpoints.split(",")]
    print("| " + " | ".join(head) + " |")
    print("|" + " --- |" * len(head))
    print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()

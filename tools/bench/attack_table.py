#!/usr/bin/env python3
"""Two attacks side by side on the same instances, one row per model: each attack's success
rate (ASR) and median queries over its successes, the instances only one of them solves (wins
/ losses of the first) and the exact two-sided McNemar p-value on those discordant pairs.
Records may come from different runs of the same instances and seeds (plain or .jsonl.gz).
Stdlib only.

    /usr/bin/python3 tools/bench/attack_table.py --names BOS²,Square \\
        --row "MNIST shipped" FILE_A:ATTACK_A FILE_B:ATTACK_B [--row ...]

Exit status 2 on a missing file, an attack with no records in its file, or rows that share no
instance.
"""
import argparse
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/
from paired_compare import mcnemar_exact  # noqa: E402
from report_util import read_records  # noqa: E402


def side(spec):
    """Records of one attack keyed by (image, target): spec is FILE:ATTACK."""
    m = re.match(r"^(.*?\.jsonl(?:\.gz)?):(.+)$", spec)
    if not m:
        sys.exit(f"attack_table: {spec}: expected FILE.jsonl[.gz]:ATTACK")
    path, attack = m.groups()
    rows = {(r["image_index"], r.get("target")): r for r in read_records(path, "attack_table")
            if r["attack"] == attack}
    if not rows:
        sys.exit(f"attack_table: {path}: no records of attack '{attack}'")
    return rows


def cell(rows, keys):
    q = [rows[k]["queries"] for k in keys if rows[k]["success"]]
    asr = 100.0 * len(q) / len(keys)
    return f"{asr:.1f} % ({statistics.median(q):g})" if q else f"{asr:.1f} % (–)"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--names", default="A,B", help="the two attacks' column names, comma-separated")
    ap.add_argument("--row", nargs=3, action="append", required=True,
                    metavar=("LABEL", "A", "B"), help="a model's row: label, FILE:ATTACK twice")
    a = ap.parse_args()
    na, nb = a.names.split(",")
    lines = [f"| model | instances | {na} ASR (median queries) | {nb} ASR (median queries) | "
             f"{na} wins / losses | McNemar p |", "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for label, sa, sb in a.row:
        ra, rb = side(sa), side(sb)
        keys = sorted(set(ra) & set(rb), key=lambda k: (k[0], -1 if k[1] is None else k[1]))
        if not keys:
            sys.exit(f"attack_table: {label}: the two sides share no instance")
        wins = sum(ra[k]["success"] and not rb[k]["success"] for k in keys)
        losses = sum(rb[k]["success"] and not ra[k]["success"] for k in keys)
        p = mcnemar_exact(wins, losses)
        lines.append(f"| {label} | {len(keys)} | {cell(ra, keys)} | {cell(rb, keys)} | "
                     f"{wins} / {losses} | {p:.2g} |")
    print("\n".join(lines))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Paired comparison of attack rows run side by side on the same instances and seeds
(`advbo bench --attacks A,B,...`): every row against one reference row.

Usage: python3 tools/paired_compare.py RECORDS.jsonl [RECORDS2.jsonl ...]
           [--ref ATTACK] [--boot 10000] [--seed 0] [--out FILE.md]

Only instances (image index, target) present for both rows are paired. Per row:
  - ASR and successes; wins / losses against the reference (succeeds where the reference
    fails / the reverse) and the exact two-sided McNemar p-value on those discordant pairs;
  - median queries over successes, and the median over the queries of successes without the
    30 initial queries (BOS^2 Alg. 5 resets t after them; other attacks: same number);
  - mean paired difference in queries with failures counted at the budget (q_row - q_ref),
    with its standard error and a 95 % paired-bootstrap interval (instances resampled);
  - the paired-bootstrap 95 % interval of the difference in median queries over the
    instances both rows solve;
  - BO (attack-side) and model milliseconds per query, and seconds per instance.
Exit status 2 on bad input (missing file, no common instances, unknown reference row).
"""
import argparse
import math
import random
import statistics
import sys

from report_util import emit, read_records

INIT_QUERIES = 30  # BOS^2 initial design: 10 random perturbations in 3 latent spaces (Sec. 5.3)


def mcnemar_exact(b, c):
    """Two-sided exact McNemar p-value for b and c discordant pairs (binomial, p = 1/2)."""
    n = b + c
    if n == 0:
        return 1.0
    k = min(b, c)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2.0 ** n
    return min(1.0, 2.0 * tail)


def load(paths):
    rows = {}
    for p in paths:
        for r in read_records(p, "paired_compare"):
            key = (r["image_index"], -1 if r.get("target") is None else r["target"])
            rows.setdefault(r["attack"], {})[key] = r
    return rows


def q_budget(r):
    return r["queries"] if r["success"] else r["budget"]


def fmt(x, nd=1):
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{nd}f}"


def bootstrap(keys, stat, n_boot, rng):
    """95 % percentile interval of stat(sample of keys) over n_boot resamples."""
    vals = []
    for _ in range(n_boot):
        s = [keys[rng.randrange(len(keys))] for _ in keys]
        v = stat(s)
        if v is not None:
            vals.append(v)
    if len(vals) < 20:
        return None, None
    vals.sort()
    return vals[int(0.025 * len(vals))], vals[int(0.975 * len(vals)) - 1]


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("records", nargs="+")
    ap.add_argument("--ref", default=None, help="reference row (default: bos2 if present)")
    ap.add_argument("--boot", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    rows = load(a.records)
    if not rows:
        print("paired_compare: no records", file=sys.stderr)
        sys.exit(2)
    ref = a.ref or ("bos2" if "bos2" in rows else sorted(rows)[0])
    if ref not in rows:
        print(f"paired_compare: no row '{ref}' (rows: {', '.join(sorted(rows))})", file=sys.stderr)
        sys.exit(2)
    rng = random.Random(a.seed)
    lines = [f"Reference row: `{ref}`. Paired on common (image, target) instances; "
             f"Δ = row − reference; q = queries to success, failures at the budget; "
             f"{a.boot} bootstrap resamples (seed {a.seed}).", "",
             "| attack | n | ASR % | wins/losses | McNemar p | median q | median q − 30 | "
             "mean Δq ± s.e. [95 % CI] | Δ median q (both solved) [95 % CI] | BO ms/query | "
             "model ms/query | s/instance |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- | ---: | ---: | ---: |"]
    for name in sorted(rows, key=lambda n: (n != ref, n)):
        common = sorted(set(rows[name]) & set(rows[ref]))
        if not common:
            print(f"paired_compare: '{name}' shares no instance with '{ref}'", file=sys.stderr)
            sys.exit(2)
        R, F = rows[name], rows[ref]
        succ = [R[k]["queries"] for k in common if R[k]["success"]]
        wins = sum(1 for k in common if R[k]["success"] and not F[k]["success"])
        losses = sum(1 for k in common if F[k]["success"] and not R[k]["success"])
        d = [q_budget(R[k]) - q_budget(F[k]) for k in common]
        mean_d = statistics.fmean(d)
        se = statistics.stdev(d) / math.sqrt(len(d)) if len(d) > 1 else float("nan")
        lo, hi = bootstrap(common, lambda s: statistics.fmean(q_budget(R[k]) - q_budget(F[k])
                                                              for k in s), a.boot, rng)
        both = [k for k in common if R[k]["success"] and F[k]["success"]]

        def dmed(s):
            if not s:
                return None
            return (statistics.median(R[k]["queries"] for k in s)
                    - statistics.median(F[k]["queries"] for k in s))
        mlo, mhi = bootstrap(both, dmed, a.boot, rng) if both else (None, None)
        used = sum(R[k]["queries_used"] for k in common)
        bo = sum(R[k]["bo_seconds"] for k in common)
        model = sum(R[k]["model_seconds"] for k in common)
        secs = sum(R[k]["seconds"] for k in common)
        lines.append(
            f"| `{name}` | {len(common)} | {fmt(100.0 * len(succ) / len(common))} | "
            f"{wins}/{losses} | {fmt(mcnemar_exact(wins, losses), 3)} | "
            f"{fmt(statistics.median(succ) if succ else None)} | "
            f"{fmt(statistics.median(max(0, q - INIT_QUERIES) for q in succ) if succ else None)} | "
            f"{fmt(mean_d)} ± {fmt(se)} [{fmt(lo)}, {fmt(hi)}] | "
            f"{fmt(dmed(both))} [{fmt(mlo)}, {fmt(mhi)}] | "
            f"{fmt(1000.0 * bo / used, 2)} | {fmt(1000.0 * model / used, 2)} | "
            f"{fmt(secs / len(common), 2)} |")
    emit(lines, a.out)


if __name__ == "__main__":
    main()

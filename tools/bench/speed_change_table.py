#!/usr/bin/python3
"""A speed change of an attack, paired on the same instances: its records before and after.

    speed_change_table.py BEFORE.jsonl AFTER.jsonl[:LABEL] [AFTER2.jsonl[:LABEL] ...]
                          [--attack bos2] [--after-attack SPEC] [--versus square]
                          [--out TABLE.md]

Each file holds `advbo bench` records of the same command (same instances, seeds and budget),
run with two builds or settings (--after-attack names the AFTER files' attack when the change
is a setting, e.g. bos2:precision=1). Instances are paired by (dataset, image index, target). One
Markdown row per AFTER file:
  - "same records": whether every record field except the timings (same_records.py's
    is_timing: seconds, *_seconds, ...) is equal to BEFORE's;
  - ASR and the median queries over successes, before -> after;
  - the mean paired difference in queries (after - before; failures counted at the budget)
    with its standard error;
  - BO milliseconds per query (the instances' BO seconds over their queries) and BO ÷ model,
    before -> after;
  - the mean paired difference in BO seconds per instance with its standard error.
With --versus OTHER (an attack run in the same command, so on the same instances and cores),
one row per file instead: the attack's and OTHER's mean wall seconds per instance, their ratio
with its standard error (delta method on the paired instances), and both attacks' ASR and
median queries.
Exits with status 2 naming the file on an unreadable file or one without common instances.
"""
import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/report_util.py
from report_util import emit, mean_se, read_records  # noqa: E402
from same_records import is_timing  # noqa: E402  (the one rule for what a timing field is)

TOOL = "speed_change_table.py"


def load(path, attack):
    """{(dataset, image_index, target): record} of `attack`'s records in path."""
    out = {}
    for r in read_records(path, TOOL):
        if r.get("attack") != attack:
            continue
        for key in ("queries_used", "bo_seconds", "model_seconds", "success", "queries"):
            if key not in r:
                print(f"{TOOL}: {path}: a record without {key}", file=sys.stderr)
                sys.exit(2)
        out[(r.get("dataset"), r.get("image_index"), r.get("target"))] = r
    return out


def summary(recs, keys):
    """ASR (%), median queries over successes, BO ms per query, BO ÷ model of recs[keys]."""
    rs = [recs[k] for k in keys]
    wins = [r["queries"] for r in rs if r["success"]]
    used = sum(r["queries_used"] for r in rs)
    bo = sum(r["bo_seconds"] for r in rs)
    model = sum(r["model_seconds"] for r in rs)
    return (100.0 * len(wins) / len(rs), statistics.median(wins) if wins else float("nan"),
            1e3 * bo / used, bo / model if model > 0 else float("nan"))


def charged(r):
    """Queries charged to an instance: its queries to success, or the budget on failure."""
    return r["queries"] if r["success"] else r["budget"]


def row(before, after, label):
    keys = sorted(set(before) & set(after), key=str)
    if not keys:
        return None
    def fields(r):  # the record without its timings and its attack's name
        return {k: v for k, v in r.items() if not is_timing(k) and k != "attack"}
    same = all(fields(before[i]) == fields(after[i]) for i in keys)
    b, a = summary(before, keys), summary(after, keys)
    dq, dq_se = mean_se([charged(after[i]) - charged(before[i]) for i in keys])
    ds, ds_se = mean_se([after[i]["bo_seconds"] - before[i]["bo_seconds"] for i in keys])
    dataset = before[keys[0]].get("dataset")
    return (f"| {dataset} | {label} | {len(keys)} | {'yes' if same else 'no'} | "
            f"{b[0]:.1f} → {a[0]:.1f} | {b[1]:.0f} → {a[1]:.0f} | {dq:+.1f} ± {dq_se:.1f} | "
            f"{b[2]:.2f} → {a[2]:.2f} | {b[3]:.2f} → **{a[3]:.2f}** | {ds:+.2f} ± {ds_se:.2f} |")


def versus_row(path, label, attack, other):
    """The wall-time row of one file: `attack` beside `other` on their common instances."""
    mine, theirs = load(path, attack), load(path, other)
    keys = sorted(set(mine) & set(theirs), key=str)
    if not keys:
        return None
    a, o = summary(mine, keys), summary(theirs, keys)
    wall_a = statistics.mean(mine[k]["seconds"] for k in keys)
    wall_o = statistics.mean(theirs[k]["seconds"] for k in keys)
    ratio = wall_a / wall_o
    # SE of the ratio of means by the delta method on the paired per-instance seconds.
    d = [mine[k]["seconds"] / wall_a - theirs[k]["seconds"] / wall_o for k in keys]
    _, se = mean_se(d)
    return (f"| {mine[keys[0]].get('dataset')} | {label} | {len(keys)} | {a[0]:.1f} / {o[0]:.1f} | "
            f"{a[1]:.0f} / {o[1]:.0f} | {wall_a:.2f} | {wall_o:.2f} | "
            f"**{ratio:.2f}** ± {ratio * se:.2f} |")


def versus_table(args):
    lines = [f"| dataset | build | instances | ASR % ({args.attack} / {args.versus}) | "
             f"median queries ({args.attack} / {args.versus}) | {args.attack} s / instance | "
             f"{args.versus} s / instance | wall ÷ {args.versus} (± SE) |",
             "| --- | --- | ---: | --- | --- | ---: | ---: | --- |"]
    for spec in [args.before] + args.after:
        path, _, label = spec.partition(":")
        line = versus_row(path, label or path, args.attack, args.versus)
        if line is None:
            print(f"{TOOL}: {path}: no instance with both {args.attack} and {args.versus}",
                  file=sys.stderr)
            sys.exit(2)
        lines.append(line)
    emit(lines, args.out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("before", help="records.jsonl before the change (optionally :LABEL)")
    ap.add_argument("after", nargs="+", help="records.jsonl after it, each optionally :LABEL")
    ap.add_argument("--attack", default="bos2", help="the attack row compared (default bos2)")
    ap.add_argument("--after-attack", help="the AFTER files' attack row (default: --attack)")
    ap.add_argument("--versus", help="instead: wall time beside this attack, per file")
    ap.add_argument("--out", help="also write the table to this file")
    args = ap.parse_args()
    if args.versus:
        versus_table(args)
        return
    before = load(args.before.partition(":")[0], args.attack)
    lines = ["| dataset | change | instances | same records | ASR % | median queries | "
             "Δ queries (± SE) | BO ms / query | BO ÷ model | Δ BO s / instance (± SE) |",
             "| --- | --- | ---: | --- | --- | --- | --- | --- | --- | --- |"]
    for spec in args.after:
        path, _, label = spec.partition(":")
        line = row(before, load(path, args.after_attack or args.attack), label or path)
        if line is None:
            print(f"{TOOL}: {path}: no instance in common with {args.before}", file=sys.stderr)
            sys.exit(2)
        lines.append(line)
    emit(lines, args.out)


if __name__ == "__main__":
    main()

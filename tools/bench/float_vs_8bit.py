#!/usr/bin/env python3
"""Float queries against 8-bit queries on the same instances: what a float ASR is worth once
the images are saved, and what querying on the 8-bit grid from the start buys.

Usage: /usr/bin/python3 tools/bench/float_vs_8bit.py FLOAT.jsonl EIGHTBIT.jsonl [--out FILE.md]
           [--attacks a,b,...]

FLOAT.jsonl holds records of `advbo bench`/`attack` with `--pixels float` (or records written
before 8-bit queries existed, which are float), EIGHTBIT.jsonl the same model, eps, budget and
seed with `--pixels 8bit` (the default). Rows are paired on (attack, image_index, target);
only instances in both files count. Per attack:
  - float ASR (successes of the float run; the threat model of the papers);
  - "float, saved": float successes whose image stays adversarial when rounded onto the 8-bit
    grid inside the ball (the record's `quantized_success`; "–" for records without it);
  - 8-bit ASR: successes of the run that queried on the grid (every success is a saved image);
  - wins / losses of the 8-bit run against the float run's saved successes, and the exact
    two-sided McNemar p-value on those discordant pairs;
  - median queries of the 8-bit successes.
Exit status 2 on bad input (missing or non-JSON file, runs that differ in model, dataset,
eps, budget, seed or threat model, no common instances).
"""
import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/
from paired_compare import mcnemar_exact  # noqa: E402
from report_util import emit, read_records  # noqa: E402


def load(path):
    return {(r["attack"], r["image_index"], r.get("target")): r
            for r in read_records(path, "float_vs_8bit")}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("float_records")
    p.add_argument("eightbit_records")
    p.add_argument("--attacks", help="comma-separated rows (default: every common attack)")
    p.add_argument("--out")
    a = p.parse_args()
    fl, eb = load(a.float_records), load(a.eightbit_records)
    for r in eb.values():
        if r.get("pixels", "float") != "8bit":
            print(f"float_vs_8bit: {a.eightbit_records}: a {r['attack']} record has pixels="
                  f"{r.get('pixels', 'float')!r}, expected 8bit", file=sys.stderr)
            sys.exit(2)
    for field in ("model", "dataset", "epsilon", "budget", "seed", "threat_model"):
        fv = {r.get(field) for r in fl.values()}
        ev = {r.get(field) for r in eb.values()}
        if fv != ev:
            print(f"float_vs_8bit: the runs differ in `{field}` ({sorted(map(str, fv))} vs "
                  f"{sorted(map(str, ev))}): not the same instances", file=sys.stderr)
            sys.exit(2)
    common = sorted(set(fl) & set(eb), key=str)
    if not common:
        print("float_vs_8bit: no instance is in both files", file=sys.stderr)
        sys.exit(2)
    attacks = sorted({k[0] for k in common})
    if a.attacks:
        attacks = [x for x in a.attacks.split(",") if x in attacks]
    lines = [f"Float: `{a.float_records}`; 8-bit: `{a.eightbit_records}`.", "",
             "| attack | n | float ASR % | float, saved as 8-bit % | 8-bit ASR % | "
             "8-bit wins/losses vs saved | McNemar p | median q (8-bit) |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for att in attacks:
        keys = [k for k in common if k[0] == att]
        n = len(keys)
        f_ok = sum(fl[k]["success"] for k in keys)
        has_q = all("quantized_success" in fl[k] for k in keys)
        saved = {k: fl[k]["success"] and fl[k].get("quantized_success", False) for k in keys}
        e_ok = {k: eb[k]["success"] for k in keys}
        wins = sum(e_ok[k] and not saved[k] for k in keys)
        losses = sum(saved[k] and not e_ok[k] for k in keys)
        qs = [eb[k]["queries"] for k in keys if e_ok[k]]
        lines.append(
            f"| {att} | {n} | {100 * f_ok / n:.1f} | "
            + (f"{100 * sum(saved.values()) / n:.1f}" if has_q else "–")
            + f" | {100 * sum(e_ok.values()) / n:.1f} | "
            + (f"{wins}/{losses} | {mcnemar_exact(wins, losses):.3g}" if has_q else "– | –")
            + f" | {statistics.median(qs) if qs else '–'} |")
    emit(lines, a.out)


if __name__ == "__main__":
    main()

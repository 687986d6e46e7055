#!/usr/bin/python3
"""The single-precision study of BOS²'s candidate pools: `bench_add_gp_ucb --single` outputs,
one Markdown row per file.

    single_precision_table.py RESULT.json[:LABEL] [RESULT2.json[:LABEL] ...] [--out TABLE.md]

Each file holds the JSON line bench_add_gp_ucb printed. Columns: the shapes (observations N,
candidates per group, groups, spread of the inputs), the from-scratch solve V = L⁻¹ K(X, Z) of
every group in double and in single precision, one appended row's extension pass over V in
both, and the single-precision posterior's largest errors against the double one (variance and
standard deviation as fractions of the prior's, mean in output standard deviations).
Exits with status 2 naming the file on an unreadable file or one without the study.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/report_util.py
from report_util import emit  # noqa: E402

TOOL = "single_precision_table.py"
FIELDS = ("double_solve_ms", "single_solve_ms", "double_extend_ms", "single_extend_ms",
          "var_error", "sd_error", "mean_error")


def load(path):
    """The bench's JSON object in path, with its "single" study checked."""
    try:
        with open(path, encoding="utf-8") as f:
            out = json.loads(f.read())
    except (OSError, json.JSONDecodeError) as e:
        print(f"{TOOL}: {path}: {e}", file=sys.stderr)
        sys.exit(2)
    if not all(k in out.get("single", {}) for k in FIELDS):
        print(f"{TOOL}: {path}: no single-precision study (run with --single)", file=sys.stderr)
        sys.exit(2)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", nargs="+", help="bench_add_gp_ucb --single outputs, each :LABEL")
    ap.add_argument("--out", help="also write the table to this file")
    args = ap.parse_args()
    lines = ["| case | N | candidates / group | groups | spread | solve ms, double → single | "
             "extension ms, double → single | variance error | sd error | mean error |",
             "| --- | ---: | ---: | ---: | ---: | --- | --- | ---: | ---: | ---: |"]
    for spec in args.results:
        path, _, label = spec.partition(":")
        r = load(path)
        s = r["single"]
        lines.append(
            f"| {label or path} | {r['points']} | {r['pool']} | {r['groups']} | {r['spread']:g} | "
            f"{s['double_solve_ms']:.2f} → {s['single_solve_ms']:.2f} | "
            f"{s['double_extend_ms']:.3f} → {s['single_extend_ms']:.3f} | "
            f"{s['var_error']:.1e} | {s['sd_error']:.1e} | {s['mean_error']:.1e} |")
    emit(lines, args.out)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Prints one markdown table of a committed results file, for the benchmark pages whose bench
driver writes its table from its records in the same run (tools/bench/bench_lockstep.sh,
bench_workers.sh, bench_art_speed.sh, ...): the page then shows exactly the table committed
beside the records. Stdlib only.

    /usr/bin/python3 tools/bench/include_table.py FILE [--after TEXT] [--index N]

--after: start looking after the first line containing TEXT; --index: the N-th table from
there (0 = the first). Exit status 2 when the file or the table is missing.
"""
import argparse
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file")
    ap.add_argument("--after", default="")
    ap.add_argument("--index", type=int, default=0)
    a = ap.parse_args()
    try:
        lines = open(a.file, encoding="utf-8").read().splitlines()
    except OSError as e:
        sys.exit(f"include_table: {a.file}: {e.strerror}")
    start = next((i for i, l in enumerate(lines) if a.after in l), None)
    if start is None:
        sys.exit(f"include_table: {a.file}: no line containing '{a.after}'")
    tables, cur = [], []
    for line in lines[start:] + [""]:
        if line.startswith("|"):
            cur.append(line)
        elif cur:
            tables.append(cur)
            cur = []
    if a.index >= len(tables):
        sys.exit(f"include_table: {a.file}: no table {a.index} after '{a.after}'")
    print("\n".join(tables[a.index]))


if __name__ == "__main__":
    main()

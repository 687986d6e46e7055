"""Shared by the table tools (r2b2_table.py, defense_table.py, hybrid_batch_table.py,
uhe_bo_table.py, paired_compare.py, float_vs_8bit.py): reading JSONL records, mean ± SE and paired differences, and printing a markdown report and
optionally write it atomically (a .partial file renamed into place, so an interrupted write
never leaves a half file)."""
import argparse
import json
import math
import os
import sys


def read_records(path, tool):
    """Yields the JSON objects of a JSONL record file (blank lines skipped). Exits with status
    2 and "TOOL: PATH:LINE: not JSON (...)" or "TOOL: PATH: <reason>" on a bad or unreadable
    file."""
    try:
        with open(path) as f:
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    yield json.loads(line)
                except json.JSONDecodeError as e:
                    print(f"{tool}: {path}:{n}: not JSON ({e})", file=sys.stderr)
                    sys.exit(2)
    except OSError as e:
        print(f"{tool}: {path}: {e.strerror}", file=sys.stderr)
        sys.exit(2)


def emit(lines, out=None):
    """Prints "\\n".join(lines) and, when `out` is a path, writes the same text there."""
    text = "\n".join(lines) + "\n"
    print(text)
    if out:
        with open(out + ".partial", "w") as f:
            f.write(text)
        os.replace(out + ".partial", out)


def mean_se(xs):
    """Mean and standard error (sample SD / sqrt(n); NaN for n < 2) of a non-empty list."""
    n = len(xs)
    m = sum(xs) / n
    if n < 2:
        return m, float("nan")
    return m, math.sqrt(sum((x - m) ** 2 for x in xs) / (n - 1) / n)


def paired(a, b):
    """Mean ± SE of a[k] - b[k] over the keys both dicts have (paired runs)."""
    common = sorted(set(a) & set(b))
    return mean_se([a[k] - b[k] for k in common])



def table_args(doc):
    """The table tools' command line: RUNS (a JSONL file), --out TABLE.md, --plot CURVES.png;
    the description is the first paragraph of `doc`."""
    p = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    p.add_argument("runs")
    p.add_argument("--out")
    p.add_argument("--plot")
    return p.parse_args()


def save_png(fig, path, dpi=100):
    """Writes a matplotlib figure to `path` atomically (a .partial.png renamed into place)."""
    fig.savefig(path + ".partial.png", dpi=dpi)
    os.replace(path + ".partial.png", path)

"""Shared by the table tools (tools/bench/*_table.py, paired_compare.py, summarize.py):
reading JSONL records (plain or gzip-compressed: the committed records in tools/results are
`.jsonl.gz`), mean ± SE and paired differences, and printing a markdown report and optionally
writing it atomically (a .partial file renamed into place, so an interrupted write never leaves
a half file)."""
import argparse
import difflib
import gzip
import json
import math
import os
import sys


def records_path(path):
    """`path` itself, or `path + ".gz"` when only the compressed file exists (a committed
    record file named by its uncompressed name)."""
    path = str(path)
    if not os.path.exists(path) and os.path.exists(path + ".gz"):
        return path + ".gz"
    return path


def open_text(path):
    """Opens a text file for reading, gunzipping it when its name ends in .gz; falls back to
    `path + ".gz"` when `path` does not exist (see records_path). Raises OSError as open()."""
    path = records_path(path)
    if path.endswith(".gz"):
        return gzip.open(path, "rt", encoding="utf-8")
    return open(path, encoding="utf-8")


def read_records(path, tool):
    """Yields the JSON objects of a JSONL record file (blank lines skipped). Exits with status
    2 and "TOOL: PATH:LINE: not JSON (...)" or "TOOL: PATH: <reason>" on a bad or unreadable
    file."""
    try:
        with open_text(path) as f:
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    yield json.loads(line)
                except json.JSONDecodeError as e:
                    print(f"{tool}: {path}:{n}: not JSON ({e})", file=sys.stderr)
                    sys.exit(2)
    except OSError as e:
        print(f"{tool}: {path}: {e.strerror or e}", file=sys.stderr)
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


def write_atomic(path, text):
    """Writes `text` to `path` through a .partial file renamed into place."""
    path = str(path)
    with open(path + ".partial", "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(path + ".partial", path)


def page_diff(old, new, source, lines=20):
    """The first `lines` lines of a unified diff from the committed text to the one `source`
    gives (a generated page's check message)."""
    diff = difflib.unified_diff(old.splitlines(), new.splitlines(), "committed", source,
                                lineterm="", n=0)
    return "\n".join(list(diff)[:lines])


def check_or_write(page, old, new, tool, source, what, check):
    """The generated pages' one rule: with `check`, exit status 1 and a diff when the committed
    `page` (text `old`) differs from `new` (what `source` gives: "binary", "package", ...);
    otherwise write `new` atomically. Returns the exit status."""
    if new == old:
        return 0
    rel = os.path.relpath(page, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    if check:
        print(f"{tool}: {rel} differs from {what}; run `/usr/bin/python3 tools/ci/{tool}.py` and "
              f"commit:\n" + page_diff(old, new, source), file=sys.stderr)
        return 1
    write_atomic(page, new)
    print(f"{tool}: wrote {rel}")
    return 0

"""Shared by the table tools (r2b2_table.py, defense_table.py, hybrid_batch_table.py,
uhe_bo_table.py): mean ± SE and paired differences, and printing a markdown report and
optionally write it atomically (a .partial file renamed into place, so an interrupted write
never leaves a half file)."""
import math
import os


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


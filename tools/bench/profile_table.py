#!/usr/bin/env python3
"""Where BOS²'s time goes, from the perf profiles tools/bench/profile_bos2.sh writes: for each
profile folder (DIR/inclusive.txt, perf's time per function including its callees), the share
of the attack's samples (those under advbo::attacks::RunBos2) spent in each part of the loop.

    /usr/bin/python3 tools/bench/profile_table.py DIR[:LABEL] [DIR[:LABEL] ...]

A column is headed by its LABEL (default: the folder's name).

A part below perf's 2 % reporting limit shows as "< 2". Exits 2 naming the file when a folder
has no inclusive.txt or its profile has no RunBos2 line.
"""
import os
import re
import sys

TOOL = "profile_table"
# (row label, the function whose inclusive time it is, or alternatives: the first one the
# profile has, for a part whose function was renamed)
PARTS = [
    ("Add-GP-UCB polish (L-BFGS-B on each group's UCB)", "bo::(anonymous namespace)::PolishGroup"),
    ("of which the UCB and its gradient", "bo::ComponentUcb::Value"),
    ("candidate pools: drawn afresh, caches from scratch",
     ("bo::AdditiveCandidatePool::SetAllGroupCandidates",
      "bo::AdditiveCandidatePool::SetCandidates")),
    ("of which L⁻¹ K(X, Z) from scratch", "bo::AdditiveCandidatePool::Recompute"),
    ("candidate pools: carried along a trust-region move, changed candidates' caches",
     "bo::AdditiveCandidatePool::UpdateAllGroupCandidates"),
    ("candidate pools: incremental update (new rows)", "bo::AdditiveCandidatePool::Sync"),
    ("GP hyperparameter fits", "bo::FitHyperparameters"),
    ("Bayesian optimal stopping", "bo::BosDecisionTable::Solve"),
    ("model queries (forward passes and their checks)", "oracle::Referee::Evaluate"),
]
LINE = re.compile(r"^\s*([0-9.]+)%\s+([0-9.]+)%\s+\[\.\]\s+(.*)$")


def inclusive(path):
    """{symbol: inclusive %} of one perf report; exits 2 naming the file if it is unreadable."""
    out = {}
    try:
        with open(path) as f:
            for line in f:
                m = LINE.match(line)
                if m:
                    out.setdefault(m.group(3).strip(), float(m.group(1)))
    except OSError as e:
        sys.exit(f"{TOOL}: {path}: {e}")
    return out


def share(table, funcs, total):
    """The inclusive % of the first of `funcs` (a name or a tuple of alternatives; the first
    symbol ending in it) the profile has, relative to `total`, or None."""
    for func in (funcs if isinstance(funcs, tuple) else (funcs,)):
        for sym, pct in table.items():
            if sym.endswith(func):
                return 100.0 * pct / total
    return None


def main():
    dirs = sys.argv[1:]
    if not dirs:
        sys.exit(f"usage: {TOOL}.py DIR[:LABEL] [DIR[:LABEL] ...]")
    cols = []
    for spec in dirs:
        d, _, label = spec.partition(":")
        path = os.path.join(d, "inclusive.txt")
        t = inclusive(path)
        total = t.get("advbo::attacks::RunBos2")
        if not total:
            sys.exit(f"{TOOL}: {path}: no advbo::attacks::RunBos2 line (not a BOS² profile?)")
        cols.append((label or os.path.basename(os.path.normpath(d)), t, total))
    print("| part of BOS² | " + " | ".join(f"{c[0]}, % of BOS²'s time" for c in cols) + " |")
    print("| --- |" + " ---: |" * len(cols))
    for label, func in PARTS:
        cells = []
        for _, t, total in cols:
            v = share(t, func, total)
            cells.append("< 2" if v is None else f"{v:.1f}")
        print(f"| {label} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()

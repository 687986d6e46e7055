#!/usr/bin/env python3
"""Prints the ctest -I argument ("0,0,0,N1,N2,...") that runs a chosen set of tests of a build
folder in ONE ctest run, so that long tests share the cores with the rest (for CI time).
Stdlib only.

Usage: tools/ci/ctest_select.py BUILD_DIR [--label L ...] [--list FILE] [--regex RE ...]
         [--exclude-list FILE]
A test is chosen when it carries one of the labels, is named in a --list file, or matches a
--regex (Python re, whole name), and is not named in an --exclude-list file. List files hold
one test name per line ("#" starts a comment). Exits 1 naming any listed test the build does
not have (a renamed test must not drop out silently) or when nothing is chosen.
Test numbers are ctest's own (the position in `ctest --show-only=json-v1`), not the
renumbered positions `ctest -N` prints under a filter.
"""
import argparse
import json
import re
import subprocess
import sys


def names_in(path):
    out = []
    with open(path) as f:
        for line in f:
            name = line.split("#", 1)[0].strip()
            if name:
                out.append(name)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("build")
    ap.add_argument("--label", action="append", default=[])
    ap.add_argument("--list", action="append", default=[])
    ap.add_argument("--regex", action="append", default=[])
    ap.add_argument("--exclude-list", action="append", default=[])
    a = ap.parse_args()
    shown = subprocess.run(["ctest", "--show-only=json-v1"], cwd=a.build, check=True,
                           capture_output=True, text=True).stdout
    tests = json.loads(shown)["tests"]
    index = {t["name"]: i + 1 for i, t in enumerate(tests)}
    listed = [n for f in a.list for n in names_in(f)]
    excluded = {n for f in a.exclude_list for n in names_in(f)}
    missing = [n for n in listed + sorted(excluded) if n not in index]
    if missing:
        sys.exit(f"ctest_select: {a.build} has no test named {', '.join(missing)}")
    chosen = []
    for t in tests:
        labels = next((p["value"] for p in t.get("properties", []) if p["name"] == "LABELS"), [])
        name = t["name"]
        if name in excluded:
            continue
        if (set(labels) & set(a.label) or name in listed or
                any(re.fullmatch(r, name) for r in a.regex)):
            chosen.append(index[name])
    if not chosen:
        sys.exit("ctest_select: no test chosen")
    print("0,0,0," + ",".join(map(str, chosen)))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Markdown table of the slowest tests of one or more ctest build folders (stdlib only).

Usage: /usr/bin/python3 tools/ci/ci_test_times.py [--top N] NAME=BUILD_DIR [NAME=BUILD_DIR ...]
Reads each BUILD_DIR/Testing/Temporary/CTestCostData.txt (ctest's record of every test's last
wall time) and prints the N slowest tests over all of them (default 20), one column of seconds
per build ("–" where that build did not run the test), and each build's sum.
Example: tools/ci/ci_test_times.py plain=build sanitized=build-asan
"""
import argparse
import os
import sys


def costs(build):
    path = os.path.join(build, "Testing", "Temporary", "CTestCostData.txt")
    out = {}
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) == 3 and not line.startswith("---"):
                out[parts[0]] = float(parts[2])
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--top", type=int, default=20)
    ap.add_argument("builds", nargs="+", help="NAME=BUILD_DIR")
    a = ap.parse_args()
    named = []
    for b in a.builds:
        if "=" not in b:
            sys.exit(f"ci_test_times: expected NAME=BUILD_DIR, got {b!r}")
        name, path = b.split("=", 1)
        named.append((name, costs(path)))
    tests = set().union(*(c for _, c in named))
    worst = sorted(tests, key=lambda t: -max(c.get(t, 0) for _, c in named))[:a.top]
    print("| test | " + " | ".join(f"{n} s" for n, _ in named) + " |")
    print("| --- | " + " | ".join("---:" for _ in named) + " |")
    for t in worst:
        print(f"| `{t}` | " + " | ".join(f"{c[t]:.1f}" if t in c else "–" for _, c in named) + " |")
    print("| **sum over all tests** | " + " | ".join(f"{sum(c.values()):.0f}" for _, c in named) + " |")


if __name__ == "__main__":
    main()

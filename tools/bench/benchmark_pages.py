#!/usr/bin/env python3
"""Fills the generated tables of the benchmark pages (docs/benchmarks/*.md and README.md) from
the committed records in tools/results, so that a page cannot drift from its records.

A generated block is written in the page as (the script's own markdown headings are demoted by
two levels, so that they sit below the page's sections)

    <!-- generated: python3 tools/bench/SCRIPT.py ARG ... -->
    (the script's standard output)
    <!-- end generated -->

and the command in its opening line is the one that reproduces the table from the records.
Only `python3 tools/...py` commands are run (no shell), from the repository root, with this
interpreter. With --check nothing is written: the exit status is 1 when a page differs from
what its commands print (the ctest `benchmark_pages`), with the first differing lines.

    /usr/bin/python3 tools/bench/benchmark_pages.py [--check] [PAGE ...]
"""
import argparse
import pathlib
import re
import shlex
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))  # tools/report_util.py
from report_util import page_diff, write_atomic  # noqa: E402
BLOCK = re.compile(r"(<!-- generated: (?P<cmd>[^\n]*?) -->\n)(?P<body>.*?)(<!-- end generated -->)",
                   re.S)


def run(cmd, page):
    """The standard output of one block's command; exits 2 naming the page on a bad command or
    a failing script."""
    argv = shlex.split(cmd)
    if len(argv) < 2 or argv[0] != "python3" or not argv[1].startswith("tools/") \
            or not argv[1].endswith(".py"):
        sys.exit(f"benchmark_pages: {page}: not a `python3 tools/...py` command: {cmd}")
    p = subprocess.run([sys.executable] + argv[1:], cwd=ROOT, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"benchmark_pages: {page}: `{cmd}` failed (exit {p.returncode}):\n{p.stderr}")
    # A script's own headings sit two levels below the page's sections.
    out = re.sub(r"^(#+ )", r"##\1", p.stdout.strip("\n"), flags=re.M)
    return out + "\n"


def render(path):
    text = path.read_text(encoding="utf-8")
    rel = path.relative_to(ROOT)
    return BLOCK.sub(lambda m: m.group(1) + "\n" + run(m.group("cmd"), rel) + "\n" + m.group(4),
                     text), text


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("pages", nargs="*", type=pathlib.Path)
    ap.add_argument("--check", action="store_true", help="compare only; exit 1 on a difference")
    a = ap.parse_args()
    pages = [p.resolve() for p in a.pages] or \
        sorted((ROOT / "docs" / "benchmarks").glob("*.md")) + [ROOT / "README.md"]
    stale = []
    for page in pages:
        new, old = render(page)
        if new == old:
            continue
        if a.check:
            stale.append(f"{page.relative_to(ROOT)}:\n" + page_diff(old, new, "generated", 12))
        else:
            write_atomic(page, new)
            print(f"benchmark_pages: wrote {page.relative_to(ROOT)}")
    if stale:
        print("benchmark_pages: these pages differ from their records; run "
              "`/usr/bin/python3 tools/bench/benchmark_pages.py` and commit:\n\n" +
              "\n\n".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Fills the command-line reference (docs/reference/cli.md) from the binary itself: each block

    <!-- help: SUBCOMMAND ... -->
    (the output of `advbo SUBCOMMAND ... --help`, in a code fence)
    <!-- /help -->

gets the current help text, so the reference cannot drift from the options the binary
accepts. The attack and defense tables of the same page are checked against the registries
by the C++ tests `AttackRegistry.HelpReadmeAndEnsemblesComeFromIt` and
`DefenseRegistry.*` instead. With --check nothing is written and the exit status is 1 when
the page differs (the ctest `cli_reference`).

    /usr/bin/python3 tools/ci/cli_reference.py [--advbo build/advbo] [--check]
"""
import argparse
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))  # tools/report_util.py
from report_util import check_or_write  # noqa: E402
PAGE = ROOT / "docs" / "reference" / "cli.md"
BLOCK = re.compile(r"(<!-- help: (?P<cmd>[a-z ]*?) -->\n)(?P<body>.*?)(<!-- /help -->)", re.S)


def help_text(advbo, cmd):
    argv = [advbo] + cmd.split() + ["--help"]
    p = subprocess.run(argv, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"cli_reference: `{' '.join(argv)}` failed (exit {p.returncode}): {p.stderr}")
    # The usage line names the binary as it was called; the reference names it `advbo`.
    text = p.stdout.replace(f"Usage: {advbo}", "Usage: advbo").rstrip("\n")
    return "```text\n" + text + "\n```\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--advbo", default=str(ROOT / "build" / "advbo"))
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    if not pathlib.Path(a.advbo).exists():
        sys.exit(f"cli_reference: {a.advbo}: no such binary (build it: bash tools/setup.sh)")
    old = PAGE.read_text(encoding="utf-8")
    new = BLOCK.sub(lambda m: m.group(1) + help_text(a.advbo, m.group("cmd")) + m.group(4), old)
    return check_or_write(PAGE, old, new, "cli_reference", "binary", "the binary's --help", a.check)


if __name__ == "__main__":
    sys.exit(main())

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
import difflib
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
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
    if new == old:
        return 0
    if a.check:
        diff = difflib.unified_diff(old.splitlines(), new.splitlines(), "committed", "binary",
                                    lineterm="", n=0)
        print("cli_reference: docs/reference/cli.md differs from the binary's --help; run "
              "`/usr/bin/python3 tools/ci/cli_reference.py` and commit:\n" +
              "\n".join(list(diff)[:20]), file=sys.stderr)
        return 1
    tmp = PAGE.with_suffix(".md.partial")
    tmp.write_text(new, encoding="utf-8")
    tmp.replace(PAGE)
    print("cli_reference: wrote docs/reference/cli.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())

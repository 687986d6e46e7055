#!/usr/bin/env python3
"""House check on the words of the repository (ctest `words`): the docs, comments and messages
say what a thing does and why, not where it came from in the project's own process. Fails
(exit 1, one line per hit) on
  - the word session followed by a number (a work session's), in any tracked text file;
  - the word issue followed by "#" (an issue tracker's number) outside CHANGELOG.md;
  - a path into ../shared (the project's own machines' data and papers) in README.md or docs/,
    which a user's clone does not have.
Files are the repository's tracked text files (git ls-files; outside a git checkout, every
file under the root except build folders). Stdlib only.

    /usr/bin/python3 tools/ci/check_words.py
"""
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
# Written in pieces so that this file does not match itself.
SESSION = re.compile(r"\bsess" + r"ions?[ _-]?#?\d", re.I)
ISSUE = re.compile(r"\biss" + r"ues? #\d*", re.I)
SHARED = re.compile(r"\.\./sha" + r"red\b")


def tracked():
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True,
                             check=True).stdout.decode().split("\0")
        return [ROOT / f for f in out if f]
    except (OSError, subprocess.CalledProcessError):
        return [p for p in ROOT.rglob("*") if p.is_file()
                and not any(part.startswith("build") or part == ".git" for part in p.parts)]


def main():
    hits = []
    for path in tracked():
        rel = path.relative_to(ROOT).as_posix()
        try:
            text = path.read_bytes()
        except OSError:
            continue
        if b"\0" in text[:8192]:
            continue  # binary (models, compressed records, images)
        lines = text.decode("utf-8", "replace").splitlines()
        user_doc = rel == "README.md" or rel.startswith("docs/")
        for n, line in enumerate(lines, 1):
            if SESSION.search(line):
                hits.append(f"{rel}:{n}: a work session's number: {line.strip()[:120]}")
            if rel != "CHANGELOG.md" and ISSUE.search(line):
                hits.append(f"{rel}:{n}: an issue number (give the reason or the paper, or "
                            f"put it in CHANGELOG.md): {line.strip()[:120]}")
            if user_doc and SHARED.search(line):
                hits.append(f"{rel}:{n}: a path a user's clone does not have: {line.strip()[:120]}")
    for h in hits:
        print(h, file=sys.stderr)
    print(f"words: {len(hits)} hit(s) in the tracked text files", file=sys.stderr)
    return 1 if hits else 0


if __name__ == "__main__":
    sys.exit(main())

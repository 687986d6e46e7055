#!/usr/bin/env python3
"""House check on the docs' links (ctest `links`): every relative link of every tracked
markdown file ([text](path) and [text](path#anchor)) must name a file or folder of the
repository, and an anchor into a markdown file must name one of its headings (GitHub's
anchor rule: lower case, punctuation dropped, spaces as hyphens). Generated build output
(build/...) is not checked. Exit 1 with one line per broken link. Stdlib only.

    /usr/bin/python3 tools/ci/check_links.py
"""
import pathlib
import re
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from check_words import tracked  # noqa: E402  (the repository's tracked files)

ROOT = pathlib.Path(__file__).resolve().parents[2]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def anchors(path):
    out = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        m = re.match(r"^#{1,6} (.*)$", line)
        if m:
            a = m.group(1).strip().lower()
            a = re.sub(r"[^\w\- ]", "", a)
            out.add(a.replace(" ", "-"))
    return out


def main():
    paths = [p for p in tracked() if p.suffix == ".md"]
    files = [p.relative_to(ROOT).as_posix() for p in paths]
    bad = []
    for f, path in zip(files, paths):
        in_code = False
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if line.lstrip().startswith("```"):
                in_code = not in_code
            if in_code:
                continue
            for target in LINK.findall(line):
                if re.match(r"^[a-z]+:", target) or target.startswith("#") and len(target) == 1:
                    continue  # a URL
                where, _, anchor = target.partition("#")
                dest = (path.parent / where).resolve() if where else path
                rel = dest.relative_to(ROOT) if dest.is_relative_to(ROOT) else dest
                if str(rel).startswith("build/"):
                    continue
                if not dest.exists():
                    bad.append(f"{f}:{n}: no such file: {target}")
                elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                    bad.append(f"{f}:{n}: no heading '#{anchor}' in {rel}")
    for b in bad:
        print(b, file=sys.stderr)
    print(f"links: {len(bad)} broken link(s) in {len(files)} markdown files", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

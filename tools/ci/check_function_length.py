#!/usr/bin/env python3
"""Fails (exit 1) when a function body in src/, attacks/ or defenses/ is longer than 80 lines (the
house rule), option registration included: a command's options are a table of rows
(src/cli/option_table.h), not a long function.

A heuristic reader of clang-formatted C++: a definition starts at a line that opens a brace
at namespace depth and is not a namespace, class, struct, enum or initialiser; its length is
the lines from that line to its closing brace (lambdas count toward the function that holds
them; member functions defined in a class body count on their own).
Usage: tools/ci/check_function_length.py [LIMIT]
"""
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LIMIT = int(sys.argv[1]) if len(sys.argv) > 1 else 80
NOT_FUNCTION = re.compile(r"^\s*(namespace|class|struct|enum|union|extern)\b|=\s*\{?\s*$|=\s*\{")


def strip(line):
    """The line without string / char literals and // comments (braces in them ignored)."""
    line = re.sub(r'"(\\.|[^"\\])*"', '""', line)
    line = re.sub(r"'(\\.|[^'\\])*'", "''", line)
    return line.split("//", 1)[0]


def long_functions(path):
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    found, depth, scopes = [], 0, []  # scopes: (kind, start line, header, depth at open)
    header = []
    in_block_comment = False
    for i, raw in enumerate(lines):
        line = raw
        if in_block_comment:
            if "*/" not in line:
                continue
            line = line.split("*/", 1)[1]
            in_block_comment = False
        if "/*" in line and "*/" not in line.split("/*", 1)[1]:
            line, in_block_comment = line.split("/*", 1)[0], True
        code = strip(line)
        if code.strip().startswith("#"):
            continue
        header.append(code)
        for ch in code:
            if ch == "{":
                text = " ".join(header[-6:])
                opener = not scopes or scopes[-1][0] in ("namespace", "class")
                if opener and not NOT_FUNCTION.search(code) and ")" in text:
                    kind = "function"
                elif re.search(r"^\s*(namespace|extern)\b", text.split(";")[-1]):
                    kind = "namespace"
                elif re.search(r"\b(class|struct|union)\b[^;()]*$", text.split(";")[-1]):
                    kind = "class"
                else:
                    kind = "block"
                scopes.append((kind, i, text, depth))
                depth += 1
            elif ch == "}":
                depth -= 1
                if scopes:
                    kind, start, text, _ = scopes.pop()
                    n = i - start + 1
                    if kind == "function" and n > LIMIT:
                        found.append((start + 1, n, text.strip()[:90]))
            elif ch == ";":
                header = []
        if code.rstrip().endswith(("{", "}", ";")):
            header = []
    return found


def main():
    bad = []
    for folder in ("src", "attacks", "defenses"):
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix in (".cc", ".h"):
                for start, n, text in long_functions(path):
                    bad.append(f"{path.relative_to(ROOT)}:{start}: {n} lines: {text}")
    for b in bad:
        print(b)
    print(f"functions over {LIMIT} lines in src/, attacks/ and defenses/ "
          f"{len(bad)}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

"""Shared by the table tools (r2b2_table.py, defense_table.py): print a markdown report and
optionally write it atomically (a .partial file renamed into place, so an interrupted write
never leaves a half file)."""
import os


def emit(lines, out=None):
    """Prints "\\n".join(lines) and, when `out` is a path, writes the same text there."""
    text = "\n".join(lines) + "\n"
    print(text)
    if out:
        with open(out + ".partial", "w") as f:
            f.write(text)
        os.replace(out + ".partial", out)

#!/usr/bin/env python3
"""Writes the Python API reference (docs/reference/python.md) from the package's docstrings:
the module's docstring, then each public name of `advbo.__all__` as pydoc renders it (stdlib
`pydoc.render_doc`, plain text). The package is imported from the build (PYTHONPATH, default
build/python). With --check nothing is written and the exit status is 1 when the page differs
(the ctest `python_reference`).

    PYTHONPATH=build/python /usr/bin/python3 tools/ci/python_reference.py [--check]
"""
import argparse
import inspect
import os
import pathlib
import pydoc
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))  # tools/report_util.py
from report_util import check_or_write  # noqa: E402
PAGE = ROOT / "docs" / "reference" / "python.md"


def render():
    sys.path.insert(0, os.environ.get("ADVBO_PYTHON_DIR", str(ROOT / "build" / "python")))
    try:
        import advbo
    except ImportError as e:
        sys.exit(f"python_reference: cannot import advbo ({e}); build it (bash tools/setup.sh) "
                 "or set PYTHONPATH")
    out = ["# Python API reference", "",
           "Generated from the docstrings of the `advbo` package "
           "(`/usr/bin/python3 tools/ci/python_reference.py`; the test `python_reference` checks "
           "it). How to install and use it: [the Python guide](../guide/python.md).", "",
           "```text", inspect.getdoc(advbo), "```", ""]
    for name in advbo.__all__:
        obj = getattr(advbo, name)
        out += [f"## `advbo.{name}`", ""]
        if callable(obj):
            text = pydoc.plain(pydoc.render_doc(obj, title="%s", renderer=pydoc.plaintext))
            # pydoc names the object's defining module; the public name is advbo.<name>.
            text = text.replace("advbo._api.", "advbo.").replace("advbo._core.", "advbo.")
        else:
            text = f"{name} = {obj!r}"
        out += ["```text", text.strip("\n"), "```", ""]
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    new = render()
    old = PAGE.read_text(encoding="utf-8") if PAGE.exists() else ""
    return check_or_write(PAGE, old, new, "python_reference", "package",
                          "the package's docstrings", a.check)


if __name__ == "__main__":
    sys.exit(main())
